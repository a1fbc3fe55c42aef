// SPDX-License-Identifier: Apache-2.0
// slimcuda's scaled-dot-product attention kernel, launched: float32 (cuDNN's fused SDPA has
// no float32) and every case cuDNN declines. The device code is attention_kernel_device.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>

#include "csrc/ops/attention/attention_kernel.h"
#include "csrc/ops/attention/attention_kernel_device.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

using attention_device::attention_kernel;
using attention_device::attention_smem_bytes;
using attention_device::kBlockK;
using attention_device::kBlockQ;
using attention_device::kThreads;
using attention_device::kWarps;

template <typename T, int NC>
Error launch_typed(const AttentionKernelArgs& a, dim3 grid, size_t smem, cudaStream_t stream) {
  auto* kernel = &attention_kernel<T, NC>;
  // Above 48 KiB (with the static 2 KiB) a kernel must opt in to more dynamic shared memory
  // (head dims above about 128).
  if (smem + sizeof(float) * 4 * kWarps * kBlockK > 48 * 1024) {
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return set_last_error(
          Error::NotSupported, "attention kernel needs %zu bytes of shared memory (head dims %lld/%lld): %s", smem,
          static_cast<long long>(a.head_dim), static_cast<long long>(a.head_dim_v), cudaGetErrorString(err));
    }
  }
  kernel<<<grid, kThreads, smem, stream>>>(a);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    return set_last_error(Error::Internal, "attention kernel launch failed: %s: %s", cudaGetErrorName(err),
                          cudaGetErrorString(err));
  }
  return Error::Ok;
}

template <typename T>
Error launch_for(const AttentionKernelArgs& a, int nc, dim3 grid, size_t smem, cudaStream_t stream) {
  switch (nc) {
    case 1:
      return launch_typed<T, 1>(a, grid, smem, stream);
    case 2:
      return launch_typed<T, 2>(a, grid, smem, stream);
    case 3:
      return launch_typed<T, 3>(a, grid, smem, stream);
    case 4:
      return launch_typed<T, 4>(a, grid, smem, stream);
    case 5:
      return launch_typed<T, 5>(a, grid, smem, stream);
    case 6:
      return launch_typed<T, 6>(a, grid, smem, stream);
    case 7:
      return launch_typed<T, 7>(a, grid, smem, stream);
    default:
      return launch_typed<T, 8>(a, grid, smem, stream);
  }
}

}  // namespace

Error launch_attention(const AttentionKernelArgs& a, cudaStream_t stream) noexcept {
  if (a.batch == 0 || a.heads_q == 0 || a.seq_q == 0) return Error::Ok;
  if (a.head_dim > kAttentionMaxHeadDim || a.head_dim_v > kAttentionMaxHeadDim) {
    return set_last_error(Error::NotSupported, "head dims %lld/%lld: slimcuda's attention kernel takes at most %lld",
                          static_cast<long long>(a.head_dim), static_cast<long long>(a.head_dim_v),
                          static_cast<long long>(kAttentionMaxHeadDim));
  }
  const int64_t tiles = (a.seq_q + kBlockQ - 1) / kBlockQ;
  if (tiles > 0x7fffffff || a.heads_q > 65535 || a.batch > 65535 || a.heads_kv <= 0) {
    return set_last_error(Error::NotSupported, "attention grid too large (batch %lld, heads %lld, %lld query tiles)",
                          static_cast<long long>(a.batch), static_cast<long long>(a.heads_q),
                          static_cast<long long>(tiles));
  }
  const int D = static_cast<int>(a.head_dim), Dv = static_cast<int>(a.head_dim_v);
  const size_t smem = attention_smem_bytes(D, Dv);
  const int nc = Dv > 0 ? (Dv + 31) / 32 : 1;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(a.heads_q), static_cast<unsigned>(a.batch));
  switch (a.dtype) {
    case AttnType::F16:
      return launch_for<__half>(a, nc, grid, smem, stream);
    case AttnType::BF16:
      return launch_for<__nv_bfloat16>(a, nc, grid, smem, stream);
    default:
      return launch_for<float>(a, nc, grid, smem, stream);
  }
}

}  // namespace slimcuda::ops
