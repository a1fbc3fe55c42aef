// SPDX-License-Identifier: Apache-2.0
#include "csrc/cuda/device.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "csrc/core/device_index.h"
#include "csrc/core/limits.h"
#include "csrc/cuda/cuda_error.h"

namespace slimcuda::cuda {
namespace {

// This thread's events, per device (allocated on the first use of a device).
struct ThreadEvents {
  std::unique_ptr<cudaEvent_t[]> by_device[kMaxDevices];
  ~ThreadEvents() {
    for (auto& events : by_device) {
      if (events == nullptr) continue;
      for (int i = 0; i < kThreadEventSlots; ++i) {
        // Fails only while the runtime unloads at exit; the event goes with the context then.
        if (events[i] != nullptr && cudaEventDestroy(events[i]) != cudaSuccess) (void)cudaGetLastError();
      }
    }
  }
};
thread_local ThreadEvents tls_events;

// Streams being captured, and their devices (CapturingStream): few, short-lived.
std::mutex capturing_mu;
std::vector<std::pair<cudaStream_t, int>> capturing;
std::atomic<int> capturing_count{0};
std::atomic<uint64_t> held_back{0};

}  // namespace

bool captures_underway() noexcept { return capturing_count.load(std::memory_order_acquire) > 0; }

bool synchronize_device_outside_captures(int device) noexcept {
  std::lock_guard<std::mutex> lock(capturing_mu);
  if (capturing_count.load(std::memory_order_acquire) > 0) {
    held_back.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  DeviceGuard guard(device);
  if (guard.error() == Error::Ok && cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  return true;
}

uint64_t synchronizations_held_back() noexcept { return held_back.load(std::memory_order_relaxed); }

CapturingStream::CapturingStream(cudaStream_t stream, int device) noexcept : stream_(stream) {
  try {
    std::lock_guard<std::mutex> lock(capturing_mu);
    capturing.emplace_back(stream, device);
    capturing_count.fetch_add(1, std::memory_order_release);
    registered_ = true;
  } catch (const std::bad_alloc&) {
    // Not registered: the capture's shims fail to resolve the device, and the capture with them.
  }
}

CapturingStream::~CapturingStream() {
  if (!registered_) return;
  std::lock_guard<std::mutex> lock(capturing_mu);
  for (auto it = capturing.begin(); it != capturing.end(); ++it) {
    if (it->first == stream_) {
      capturing.erase(it);
      capturing_count.fetch_sub(1, std::memory_order_release);
      break;
    }
  }
}

Error thread_event(int device, int slot, cudaEvent_t* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(device >= 0 && device < kMaxDevices && slot >= 0 && slot < kThreadEventSlots,
                           Error::Internal, "event slot %d of device %d", slot, device);
  auto& events = tls_events.by_device[device];
  if (events == nullptr) {
    events.reset(new (std::nothrow) cudaEvent_t[kThreadEventSlots]());
    SLIMCUDA_CHECK_OR_RETURN(events != nullptr, Error::MemoryAllocationFailed, "out of host memory");
  }
  cudaEvent_t& e = events[slot];
  if (e == nullptr) SLIMCUDA_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  *out = e;
  return Error::Ok;
}

Error wait_for_stream(cudaStream_t stream, int device) noexcept {
  cudaEvent_t e = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(thread_event(device, 0, &e));
  SLIMCUDA_CUDA_TRY(cudaEventRecord(e, stream));
  SLIMCUDA_CUDA_TRY(cudaEventSynchronize(e));
  return Error::Ok;
}

int device_count() noexcept {
  // The runtime fixes the device set when it initializes (CUDA_VISIBLE_DEVICES is read
  // once), so one query serves the process; copies check the index on every call.
  static const int count = [] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return -static_cast<int>(err);  // remembered as negative: the reason, for the message
    }
    return n;
  }();
  if (count < 0) {
    const cudaError_t err = static_cast<cudaError_t>(-count);
    set_last_error(Error::NotSupported, "no usable CUDA device: %s: %s", cudaGetErrorName(err),
                   cudaGetErrorString(err));
    return 0;
  }
  return count;
}

Error resolve_device(int index, int* resolved) noexcept {
  SLIMCUDA_RETURN_IF_ERROR(check_device_index(index));
  const int count = device_count();
  if (count == 0) {
    // device_count() left the CUDA reason in the message; keep it visible.
    return set_last_error(Error::NotSupported, "no CUDA device (no GPU or no driver)");
  }
  SLIMCUDA_CHECK_OR_RETURN(index < count, Error::InvalidArgument, "device index %d: only %d CUDA device(s)", index,
                           count);
  if (index == -1) {
    SLIMCUDA_CUDA_TRY(cudaGetDevice(&index));
  }
  SLIMCUDA_RETURN_IF_ERROR(check_not_lost(index));
  *resolved = index;
  return Error::Ok;
}

Error stream_device(cudaStream_t stream, int* device) noexcept {
  if (stream == nullptr) {
    SLIMCUDA_CUDA_TRY(cudaGetDevice(device));
    return Error::Ok;
  }
  if (capturing_count.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(capturing_mu);
    for (const auto& [s, d] : capturing) {
      if (s == stream) {
        *device = d;
        return Error::Ok;
      }
    }
  }
  // A stream the caller is capturing into a graph of their own: asking its device would
  // break the capture, so it is taken to be the current device's (capturing is done with
  // the stream's device current, as CUDA's own graph APIs expect).
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  SLIMCUDA_CUDA_TRY(cudaStreamIsCapturing(stream, &status));
  if (status != cudaStreamCaptureStatusNone) {
    SLIMCUDA_CUDA_TRY(cudaGetDevice(device));
    return Error::Ok;
  }
  SLIMCUDA_CUDA_TRY(cudaStreamGetDevice(stream, device));
  return Error::Ok;
}

Error resolve_device_for_stream(int index, cudaStream_t stream, int* resolved) noexcept {
  SLIMCUDA_RETURN_IF_ERROR(resolve_device(index, resolved));
  if (stream == nullptr) return Error::Ok;  // the legacy default stream of whichever device
  int owner = -1;
  SLIMCUDA_RETURN_IF_ERROR(stream_device(stream, &owner));
  if (index == -1) {
    *resolved = owner;
    return Error::Ok;
  }
  SLIMCUDA_CHECK_OR_RETURN(owner == *resolved, Error::InvalidArgument,
                           "caller stream belongs to device %d, the call names device %d", owner, *resolved);
  return Error::Ok;
}

DeviceGuard::DeviceGuard(int device) noexcept {
  cudaError_t err = cudaGetDevice(&previous_);
  if (err == cudaSuccess && previous_ != device) {
    err = cudaSetDevice(device);
    switched_ = (err == cudaSuccess);
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    // Making a device current creates its context, which takes device memory: running out
    // is the caller's to act on (free memory, retry), as for any allocation (allocation_error).
    const Error e = err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal;
    error_ = set_last_error(e, "selecting device %d: %s: %s", device, cudaGetErrorName(err), cudaGetErrorString(err));
  }
}

DeviceGuard::~DeviceGuard() {
  // Restoring can only fail while the runtime unloads at exit; nothing useful to do then.
  if (switched_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace slimcuda::cuda
