// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/attention/attention_mask.h"

namespace slimcuda::ops {
namespace {

struct Dims {
  int64_t size[4];
  int64_t dst[4];
  int64_t src[4];
};

template <typename T>
__global__ void mask_to_bias(T* dst, const uint8_t* mask, Dims d, int64_t n, T zero, T minus_inf) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, so = 0, dof = 0;
    for (int k = 3; k >= 0; --k) {
      const int64_t idx = rest % d.size[k];
      rest /= d.size[k];
      so += idx * d.src[k];
      dof += idx * d.dst[k];
    }
    dst[dof] = mask[so] != 0 ? zero : minus_inf;  // any nonzero byte is true
  }
}

}  // namespace

Error launch_mask_to_bias(void* dst, bool dst_half, const int64_t dst_strides[4], const void* mask,
                          const int64_t mask_strides[4], const int64_t sizes[4], cudaStream_t stream) noexcept {
  Dims d;
  int64_t n = 1;
  for (int k = 0; k < 4; ++k) {
    d.size[k] = sizes[k];
    d.dst[k] = dst_strides[k];
    d.src[k] = mask_strides[k];
    n *= sizes[k];
  }
  if (n == 0) return Error::Ok;
  constexpr int kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  if (dst_half) {
    mask_to_bias<__half><<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(dst), static_cast<const uint8_t*>(mask),
                                                          d, n, __float2half(0.0f), __float2half(-INFINITY));
  } else {
    mask_to_bias<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst),
                                                                 static_cast<const uint8_t*>(mask), d, n,
                                                                 __float2bfloat16(0.0f), __float2bfloat16(-INFINITY));
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
