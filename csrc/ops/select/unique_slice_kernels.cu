// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/select/select_grid.cuh"
#include "csrc/ops/select/select_kernels.h"

namespace slimcuda::ops {
namespace {

using select_grid::blocks_for;
using select_grid::kThreads;

// Columns [k0, k1) of slice order[i] as one key, the first column most significant (their
// order keys, es bytes each, fit in 64 bits together).
__global__ void slice_keys_kernel(SliceScan s, const int64_t* order, int64_t k0, int64_t k1, uint64_t* keys) {
  const int bits = 8 * s.es;
  SELECT_GRID_LOOP(i, s.slices) {
    uint64_t key = 0;
    for (int64_t k = k0; k < k1; ++k) {
      const uint64_t part = slice_key(s, order[i], k);
      key = k == k0 ? part : (key << bits) | part;
    }
    keys[i] = key;
  }
}

// How many columns one sort pass keys on.
int64_t columns_per_pass(const SliceScan& s) { return s.es >= 8 ? 1 : 8 / s.es; }

__global__ void iota_kernel(int64_t* out, int64_t n) {
  SELECT_GRID_LOOP(i, n) { out[i] = i; }
}

__global__ void slice_flags_kernel(SliceScan s, const int64_t* order, int64_t* flags) {
  SELECT_GRID_LOOP(i, s.slices) { flags[i] = (i == 0 || !slice_equal(s, order[i - 1], order[i])) ? 1 : 0; }
}

// One thread per output element: slice g's element k, and per input slice its inverse.
__global__ void slice_out_kernel(SliceScan s, SliceBuffers b, int64_t groups, char* values, int64_t out_step,
                                 Walk out_rest, int64_t* inverse, int64_t* counts) {
  SELECT_GRID_LOOP(e, groups * s.slice_len) {
    const int64_t g = e / s.slice_len, k = e % s.slice_len;
    const int64_t from = b.order[b.heads[g]];
    copy_element(values + (g * out_step + walk_offset(out_rest, k)) * s.es,
                 s.in + (from * s.slice_stride + walk_offset(s.rest, k)) * s.es, s.es);
    if (k == 0 && counts != nullptr) counts[g] = (g + 1 < groups ? b.heads[g + 1] : s.slices) - b.heads[g];
  }
  if (inverse != nullptr) {
    SELECT_GRID_LOOP(i, s.slices) { inverse[b.order[i]] = b.group[i] - 1; }
  }
}

}  // namespace

Error unique_slice_runs(const SliceScan& s, const SliceBuffers& b, void* scratch, size_t* scratch_bytes,
                        cudaStream_t stream) noexcept {
  const int64_t per_pass = columns_per_pass(s);
  if (scratch == nullptr) {
    size_t sort_bytes = 0, scan_bytes = 0, select_bytes = 0;
    if (!s.consecutive && s.slice_len > 0) {
      // The passes' key widths: full ones, and the first columns' remainder.
      const int64_t widths[2] = {per_pass < s.slice_len ? per_pass : s.slice_len,
                                 s.slice_len % per_pass == 0 ? per_pass : s.slice_len % per_pass};
      for (int64_t w : widths) {
        size_t bytes = 0;
        SLIMCUDA_RETURN_IF_ERROR(radix_sort_pairs(nullptr, &bytes, b.keys, b.sorted_keys, b.order, b.order_alt,
                                                  s.slices, static_cast<int>(8 * s.es * w), stream));
        if (bytes > sort_bytes) sort_bytes = bytes;
      }
    }
    SLIMCUDA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, b.flags, b.group, s.slices, stream));
    SLIMCUDA_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, select_bytes, thrust::counting_iterator<int64_t>(0), b.flags,
                                                 b.heads, b.count, s.slices, stream));
    *scratch_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (select_bytes > *scratch_bytes) *scratch_bytes = select_bytes;
    return Error::Ok;
  }
  iota_kernel<<<blocks_for(s.slices), kThreads, 0, stream>>>(b.order, s.slices);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  if (!s.consecutive && s.slice_len > 0) {
    // Least significant columns first: each pass is stable, so the columns sorted last (the
    // first ones) decide, and ties keep the earlier passes' order: slice_less's order, stable.
    int64_t* from = b.order;
    int64_t* to = b.order_alt;
    for (int64_t k1 = s.slice_len; k1 > 0;) {
      const int64_t k0 = k1 > per_pass ? k1 - per_pass : 0;
      slice_keys_kernel<<<blocks_for(s.slices), kThreads, 0, stream>>>(s, from, k0, k1, b.keys);
      SLIMCUDA_CUDA_TRY(cudaGetLastError());
      SLIMCUDA_RETURN_IF_ERROR(radix_sort_pairs(scratch, scratch_bytes, b.keys, b.sorted_keys, from, to, s.slices,
                                                static_cast<int>(8 * s.es * (k1 - k0)), stream));
      int64_t* t = from;
      from = to;
      to = t;
      k1 = k0;
    }
    if (from != b.order) {
      SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(b.order, from, static_cast<size_t>(s.slices) * sizeof(int64_t),
                                        cudaMemcpyDeviceToDevice, stream));
    }
  }
  slice_flags_kernel<<<blocks_for(s.slices), kThreads, 0, stream>>>(s, b.order, b.flags);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  SLIMCUDA_CUDA_TRY(cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, b.flags, b.group, s.slices, stream));
  SLIMCUDA_CUDA_TRY(cub::DeviceSelect::Flagged(scratch, *scratch_bytes, thrust::counting_iterator<int64_t>(0), b.flags,
                                               b.heads, b.count, s.slices, stream));
  return Error::Ok;
}

Error unique_slice_outputs(const SliceScan& s, const SliceBuffers& b, int64_t groups, char* values, int64_t out_step,
                           const Walk& out_rest, int64_t* inverse, int64_t* counts, cudaStream_t stream) noexcept {
  if (s.slices == 0) return Error::Ok;
  const int64_t n = groups * s.slice_len > s.slices ? groups * s.slice_len : s.slices;
  slice_out_kernel<<<blocks_for(n), kThreads, 0, stream>>>(s, b, groups, values, out_step, out_rest, inverse, counts);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
