// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/device_elements.cuh"
#include "csrc/ops/conv/conv_bias.h"

namespace slimcuda::ops {
namespace {

template <typename T>
__global__ void add_channel_bias(T* out, const T* bias, int64_t n, int64_t channels, int64_t inner,
                                 int64_t bias_stride) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / inner) % channels;
    from_float(to_float(out[i]) + to_float(bias[c * bias_stride]), &out[i]);
  }
}

template <typename T>
void launch(void* out, const void* bias, int64_t n, int64_t channels, int64_t inner, int64_t bias_stride,
            unsigned blocks, unsigned threads, cudaStream_t stream) {
  add_channel_bias<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(bias), n, channels,
                                                      inner, bias_stride);
}

}  // namespace

Error launch_add_channel_bias(void* out, const void* bias, BiasElement type, int64_t n, int64_t channels, int64_t inner,
                              int64_t bias_stride, cudaStream_t stream) noexcept {
  if (n == 0) return Error::Ok;
  constexpr unsigned kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  switch (type) {
    case BiasElement::Float:
      launch<float>(out, bias, n, channels, inner, bias_stride, blocks, kThreads, stream);
      break;
    case BiasElement::Half:
      launch<__half>(out, bias, n, channels, inner, bias_stride, blocks, kThreads, stream);
      break;
    case BiasElement::BFloat16:
      launch<__nv_bfloat16>(out, bias, n, channels, inner, bias_stride, blocks, kThreads, stream);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
