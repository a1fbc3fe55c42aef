// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda::cuda {

/// Number of usable CUDA devices; 0 when there is no GPU or no driver (the CUDA reason
/// is then recorded as this thread's last-error message). Never fails.
[[nodiscard]] int device_count() noexcept;

/// Checks a device index and resolves -1 to the current device, in the contract's order:
/// index < -1 -> InvalidArgument; no GPU/driver -> NotSupported; index >= count ->
/// InvalidArgument.
[[nodiscard]] Error resolve_device(int index, int* resolved) noexcept;

/// The device `stream` belongs to (the current device for the legacy default stream, and
/// for a stream being captured into a graph by someone other than slimcuda: CUDA refuses to
/// say while capturing, see CapturingStream).
[[nodiscard]] Error stream_device(cudaStream_t stream, int* device) noexcept;

/// While a stream is being captured into a CUDA graph, CUDA will not say which device it
/// belongs to (cudaStreamGetDevice fails with cudaErrorStreamCaptureUnsupported and breaks
/// the capture), yet every shim the captured run calls asks: the capturer tells
/// stream_device for the guard's scope. Costs others one atomic load while none exists.
/// Whether slimcuda is capturing a CUDA graph on any thread now (CapturingStream): calls
/// that synchronize the whole device must wait, or they would invalidate the capture.
[[nodiscard]] bool captures_underway() noexcept;

/// cudaDeviceSynchronize on `device` unless slimcuda is capturing a graph on any thread;
/// whether it synchronized. No capture can begin meanwhile (CapturingStream waits for it), so
/// the synchronize can never invalidate one of ours.
[[nodiscard]] bool synchronize_device_outside_captures(int device) noexcept;

/// How many times synchronize_device_outside_captures has held back for a capture since the
/// process began: lets a test see that a caller is waiting for one, without a sleep.
[[nodiscard]] uint64_t synchronizations_held_back() noexcept;

class CapturingStream {
 public:
  CapturingStream(cudaStream_t stream, int device) noexcept;
  ~CapturingStream();
  CapturingStream(const CapturingStream&) = delete;
  CapturingStream& operator=(const CapturingStream&) = delete;

 private:
  cudaStream_t stream_;
  bool registered_ = false;
};

/// Resolves `index` for work on `stream`: a stream belongs to one device, read from the
/// stream itself. index -1 means that device; any other index must name it
/// (InvalidArgument otherwise: work is never enqueued on another GPU's stream). The legacy
/// default stream (nullptr) exists on every device: -1 is then the current device.
[[nodiscard]] Error resolve_device_for_stream(int index, cudaStream_t stream, int* resolved) noexcept;

/// This thread's reusable events for `device` (created on first use, destroyed at thread
/// exit): slot 0 serves wait_for_stream, slots 1..kThreadEventSlots-1 the transfer engine's
/// pipelines. Creating an event per wait costs microseconds; these cost nothing after the
/// first. `device` must be current when a slot is first used.
inline constexpr int kThreadEventSlots = 32;
[[nodiscard]] Error thread_event(int device, int slot, cudaEvent_t* out) noexcept;

/// Blocks until the work enqueued on `stream` so far has finished — and no later work:
/// records this thread's cached event for `device` on the stream and waits on it.
/// `device` must be the stream's device and current.
[[nodiscard]] Error wait_for_stream(cudaStream_t stream, int device) noexcept;

/// Makes `device` current for the scope if it is not already, and restores the previous
/// device on destruction. A failed construction is reported by error(), its reason recorded
/// as this thread's last error: MemoryAllocationFailed when the device's context could not be
/// created for lack of device memory, Internal otherwise.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) noexcept;
  ~DeviceGuard();

  // A guard restores exactly one saved device; copies or moves would restore it twice.
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  DeviceGuard(DeviceGuard&&) = delete;
  DeviceGuard& operator=(DeviceGuard&&) = delete;

  [[nodiscard]] Error error() const noexcept { return error_; }

 private:
  int previous_ = -1;
  bool switched_ = false;
  Error error_ = Error::Ok;
};

}  // namespace slimcuda::cuda
