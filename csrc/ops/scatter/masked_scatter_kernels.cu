// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_scan.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/scatter/scatter_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? b : 65535);
}

size_t align256(size_t n) { return (n + 255) & ~size_t{255}; }

// 1 where the broadcast mask is true at output element j, else 0: CUB's scan input.
struct MaskFlag {
  MaskedScatterLayout l;
  const uint8_t* mask;
  __host__ __device__ int64_t operator()(int64_t j) const {
    return mask[strided_offset(l.rank, l.sizes, l.mask_strides, j)] != 0 ? 1 : 0;
  }
};

cudaError_t exclusive_sum(const MaskedScatterLaunch& s, void* temp, size_t& temp_bytes, int64_t* prefix,
                          cudaStream_t stream) {
  auto flags = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), MaskFlag{s.layout, s.mask});
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, flags, prefix, s.layout.numel, stream);
}

// Output element j, where the mask is true, takes source element prefix[j] (row-major),
// when source has that many.
__global__ void masked_scatter_kernel(MaskedScatterLaunch s, const int64_t* prefix) {
  const MaskedScatterLayout& l = s.layout;
  char* out = static_cast<char*>(s.out);
  const char* source = static_cast<const char*>(s.source);
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < l.numel;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (s.mask[strided_offset(l.rank, l.sizes, l.mask_strides, j)] == 0) continue;
    const int64_t k = prefix[j];
    if (k >= l.source_numel) continue;
    const char* from = source + strided_offset(l.source_rank, l.source_sizes, l.source_strides, k) * s.es;
    for (int b = 0; b < s.es; ++b) out[j * s.es + b] = from[b];
  }
}

}  // namespace

Error masked_scatter_scratch_bytes(const MaskedScatterLaunch& s, size_t* bytes) noexcept {
  *bytes = 0;
  if (s.layout.numel == 0) return Error::Ok;
  size_t temp = 0;
  SLIMCUDA_CUDA_TRY(exclusive_sum(s, nullptr, temp, nullptr, nullptr));
  *bytes = align256(static_cast<size_t>(s.layout.numel) * sizeof(int64_t)) + align256(temp);
  return Error::Ok;
}

Error launch_masked_scatter(const MaskedScatterLaunch& s, void* scratch, size_t bytes, cudaStream_t stream) noexcept {
  if (s.layout.numel == 0) return Error::Ok;
  auto* prefix = static_cast<int64_t*>(scratch);
  const size_t prefix_bytes = align256(static_cast<size_t>(s.layout.numel) * sizeof(int64_t));
  size_t temp_bytes = bytes - prefix_bytes;
  SLIMCUDA_CUDA_TRY(exclusive_sum(s, static_cast<char*>(scratch) + prefix_bytes, temp_bytes, prefix, stream));
  masked_scatter_kernel<<<blocks_for(s.layout.numel), kThreads, 0, stream>>>(s, prefix);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
