// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/select/select_grid.cuh"
#include "csrc/ops/select/select_kernels.h"
#include "csrc/ops/sort/order_key.h"

namespace slimcuda::ops {
namespace {

using select_grid::blocks_for;
using select_grid::kThreads;

__global__ void unique_keys_kernel(UniqueScan u, uint64_t* keys, int64_t* pos) {
  SELECT_GRID_LOOP(i, u.n) {
    keys[i] = order_key(u.in + walk_offset(u.walk, i) * u.es, u.dtype);
    pos[i] = i;
  }
}

__global__ void unique_flags_kernel(UniqueScan u, const uint64_t* keys, int64_t* flags) {
  SELECT_GRID_LOOP(i, u.n) {
    const uint64_t k = keys[i];
    flags[i] = (i == 0 || k != keys[i - 1] || key_is_nan(k, u.es, u.floating)) ? 1 : 0;
  }
}

__global__ void unique_out_kernel(UniqueScan u, UniqueBuffers b, int64_t groups, char* values, int64_t* inverse,
                                  int64_t* counts) {
  SELECT_GRID_LOOP(i, u.n) {
    if (inverse != nullptr) inverse[b.sorted_pos[i]] = b.group[i] - 1;
    if (i < groups) {
      const int64_t first = b.heads[i];
      copy_element(values + i * u.es, u.in + walk_offset(u.walk, b.sorted_pos[first]) * u.es, u.es);
      if (counts != nullptr) counts[i] = (i + 1 < groups ? b.heads[i + 1] : u.n) - first;
    }
  }
}

}  // namespace

Error radix_sort_pairs(void* scratch, size_t* scratch_bytes, const uint64_t* keys_in, uint64_t* keys_out,
                       const int64_t* values_in, int64_t* values_out, int64_t n, int end_bit,
                       cudaStream_t stream) noexcept {
  // Every caller goes through here: CUB's radix sort is compiled once (for every
  // architecture), the build's costliest template.
  SLIMCUDA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch, *scratch_bytes, keys_in, keys_out, values_in, values_out,
                                                    n, 0, end_bit, stream));
  return Error::Ok;
}

Error unique_runs(const UniqueScan& u, const UniqueBuffers& b, void* scratch, size_t* scratch_bytes,
                  cudaStream_t stream) noexcept {
  const uint64_t* keys = u.consecutive ? b.keys : b.sorted_keys;
  size_t sort_bytes = 0, scan_bytes = 0, select_bytes = 0;
  if (scratch == nullptr) {
    if (!u.consecutive) {
      SLIMCUDA_RETURN_IF_ERROR(
          radix_sort_pairs(nullptr, &sort_bytes, b.keys, b.sorted_keys, b.pos, b.sorted_pos, u.n, 8 * u.es, stream));
    }
    SLIMCUDA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, b.flags, b.group, u.n, stream));
    SLIMCUDA_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, select_bytes, thrust::counting_iterator<int64_t>(0), b.flags,
                                                 b.heads, b.count, u.n, stream));
    *scratch_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (select_bytes > *scratch_bytes) *scratch_bytes = select_bytes;
    return Error::Ok;
  }
  unique_keys_kernel<<<blocks_for(u.n), kThreads, 0, stream>>>(u, b.keys, b.pos);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  // Radix sorts are stable: equal values keep input order, so every NaN (one key) stays a
  // run of its own in input order, as ATen's stable sort leaves them.
  if (!u.consecutive) {
    SLIMCUDA_RETURN_IF_ERROR(
        radix_sort_pairs(scratch, scratch_bytes, b.keys, b.sorted_keys, b.pos, b.sorted_pos, u.n, 8 * u.es, stream));
  }
  unique_flags_kernel<<<blocks_for(u.n), kThreads, 0, stream>>>(u, keys, b.flags);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  SLIMCUDA_CUDA_TRY(cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, b.flags, b.group, u.n, stream));
  SLIMCUDA_CUDA_TRY(cub::DeviceSelect::Flagged(scratch, *scratch_bytes, thrust::counting_iterator<int64_t>(0), b.flags,
                                               b.heads, b.count, u.n, stream));
  return Error::Ok;
}

Error unique_outputs(const UniqueScan& u, const UniqueBuffers& b, int64_t groups, char* values, int64_t* inverse,
                     int64_t* counts, cudaStream_t stream) noexcept {
  if (u.n == 0) return Error::Ok;
  UniqueBuffers in_order = b;
  if (u.consecutive) in_order.sorted_pos = b.pos;
  unique_out_kernel<<<blocks_for(u.n), kThreads, 0, stream>>>(u, in_order, groups, values, inverse, counts);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
