// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/select/select_kernels.h"
#include "csrc/ops/sort/order_key.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

#define SELECT_GRID_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// CUB's predicate: whether element `linear` of the scan is nonzero.
struct IsNonzero {
  NonzeroScan s;
  __device__ bool operator()(int64_t linear) const {
    return element_nonzero(s.data + walk_offset(s.walk, linear) * s.es, s.es, s.floating);
  }
};

__global__ void coords_kernel(CoordsWrite w, const int64_t* idx, int64_t count_host, const int64_t* count_device) {
  const int64_t count = count_device != nullptr ? *count_device : count_host;
  SELECT_GRID_LOOP(k, w.rows) {
    if (k < count) {
      write_coords(w, k, idx[k]);
    } else {
      write_fill(w, k);
    }
  }
}

__global__ void take_kernel(Walk walk, const char* self, int es, const int64_t* idx, int64_t count, char* out) {
  SELECT_GRID_LOOP(k, count) { copy_element(out + k * es, self + walk_offset(walk, idx[k]) * es, es); }
}

__global__ void index_gather_kernel(IndexGather g) {
  SELECT_GRID_LOOP(e, g.numel) {
    int64_t src = 0, dst = 0, bad_value = 0;
    int bad_dim = 0;
    if (index_gather_at(g, e, &src, &dst, &bad_dim, &bad_value)) {
      copy_element(g.out + dst * g.es, g.self + src * g.es, g.es);
    } else {
      for (int b = 0; b < g.es; ++b) g.out[dst * g.es + b] = 0;
    }
  }
}

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

// CUB's comparator: slice numbers by their slices' values.
struct SliceLess {
  SliceScan s;
  __device__ bool operator()(int64_t a, int64_t b) const { return slice_less(s, a, b); }
};

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

#undef SELECT_GRID_LOOP

}  // namespace

Error select_nonzero(const NonzeroScan& s, int64_t* idx, int64_t* count, void* scratch, size_t* scratch_bytes,
                     cudaStream_t stream) noexcept {
  SLIMCUDA_CUDA_TRY(cub::DeviceSelect::If(scratch, *scratch_bytes, thrust::counting_iterator<int64_t>(0), idx, count,
                                          s.n, IsNonzero{s}, stream));
  return Error::Ok;
}

Error launch_coords(const CoordsWrite& w, const int64_t* idx, int64_t count_host, const int64_t* count_device,
                    cudaStream_t stream) noexcept {
  if (w.rows == 0 || w.ndim == 0) return Error::Ok;
  coords_kernel<<<blocks_for(w.rows), kThreads, 0, stream>>>(w, idx, count_host, count_device);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

Error launch_take(const Walk& self_walk, const char* self, int es, const int64_t* idx, int64_t count, char* out,
                  cudaStream_t stream) noexcept {
  if (count == 0) return Error::Ok;
  take_kernel<<<blocks_for(count), kThreads, 0, stream>>>(self_walk, self, es, idx, count, out);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

Error launch_index_gather(const IndexGather& g, cudaStream_t stream) noexcept {
  if (g.numel == 0) return Error::Ok;
  index_gather_kernel<<<blocks_for(g.numel), kThreads, 0, stream>>>(g);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

Error unique_runs(const UniqueScan& u, const UniqueBuffers& b, void* scratch, size_t* scratch_bytes,
                  cudaStream_t stream) noexcept {
  const uint64_t* keys = u.consecutive ? b.keys : b.sorted_keys;
  size_t sort_bytes = 0, scan_bytes = 0, select_bytes = 0;
  if (scratch == nullptr) {
    if (!u.consecutive) {
      SLIMCUDA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, b.keys, b.sorted_keys, b.pos, b.sorted_pos,
                                                        u.n, 0, 8 * u.es, stream));
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
    SLIMCUDA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch, *scratch_bytes, b.keys, b.sorted_keys, b.pos,
                                                      b.sorted_pos, u.n, 0, 8 * u.es, stream));
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

Error unique_slice_runs(const SliceScan& s, const SliceBuffers& b, void* scratch, size_t* scratch_bytes,
                        cudaStream_t stream) noexcept {
  if (scratch == nullptr) {
    size_t sort_bytes = 0, scan_bytes = 0, select_bytes = 0;
    if (!s.consecutive) {
      SLIMCUDA_CUDA_TRY(
          cub::DeviceMergeSort::StableSortKeys(nullptr, sort_bytes, b.order, s.slices, SliceLess{s}, stream));
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
  if (!s.consecutive) {
    SLIMCUDA_CUDA_TRY(
        cub::DeviceMergeSort::StableSortKeys(scratch, *scratch_bytes, b.order, s.slices, SliceLess{s}, stream));
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
