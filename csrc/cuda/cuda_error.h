#pragma once

#include <cuda_runtime_api.h>

#include "slimcuda/last_error.h"

/// Runs a CUDA runtime call; on failure clears the (non-sticky) error so it is not blamed
/// on the next call, records "<function>: <call> failed: <name>: <text>", and returns
/// Error::Internal.
#define SLIMCUDA_CUDA_TRY(call) SLIMCUDA_CUDA_TRY_AT(__func__, call)

/// The same, naming `function` (for code inside lambdas).
#define SLIMCUDA_CUDA_TRY_AT(function, call)                                                 \
  do {                                                                                       \
    const cudaError_t slimcuda_cuda_err_ = (call);                                           \
    if (slimcuda_cuda_err_ != cudaSuccess) {                                                 \
      (void)cudaGetLastError();                                                              \
      return ::slimcuda::set_last_error(::slimcuda::Error::Internal, (function),             \
                                        "%s failed: %s: %s", #call,                          \
                                        cudaGetErrorName(slimcuda_cuda_err_),                \
                                        cudaGetErrorString(slimcuda_cuda_err_));             \
    }                                                                                        \
  } while (0)
