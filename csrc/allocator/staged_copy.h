#pragma once

#include <cstddef>

#include "slimcuda/error.h"

namespace slimcuda {

// Copies between pageable host memory and device memory through pinned chunks.
//
// A cudaMemcpy from ordinary (pageable) memory runs at a fraction of the link's speed: the
// driver copies through its own small staging buffer on one thread. Here the copy is cut
// into chunks; while the DMA of chunk k runs, host threads memcpy chunk k+1 into the next
// pinned buffer (host to device), or out of the previous one (device to host). The DMAs are
// enqueued on `stream` (the caller stream, or the legacy default stream) and the call
// returns when the whole copy is done: the blocking contract of slimcuda's copies.

/// Staged copies are used for pageable host memory from this many bytes on (measured on the
/// H200: docs/benchmarks.md). SLIMCUDA_STAGING_THRESHOLD (bytes) overrides it; 0 turns
/// staging off.
[[nodiscard]] size_t staging_threshold() noexcept;

/// Whether a copy of `nbytes` to or from `host` takes the staged path: big enough, caching
/// on (the chunks come from the pinned pool), and `host` not page-locked already.
[[nodiscard]] bool should_stage(const void* host, size_t nbytes) noexcept;

/// The staged copy itself, host to device or device to host, for any size and alignment, on
/// `device` (already current) and `stream` (a cudaStream_t; nullptr: the legacy default
/// stream). Exported for the benchmark, which compares it with the direct copy at every size.
[[nodiscard]] Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, void* stream,
                                int device) noexcept;

}  // namespace slimcuda
