// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_select.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/select/select_grid.cuh"
#include "csrc/ops/select/select_kernels.h"

namespace slimcuda::ops {
namespace {

using select_grid::blocks_for;
using select_grid::kThreads;

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

}  // namespace slimcuda::ops
