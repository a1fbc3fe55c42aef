// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include "slimcuda/last_error.h"

namespace slimcuda::cuda {

/// The Error for a failed CUDA allocation (cudaMalloc, cudaMallocAsync, cudaHostAlloc):
/// out of memory -> MemoryAllocationFailed, anything else -> Internal. Clears the error so
/// it is not blamed on the next call, and records "<function>: <what>: <CUDA text>".
[[nodiscard]] inline Error allocation_error(cudaError_t err, const char* what) noexcept {
  (void)cudaGetLastError();
  return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal,
                        "%s: %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/// Whether `err` leaves the CUDA context unusable: a kernel's fault (an illegal address, a
/// device-side assert, a misaligned access, ...). CUDA then fails every later call on that
/// context in this process, whatever it is; only a new process recovers.
[[nodiscard]] bool is_sticky(cudaError_t err) noexcept;

/// The Error for a failed CUDA runtime call `call` (SLIMCUDA_CUDA_TRY): Internal, with
/// "<function>: <call> failed: <name>: <text>". A sticky error also marks the current
/// device lost (check_not_lost), and its message says so.
[[nodiscard]] Error call_error(cudaError_t err, const char* call) noexcept;

/// Marks `device` lost if `err` is sticky (for errors seen other than through call_error:
/// a model's own kernel launch, a stream query); whether it was.
bool note_if_sticky(cudaError_t err, int device) noexcept;

/// Internal, naming the error that was seen and saying the context is lost, when `device`
/// has seen a sticky error; else Ok. Every entry that resolves a device calls it, so every
/// later call on a lost device fails the same way, at once, instead of on some CUDA call
/// deep inside.
[[nodiscard]] Error check_not_lost(int device) noexcept;

/// Whether `device` has seen a sticky error. Code that would hand a lost context to code
/// that cannot take it (a model library's destructor that throws on a failed cudaFree)
/// leaves that memory to the process's end instead.
[[nodiscard]] bool device_lost(int device) noexcept;

}  // namespace slimcuda::cuda

/// Runs a CUDA runtime call; on failure clears the (non-sticky) error so it is not blamed
/// on the next call, records "<function>: <call> failed: <name>: <text>", and returns
/// Error::Internal (a sticky error marks the device lost: cuda::call_error).
#define SLIMCUDA_CUDA_TRY(call)                                       \
  do {                                                                \
    const cudaError_t slimcuda_cuda_err_ = (call);                    \
    if (slimcuda_cuda_err_ != cudaSuccess) {                          \
      return ::slimcuda::cuda::call_error(slimcuda_cuda_err_, #call); \
    }                                                                 \
  } while (0)
