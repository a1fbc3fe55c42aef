// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "slimcuda/error.h"
#include "slimcuda/last_error.h"

// Same declaration as cuda_runtime_api.h, so CPU-only code can hold a StreamContext.
typedef struct CUstream_st* cudaStream_t;

namespace slimcuda {

/// Where a call's CUDA work goes, resolved once where the call enters slimcuda (a C ABI
/// function or a shim, csrc/entry/caller_context.h) and passed down by value, as RMM passes
/// a cuda_stream_view: nothing below the entry layer reads the thread-local selection or
/// asks CUDA for a stream's device again.
///
/// "Selected" and "not selected" differ even when the stream is the same legacy default
/// stream (nullptr): with a selection, work is enqueued on the stream and blocking calls
/// wait for exactly their own work; without one, copies are synchronous and CUDA models run
/// on their own stream.
class StreamContext {
 public:
  /// The caller selected `stream` (nullptr: the legacy default stream), which runs work on
  /// `device`.
  [[nodiscard]] static constexpr StreamContext selected(cudaStream_t stream, int device) noexcept {
    return StreamContext(stream, device, true);
  }
  /// No selection: work on `device` goes to its legacy default stream.
  [[nodiscard]] static constexpr StreamContext unselected(int device) noexcept {
    return StreamContext(nullptr, device, false);
  }

  [[nodiscard]] constexpr cudaStream_t stream() const noexcept { return stream_; }
  [[nodiscard]] constexpr int device() const noexcept { return device_; }
  [[nodiscard]] constexpr bool is_selected() const noexcept { return selected_; }

  /// This context moved to work on `device` (a tensor's): itself when it is that device's;
  /// the legacy default stream, which exists on every device, moves with the same
  /// selection; a selected stream of another GPU is refused (InvalidArgument: work is never
  /// enqueued on another GPU's stream).
  [[nodiscard]] Error on_device(int device, StreamContext* out) const noexcept {
    if (device_ == device || stream_ == nullptr) {
      *out = StreamContext(stream_, device, selected_);
      return Error::Ok;
    }
    return set_last_error(Error::InvalidArgument, "the caller stream belongs to device %d; the work is on device %d",
                          device_, device);
  }

  /// For memory of `device`, whose blocks are ordered on a stream of that device: this
  /// context when it works there (or is the legacy default stream), else `device`'s legacy
  /// default stream, unselected.
  [[nodiscard]] constexpr StreamContext for_allocation(int device) const noexcept {
    return device_ == device || stream_ == nullptr ? StreamContext(stream_, device, selected_) : unselected(device);
  }

 private:
  constexpr StreamContext(cudaStream_t stream, int device, bool selected) noexcept
      : stream_(stream), device_(device), selected_(selected) {}

  cudaStream_t stream_;
  int device_;
  bool selected_;
};

}  // namespace slimcuda
