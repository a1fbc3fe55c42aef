// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::transfer {

// The one transfer engine: every host<->device copy in slimcuda, of buffers (the C ABI's
// slimcuda_copy_*) and of tensors (copy_tensor) alike, goes through here, so both get the
// same paths:
//  - pinned host memory: one DMA;
//  - pageable host memory from staging_threshold() bytes on: staged through pinned chunks
//    (staged_copy.h), host threads copying while earlier chunks' DMAs run;
//  - smaller pageable copies: the driver's own pageable copy.
//
// Blocking contract: host_to_device and device_to_host return when the host memory may be
// reused. With a selected stream (ctx.is_selected()) the copy is enqueued on it after the
// work already there and the call waits for exactly that copy (an event), not for later
// work other threads enqueue; without one, the copy is synchronous. ctx.device() must be
// the device memory's device; it is made current for the call.

[[nodiscard]] Error host_to_device(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept;
[[nodiscard]] Error device_to_host(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept;

/// Device to device on one GPU, enqueued on ctx.stream(); returns at once (like a kernel).
[[nodiscard]] Error device_to_device(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept;

/// A peer copy of `nbytes` from src_device to dst_device, enqueued on `stream` (a stream of
/// dst_device): direct over NVLink/PCIe where the GPUs allow peer access (enabled once per
/// pair), else staged by the driver. Returns once enqueued; the caller orders `stream`
/// against the source's producers (copy_tensor does, with events).
[[nodiscard]] Error peer_async(void* dst, int dst_device, const void* src, int src_device, size_t nbytes,
                               cudaStream_t stream) noexcept;

/// An internal non-blocking stream of `device` for the other half of cross-device work
/// (created on first use, kept for the process's life).
[[nodiscard]] Error internal_stream(int device, cudaStream_t* out) noexcept;

/// Temporary device memory for a copy: from the caching allocator, on ctx.device() and
/// ordered on ctx.stream(), freed (stream-ordered: later work on the stream may reuse it at
/// once) when it goes out of scope. Never a cudaMalloc of its own.
class Scratch {
 public:
  explicit Scratch(const StreamContext& ctx) noexcept : ctx_(ctx) {}
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&&) = delete;
  Scratch& operator=(Scratch&&) = delete;

  [[nodiscard]] Error allocate(size_t nbytes) noexcept;
  [[nodiscard]] char* get() const noexcept { return static_cast<char*>(ptr_); }

 private:
  StreamContext ctx_;
  void* ptr_ = nullptr;
};

}  // namespace slimcuda::transfer
