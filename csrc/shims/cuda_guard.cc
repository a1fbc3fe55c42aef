// SPDX-License-Identifier: Apache-2.0
// CUDA guard shims: the current device and the current stream (slimcuda's caller stream).
#include <cuda_runtime_api.h>

#include <new>
#include <optional>

#include "csrc/core/device_index.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/shims/shim_util.h"
#include "slimcuda/caller_stream.h"

using namespace slimcuda;  // NOLINT: thin C shells

namespace {

// A device guard whose target can change (cuda_guard_set_index); restores the device
// that was current at creation.
struct CudaGuard {
  int original = -1;
};

// The stream guard: device first, then the caller-stream selection; destroyed in reverse.
struct CudaStreamGuard {
  explicit CudaStreamGuard(int device, cudaStream_t stream) : device_guard(device), stream_guard(stream) {}
  cuda::DeviceGuard device_guard;
  CallerStreamGuard stream_guard;
};

Error set_device(int device) noexcept {
  SLIMCUDA_CUDA_TRY(cudaSetDevice(device));
  return Error::Ok;
}

}  // namespace

extern "C" {

AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(int32_t device_index, CUDAGuardHandle* ret_guard) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret_guard);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    CudaGuard* g = new (std::nothrow) CudaGuard;
    SLIMCUDA_CHECK_OR_RETURN(g != nullptr, Error::MemoryAllocationFailed, "out of host memory");
    SLIMCUDA_CUDA_TRY(cudaGetDevice(&g->original));
    const Error e = set_device(device);
    if (e != Error::Ok) {
      delete g;
      return e;
    }
    *ret_guard = reinterpret_cast<CUDAGuardHandle>(g);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_cuda_guard)(CUDAGuardHandle guard) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(guard);
    CudaGuard* g = reinterpret_cast<CudaGuard*>(guard);
    const Error e = set_device(g->original);
    delete g;
    return e;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_guard_set_index)(CUDAGuardHandle guard, int32_t device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(guard);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    return set_device(device);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(void* stream, int32_t device_index,
                                                                  CUDAStreamGuardHandle* ret_guard) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret_guard);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    if (stream != nullptr) {
      int owner = -1;
      SLIMCUDA_RETURN_IF_ERROR(cuda::stream_device(static_cast<cudaStream_t>(stream), &owner));
      SLIMCUDA_CHECK_OR_RETURN(owner == device, Error::InvalidArgument, "stream belongs to device %d, not %d", owner,
                               device);
    }
    CudaStreamGuard* g = new (std::nothrow) CudaStreamGuard(device, static_cast<cudaStream_t>(stream));
    SLIMCUDA_CHECK_OR_RETURN(g != nullptr, Error::MemoryAllocationFailed, "out of host memory");
    // The device guard recorded its reason (set_last_error) when it failed; return its code
    // so that message is the one the caller reads.
    const Error e = g->device_guard.error();
    if (e != Error::Ok) {
      delete g;
      return e;
    }
    *ret_guard = reinterpret_cast<CUDAStreamGuardHandle>(g);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(CUDAStreamGuardHandle guard) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(guard);
    delete reinterpret_cast<CudaStreamGuard*>(guard);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(int32_t device_index, void** ret_stream) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret_stream);
    SLIMCUDA_RETURN_IF_ERROR(check_device_index(device_index));
    const std::optional<cudaStream_t> selected = getCallerStream();
    if (selected.has_value() && *selected != nullptr && device_index != -1) {
      int owner = -1;
      SLIMCUDA_RETURN_IF_ERROR(cuda::stream_device(*selected, &owner));
      SLIMCUDA_CHECK_OR_RETURN(owner == device_index, Error::InvalidArgument,
                               "this thread's current stream belongs to device %d, not %d", owner, device_index);
    }
    // No selection: the legacy default stream (NULL), which is also what a selected NULL is.
    *ret_stream = selected.value_or(nullptr);
    return Error::Ok;
  });
}

}  // extern "C"
