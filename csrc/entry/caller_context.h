// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda {

// The entry layer's one reader of the caller-stream thread-local: C ABI functions and shims
// turn "this thread's selection, or none" into a StreamContext here, once per call, and pass
// it down. (aoti_torch_get_current_cuda_stream reads the selection itself: that is its job.)

/// For work that names `device_index` (-1: the selected stream's device, else the current
/// device): checks the index (< -1, past the last device -> InvalidArgument; no GPU ->
/// NotSupported), reads the selection and, for a selected stream other than the legacy
/// default stream, its device — which must be the named one (InvalidArgument otherwise:
/// work is never enqueued on another GPU's stream). Work on a tensor's device then takes
/// StreamContext::on_device / for_allocation of the result: no second read, no second
/// CUDA query.
[[nodiscard]] Error caller_context(int device_index, StreamContext* out) noexcept;

/// caller_context(-1, ...) when `cuda` (the call's work touches a GPU or pinned memory),
/// else a context that CPU work ignores: CPU-only calls never need a GPU or a driver.
[[nodiscard]] inline Error caller_context_if(bool cuda, StreamContext* out) noexcept {
  if (!cuda) {
    *out = StreamContext::unselected(-1);
    return Error::Ok;
  }
  return caller_context(-1, out);
}

}  // namespace slimcuda
