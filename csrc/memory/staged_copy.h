// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda {

// Copies between pageable host memory and device memory through pinned chunks.
//
// A cudaMemcpy from ordinary (pageable) memory runs at a fraction of the link's speed: the
// driver copies through its own small staging buffer on one thread. Here the copy is cut
// into chunks; while the DMA of chunk k runs, host threads memcpy the next chunks into
// their pinned buffers (host to device), or out of the previous ones (device to host),
// without a barrier between chunks: the next chunk's memcpy is queued before the current
// one is done, so the threads never wait for the thread that enqueues DMAs. The DMAs are
// enqueued on `stream` (the caller stream, or the legacy default stream) and the call
// returns when the whole copy is done: the blocking contract of slimcuda's copies.

/// Staged copies are used for pageable host memory from this many bytes on (measured on the
/// H200: docs/benchmarks.md). SLIMCUDA_STAGING_THRESHOLD (bytes; csrc/config, read at each
/// call) overrides it; 0 turns staging off.
[[nodiscard]] size_t staging_threshold() noexcept;

/// Whether a copy of `nbytes` to or from `host` takes the staged path: big enough and
/// caching on (the chunks come from the pinned pool). The caller knows `host` is pageable.
[[nodiscard]] bool should_stage(size_t nbytes) noexcept;

/// The shape of the pipeline: pinned chunks of `chunk_bytes`, `buffers` of them in flight,
/// each chunk's memcpy split over `threads` host threads. A copy smaller than four chunks
/// uses chunks of a quarter of its size (at least 256 KiB).
struct StagingConfig {
  size_t chunk_bytes;
  int buffers;
  int threads;
  /// How the DMAs wait for the host threads. false: the calling thread enqueues each chunk's
  /// DMA when its memcpy is done (host to device) and hands each landed chunk to the threads
  /// (device to host), waiting on events: about 15 µs of its time per chunk. true: every
  /// DMA is enqueued at once, each behind a stream wait on a flag in pinned memory that the
  /// host thread finishing its memcpy sets (cuStreamWaitValue32), and each DMA's end is
  /// written to a flag the host threads poll (cuStreamWriteValue32): the calling thread
  /// only enqueues, then waits once. Needs the driver's stream memory operations; without
  /// them the event pipeline runs.
  bool stream_flags = false;
};

/// Limits a StagingConfig is clamped to.
inline constexpr int kMaxStagingBuffers = 16;
inline constexpr int kMaxStagingThreads = 64;

/// The process's configuration: measured defaults (docs/benchmarks.md), overridden by
/// SLIMCUDA_STAGING_CHUNK (bytes), SLIMCUDA_STAGING_BUFFERS, SLIMCUDA_STAGING_THREADS and
/// SLIMCUDA_STAGING_FLAGS (a bool: StagingConfig::stream_flags), read at each call
/// (csrc/config), so an override applies to the next copy.
[[nodiscard]] StagingConfig staging_config() noexcept;

/// The staged copy itself, host to device or device to host, for any size and alignment, on
/// ctx.device() (already current) and ctx.stream() (nullptr: the legacy default stream),
/// with `config` (clamped to sane limits; staging_config() by default). Returns when the
/// copy is complete.
[[nodiscard]] Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, const StreamContext& ctx,
                                const StagingConfig& config) noexcept;

/// One piece of a staged upload (staged_upload): `nbytes` bytes that land at `dst_offset`
/// of the destination, taken from host memory (`host`, read by the copy threads) or, where
/// the bytes are not in memory, written into the pinned chunk by `read(reader, offset, n,
/// chunk)` on the calling thread (`offset` counts from `read_offset`). `read` must fill all
/// `n` bytes or return an error.
struct UploadPiece {
  uint64_t dst_offset = 0;
  uint64_t nbytes = 0;
  const void* host = nullptr;
  const void* reader = nullptr;
  Error (*read)(const void* reader, uint64_t offset, size_t n, void* dst) noexcept = nullptr;
  uint64_t read_offset = 0;
};

/// Uploads many host pieces into one device range [dst, dst + total) through pinned chunks:
/// the range is cut into chunks of config.chunk_bytes; while chunk k's one DMA runs, the
/// next chunks are filled from the pieces that fall in them (the gaps between pieces are
/// zeroed), so a model's thousands of small constants cost one DMA per chunk, not one per
/// constant. Nothing holds more than `buffers` chunks of host memory; sizes are 64-bit.
/// `pieces` are sorted by dst_offset, do not overlap and end within `total`
/// (InvalidArgument otherwise, checked before anything is enqueued). DMAs go on
/// ctx.stream() of ctx.device() (made current here); returns when the upload is complete,
/// or with the first error (read's, or CUDA's as Internal) once nothing it enqueued still
/// uses the pinned chunks.
[[nodiscard]] Error staged_upload(void* dst, uint64_t total, const UploadPiece* pieces, size_t count,
                                  const StreamContext& ctx, const StagingConfig& config) noexcept;

/// Whether this process can run the stream-flag pipeline (the driver's stream memory
/// operations are there and the device supports them).
[[nodiscard]] bool stream_flags_available(int device) noexcept;

}  // namespace slimcuda
