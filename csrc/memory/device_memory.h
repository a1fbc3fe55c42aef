// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>

#include <cuda_runtime_api.h>

#include "csrc/cuda/stream_context.h"
#include "csrc/memory/detail/block_pool.h"
#include "slimcuda/error.h"
#include "slimcuda/result.h"

namespace slimcuda::device_memory {

// CUDA device memory: cached per GPU (a BlockPool over cudaMalloc'ed segments) unless
// caching is off (caching_config.h), in which case every call is cudaMalloc / cudaFree.
// Requests aligned to more than 256 bytes bypass the cache. Thread-safe.

/// `nbytes` on ctx.device(), ordered on ctx.stream(): a cached block is reused at once on
/// that stream, on another only once the work queued before its free is done. alignment 0
/// = 256 (cudaMalloc's), else a power of two (InvalidArgument otherwise); nbytes 0 gives
/// nullptr and allocates nothing. Out of memory (after releasing the cache and retrying
/// once) -> MemoryAllocationFailed. Free with free() on the same device.
[[nodiscard]] Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept;

/// The one free path, for the C ABI and tensors alike. `ptr` must be memory allocate()
/// returned for `device` and not yet freed; nullptr is a no-op. Memory of another device
/// -> InvalidArgument ("memory of device X, not Y"); a pointer freed twice, into the
/// middle of a block, or never returned by allocate() -> InvalidArgument, nothing freed
/// (it never reaches cudaFree, which could release a segment the cache still hands out);
/// a failed cudaFree -> Internal with CUDA's text.
[[nodiscard]] Error free(void* ptr, int device) noexcept;

/// The cache's statistics for `device` (zeros before its first allocation or with
/// caching off).
[[nodiscard]] PoolStats stats(int device) noexcept;

/// Returns `device`'s cached, unused memory to CUDA (after waiting for the device).
void empty_cache(int device) noexcept;

/// A private pool of one GPU's memory, for a CUDA graph (csrc/graph): while a stream is
/// routed to it (StreamRoute), every allocate() on that stream comes from it, and its blocks
/// serve nobody else, so the addresses a graph captured stay the graph's for as long as the
/// pool lives (as PyTorch's graph pools do). free() finds its blocks like any others.
/// While capturing (set_capturing) it takes no new segment from CUDA (an allocation it
/// cannot serve from what it holds fails with MemoryAllocationFailed and says so: a
/// cudaMalloc would break the capture) and gives none back. Destroy it only once no block is
/// in use and no work using it is queued: it waits for the device, then returns its
/// segments to CUDA.
class PrivatePool {
 public:
  /// A new, empty pool of `device`; failure is MemoryAllocationFailed (host memory).
  [[nodiscard]] static Error create(int device, std::unique_ptr<PrivatePool>* out) noexcept;
  ~PrivatePool();
  PrivatePool(const PrivatePool&) = delete;
  PrivatePool& operator=(const PrivatePool&) = delete;

  void set_capturing(bool capturing) noexcept;
  [[nodiscard]] PoolStats stats() const noexcept;
  [[nodiscard]] int device() const noexcept { return device_; }

  struct Impl;

 private:
  friend class StreamRoute;
  PrivatePool(int device, std::unique_ptr<Impl> impl) noexcept;
  int device_;
  std::unique_ptr<Impl> impl_;
};

/// Routes allocate() on `stream` to `pool` for the guard's scope (one route per stream at a
/// time: a second gives InvalidArgument from error()). Costs the normal path one atomic
/// load while no route exists anywhere.
class StreamRoute {
 public:
  StreamRoute(cudaStream_t stream, PrivatePool* pool) noexcept;
  ~StreamRoute();
  StreamRoute(const StreamRoute&) = delete;
  StreamRoute& operator=(const StreamRoute&) = delete;
  [[nodiscard]] Error error() const noexcept { return error_; }

 private:
  cudaStream_t stream_;
  Error error_ = Error::Ok;
};

/// Before `stream` is destroyed: its cached blocks stop referring to it (BlockPool::
/// retire_stream), on every device. memory::retire_stream covers the pinned pool too.
void retire_stream(void* stream) noexcept;

}  // namespace slimcuda::device_memory
