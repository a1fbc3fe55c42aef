// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "csrc/cuda/stream_context.h"
#include "csrc/pool/block_pool.h"
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

/// Before `stream` is destroyed: its cached blocks stop referring to it (BlockPool::
/// retire_stream), on every device. memory::retire_stream covers the pinned pool too.
void retire_stream(void* stream) noexcept;

}  // namespace slimcuda::device_memory
