// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "csrc/cuda/stream_context.h"
#include "csrc/memory/detail/block_pool.h"
#include "slimcuda/error.h"

namespace slimcuda {

// Cached page-locked host memory: cudaHostAlloc'ed segments split into blocks by a
// BlockPool, one pool for the process (pinned memory is reachable from every GPU). A block
// is tagged with the caller stream it was allocated on and follows the same reuse rules as
// device blocks: at once on that stream, on another only after the marker recorded at the
// free says the first stream got past it. Off, like the device cache, with
// SLIMCUDA_CACHING_ALLOCATOR=0 (then every call is cudaHostAlloc / cudaFreeHost).

/// At least `nbytes` (> 0) of pinned memory, 256-byte aligned, ordered on ctx.stream() (the
/// legacy default stream when none is selected). NotSupported without a GPU.
[[nodiscard]] Error pinned_allocate(size_t nbytes, const StreamContext& ctx, void** out) noexcept;
/// Returns memory from pinned_allocate (nullptr is ignored).
void pinned_free(void* ptr) noexcept;
/// The pinned cache's statistics (zeros before its first allocation or with caching off).
[[nodiscard]] PoolStats pinned_memory_stats() noexcept;
/// Returns cached, unused pinned segments to CUDA (after waiting for every GPU).
void pinned_empty_cache() noexcept;
/// See BlockPool::retire_stream; memory::retire_stream calls it.
void pinned_retire_stream(void* stream) noexcept;

}  // namespace slimcuda
