// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/device_elements.cuh"
#include "csrc/ops/vision/vision_kernels.h"
#include "csrc/ops/vision/vision_math.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(int64_t n) noexcept {
  const int64_t want = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < 65535 ? want : 65535);
}

template <typename In>
__global__ void roi_kernel(RoiProblem p) {
  const int64_t n = p.out_numel();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int32_t arg = -1;
    const float v = vision_math::roi_element<float, In>(p, i, &arg);
    from_float(v, static_cast<In*>(p.out) + i);
    if (p.index != nullptr) p.index[i] = arg;
  }
}

template <typename In>
__global__ void deform_kernel(DeformProblem p) {
  const int64_t n = p.out_numel();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    from_float(vision_math::deform_element<float, In>(p, i), static_cast<In*>(p.out) + i);
  }
}

}  // namespace

Error launch_roi(const RoiProblem& p, cudaStream_t stream) noexcept {
  const int64_t n = p.out_numel();
  if (n == 0) return Error::Ok;
  switch (p.type) {
    case VisionType::F16:
      roi_kernel<__half><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
    case VisionType::BF16:
      roi_kernel<__nv_bfloat16><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
    default:
      roi_kernel<float><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

Error launch_deform_conv2d(const DeformProblem& p, cudaStream_t stream) noexcept {
  const int64_t n = p.out_numel();
  if (n == 0) return Error::Ok;
  switch (p.type) {
    case VisionType::F16:
      deform_kernel<__half><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
    case VisionType::BF16:
      deform_kernel<__nv_bfloat16><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
    default:
      deform_kernel<float><<<blocks_for(n), kThreads, 0, stream>>>(p);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
