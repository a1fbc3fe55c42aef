// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/device_elements.cuh"
#include "csrc/ops/gemm/gemm_empty.h"

namespace slimcuda::ops {
namespace {

struct Shape {
  int64_t batch, m, n;
  int64_t out[3], self[3];
};

template <typename T>
__global__ void gemm_empty(T* out, const T* self, Shape s, float beta, GemmEpilogue act) {
  const int64_t total = s.batch * s.m * s.n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = i % s.n, r = (i / s.n) % s.m, b = i / (s.n * s.m);
    float v = self != nullptr ? beta * to_float(self[b * s.self[0] + r * s.self[1] + j * s.self[2]]) : 0.0f;
    if (act == GemmEpilogue::Relu) {
      v = v > 0.0f ? v : 0.0f;
    } else if (act == GemmEpilogue::GeluTanh) {
      v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
    from_float(v, &out[b * s.out[0] + r * s.out[1] + j * s.out[2]]);
  }
}

template <typename T>
void launch(void* out, const void* self, const Shape& s, float beta, GemmEpilogue act, unsigned blocks,
            unsigned threads, cudaStream_t stream) {
  gemm_empty<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(self), s, beta, act);
}

}  // namespace

Error launch_gemm_empty(void* out, const int64_t out_strides[3], const void* self, const int64_t self_strides[3],
                        GemmElement type, int64_t batch, int64_t m, int64_t n, double beta, GemmEpilogue act,
                        cudaStream_t stream) noexcept {
  const int64_t total = batch * m * n;
  if (total == 0) return Error::Ok;
  Shape s{batch, m, n, {out_strides[0], out_strides[1], out_strides[2]}, {0, 0, 0}};
  if (beta == 0.0) self = nullptr;  // PyTorch: beta 0 ignores self, NaN and Inf included
  if (self != nullptr) {
    for (int d = 0; d < 3; ++d) s.self[d] = self_strides[d];
  }
  constexpr unsigned kThreads = 256;
  const int64_t want = (total + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  const float b = static_cast<float>(beta);
  switch (type) {
    case GemmElement::Float:
      launch<float>(out, self, s, b, act, blocks, kThreads, stream);
      break;
    case GemmElement::Half:
      launch<__half>(out, self, s, b, act, blocks, kThreads, stream);
      break;
    case GemmElement::BFloat16:
      launch<__nv_bfloat16>(out, self, s, b, act, blocks, kThreads, stream);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
