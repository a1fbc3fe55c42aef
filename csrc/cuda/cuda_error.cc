// SPDX-License-Identifier: Apache-2.0
#include "csrc/cuda/cuda_error.h"

#include <atomic>

#include "csrc/core/limits.h"

namespace slimcuda::cuda {
namespace {

// Per device, the first sticky error seen (0: none). A lost context stays lost for the
// process, so this is only ever set.
std::atomic<int> lost[kMaxDevices];

}  // namespace

bool is_sticky(cudaError_t err) noexcept {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

bool note_if_sticky(cudaError_t err, int device) noexcept {
  if (!is_sticky(err)) return false;
  if (device < 0) {
    // The current device: reading it works after a fault (it is the thread's setting).
    if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  }
  if (device >= 0 && device < kMaxDevices) {
    int none = 0;
    lost[device].compare_exchange_strong(none, static_cast<int>(err));
  }
  return true;
}

Error call_error(cudaError_t err, const char* call) noexcept {
  (void)cudaGetLastError();  // a non-sticky error is not blamed on the next call
  if (note_if_sticky(err, -1)) {
    return set_last_error(Error::Internal,
                          "%s failed: %s: %s; the CUDA context is lost (a kernel faulted): every later call on this "
                          "device fails, restart the process",
                          call, cudaGetErrorName(err), cudaGetErrorString(err));
  }
  return set_last_error(Error::Internal, "%s failed: %s: %s", call, cudaGetErrorName(err), cudaGetErrorString(err));
}

bool device_lost(int device) noexcept {
  return device >= 0 && device < kMaxDevices && lost[device].load(std::memory_order_relaxed) != 0;
}

Error check_not_lost(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return Error::Ok;
  const int err = lost[device].load(std::memory_order_relaxed);
  if (err == 0) return Error::Ok;
  const auto e = static_cast<cudaError_t>(err);
  return set_last_error(Error::Internal,
                        "CUDA device %d is lost: an earlier call saw %s (%s), after which CUDA fails every call on "
                        "this device in this process; restart the process",
                        device, cudaGetErrorName(e), cudaGetErrorString(e));
}

}  // namespace slimcuda::cuda
