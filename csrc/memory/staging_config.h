// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace slimcuda {

// When pageable host <-> device copies are staged through pinned chunks (staged_copy.h), and
// the shape of the pipeline that stages them.

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

/// `config` within the limits: chunks of 64 KiB to 1 GiB, 1..kMaxStagingBuffers buffers,
/// 1..kMaxStagingThreads threads.
[[nodiscard]] StagingConfig clamp_staging_config(const StagingConfig& config) noexcept;

/// The process's configuration: measured defaults (docs/benchmarks.md), overridden by
/// SLIMCUDA_STAGING_CHUNK (bytes), SLIMCUDA_STAGING_BUFFERS, SLIMCUDA_STAGING_THREADS and
/// SLIMCUDA_STAGING_FLAGS (a bool: StagingConfig::stream_flags), read at each call
/// (csrc/config), so an override applies to the next copy.
[[nodiscard]] StagingConfig staging_config() noexcept;

}  // namespace slimcuda
