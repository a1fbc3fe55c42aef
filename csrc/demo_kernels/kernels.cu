// SPDX-License-Identifier: Apache-2.0
#include "csrc/demo_kernels/kernels.h"

#include <algorithm>

#include "csrc/cuda/cuda_error.h"

namespace slimcuda::kernels {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill an H200 several times over; the grid-stride loops cover the rest.
constexpr size_t kMaxBlocks = 65535;

unsigned int blocks_for(size_t n) {
  return static_cast<unsigned int>(std::min(kMaxBlocks, (n + kThreads - 1) / kThreads));
}

Error check_launch(const char* kernel) noexcept {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    return set_last_error(Error::Internal, "%s launch failed: %s: %s", kernel, cudaGetErrorName(err),
                          cudaGetErrorString(err));
  }
  return Error::Ok;
}

}  // namespace

__global__ void fill_f32_kernel(float* dst, size_t n, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = value;
  }
}

__global__ void axpy_f32_kernel(float* y, const float* x, size_t n, float a) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

Error fill_f32(float* dst, size_t n, float value, cudaStream_t stream) noexcept {
  if (n == 0) return Error::Ok;
  fill_f32_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, n, value);
  return check_launch(__func__);
}

Error axpy_f32(float* y, const float* x, size_t n, float a, cudaStream_t stream) noexcept {
  if (n == 0) return Error::Ok;
  axpy_f32_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, x, n, a);
  return check_launch(__func__);
}

}  // namespace slimcuda::kernels
