// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include "slimcuda/last_error.h"

namespace slimcuda::cuda {

/// The Error for a failed CUDA allocation (cudaMalloc, cudaMallocAsync, cudaHostAlloc):
/// out of memory -> MemoryAllocationFailed, anything else -> Internal. Clears the error so
/// it is not blamed on the next call, and records "<function>: <what>: <CUDA text>".
[[nodiscard]] inline Error allocation_error(cudaError_t err, const char* function, const char* what) noexcept {
  (void)cudaGetLastError();
  return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal, function,
                        "%s: %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace slimcuda::cuda

/// Runs a CUDA runtime call; on failure clears the (non-sticky) error so it is not blamed
/// on the next call, records "<function>: <call> failed: <name>: <text>", and returns
/// Error::Internal.
#define SLIMCUDA_CUDA_TRY(call) SLIMCUDA_CUDA_TRY_AT(__func__, call)

/// The same, naming `function` (for code inside lambdas).
#define SLIMCUDA_CUDA_TRY_AT(function, call)                                                                           \
  do {                                                                                                                 \
    const cudaError_t slimcuda_cuda_err_ = (call);                                                                     \
    if (slimcuda_cuda_err_ != cudaSuccess) {                                                                           \
      (void)cudaGetLastError();                                                                                        \
      return ::slimcuda::set_last_error(::slimcuda::Error::Internal, (function), "%s failed: %s: %s", #call,           \
                                        cudaGetErrorName(slimcuda_cuda_err_), cudaGetErrorString(slimcuda_cuda_err_)); \
    }                                                                                                                  \
  } while (0)
