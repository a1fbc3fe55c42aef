// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/staging_config.h"

#include <algorithm>
#include <cstdint>

#include "csrc/config/config.h"
#include "csrc/memory/caching_config.h"

namespace slimcuda {
namespace {

// A count setting as an int (clamp_staging_config brings it into range).
int setting_int(config::Key key) noexcept {
  return static_cast<int>(std::min<uint64_t>(config::get_integer(key), INT32_MAX));
}

}  // namespace

StagingConfig clamp_staging_config(const StagingConfig& c) noexcept {
  return StagingConfig{std::clamp<size_t>(c.chunk_bytes, size_t{64} << 10, size_t{1} << 30),
                       std::clamp(c.buffers, 1, kMaxStagingBuffers), std::clamp(c.threads, 1, kMaxStagingThreads),
                       c.stream_flags};
}

size_t staging_threshold() noexcept {
  // Default 1 MiB: with small copies cut into four chunks, staging matched or beat the
  // driver's own pageable path at every size from 1 MiB on, both directions (H200 host,
  // 2026-11-29 19:17 UTC, docs/runs/benchmarks.md); below that a copy is a few round trips
  // of latency.
  return static_cast<size_t>(config::get_integer(config::Key::StagingThreshold));
}

StagingConfig staging_config() noexcept {
  // Defaults 4 MiB x 6 buffers x min(8, hardware threads): among the best of the sweep on
  // the H200 host (docs/runs/benchmarks.md, 2026-11-29) while a 16 MiB copy still has four
  // chunks to overlap; 24 MiB of pinned buffers per copy.
  return clamp_staging_config(StagingConfig{
      static_cast<size_t>(config::get_integer(config::Key::StagingChunk)), setting_int(config::Key::StagingBuffers),
      setting_int(config::Key::StagingThreads), config::get_bool(config::Key::StagingFlags)});
}

bool should_stage(size_t nbytes) noexcept {
  const size_t threshold = staging_threshold();
  return threshold != 0 && nbytes >= threshold && caching_enabled();
}

}  // namespace slimcuda
