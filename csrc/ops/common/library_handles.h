// SPDX-License-Identifier: Apache-2.0
#pragma once

// cuBLASLt and cuDNN handles, one per thread and device. A thread's handles go back to a
// process-wide pool when the thread exits and are reused by later threads (handles are
// never destroyed: destroying them during process teardown, after the CUDA runtime has
// unloaded, is unsafe). cuDNN handles are bound to the op's stream at every call.

#include <cublasLt.h>
#include <cudnn.h>

#include "csrc/cuda_libs/cublaslt.h"
#include "csrc/cuda_libs/cudnn.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// This thread's cuBLASLt handle for `device` (current when called), created on first use.
[[nodiscard]] Error cublaslt_handle(const cuda_libs::CublasLtApi& api, int device, cublasLtHandle_t* out) noexcept;

/// This thread's cuDNN handle for `device` (current when called), bound to `stream`.
[[nodiscard]] Error cudnn_handle(const cuda_libs::CudnnApi& api, int device, cudaStream_t stream,
                                 cudnnHandle_t* out) noexcept;

}  // namespace slimcuda::ops
