// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// dst <- src, element by element: equal sizes (no broadcasting), any strides, any pair of
/// supported dtypes (converted like a C cast; floating to integer truncates, NaN -> 0,
/// to bool means != 0). A destination whose elements alias (a stride-0 dimension of size
/// > 1, or more elements than its strides reach) is refused (InvalidArgument), so the work
/// is bounded by storage. CPU<->CPU runs on the host; CUDA work goes to `ctx` (resolved by
/// the entry point; StreamContext::on_device moves it to the tensor's GPU, refusing a
/// caller stream of another GPU), host<->device through the transfer engine (transfer.h).
///
/// Blocking when a host tensor is involved (host<->device): the call returns once the copy
/// is complete. Device<->device on one GPU is enqueued and returns at once, like a kernel
/// launch. Between two GPUs: packed on the source GPU, copied peer to peer and scattered on
/// the destination GPU, ordered on streams (the caller's and an internal stream of the
/// other GPU, joined by events, no device-wide synchronization); returns once enqueued with
/// a selected stream, when complete without one.
[[nodiscard]] Error copy_tensor(const SlimTensor& dst, const SlimTensor& src, const StreamContext& ctx) noexcept;

/// Whether copy_tensor(dst, src, ...) needs a StreamContext at all (a CUDA tensor is
/// involved): entry points resolve one only then, so CPU copies work without a GPU.
[[nodiscard]] inline bool copy_needs_stream(const SlimTensor& dst, const SlimTensor& src) noexcept {
  return dst.device().is_cuda() || src.device().is_cuda();
}

}  // namespace slimcuda
