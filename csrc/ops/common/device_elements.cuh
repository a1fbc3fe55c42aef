// SPDX-License-Identifier: Apache-2.0
#pragma once

// Element access for the CUDA kernels of the ops (conv_bias.cu, gemm_empty.cu and
// attention_kernel_device.h): float32, float16 and bfloat16 read as float and written back
// with one rounding (to nearest even). The device counterpart of cpu_elements.h.
//
// Under nvcc this includes CUDA's float16/bfloat16 types; a host compiler must see them
// first (attention_emulation.h's stand-ins, for attention_kernel_emulation_test).

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace slimcuda::ops {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void from_float(float x, float* out) { *out = x; }
__device__ __forceinline__ void from_float(float x, __half* out) { *out = __float2half_rn(x); }
__device__ __forceinline__ void from_float(float x, __nv_bfloat16* out) { *out = __float2bfloat16_rn(x); }

}  // namespace slimcuda::ops
