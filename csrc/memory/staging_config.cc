// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/staging_config.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "csrc/memory/caching_config.h"

namespace slimcuda {
namespace {

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<size_t>(x) : fallback;
}

// Every staging setting, from the environment where it is set (and a number), else the
// measured default: the one place that reads SLIMCUDA_STAGING_*.
struct StagingSettings {
  size_t threshold;
  StagingConfig config;  // not clamped yet
};

StagingSettings settings_from_environment() {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  // Threshold 1 MiB: with small copies cut into four chunks, staging matched or beat the
  // driver's own pageable path at every size from 1 MiB on, both directions (H200 host,
  // 2026-11-29 19:17 UTC, docs/benchmarks.md); below that a copy is a few round trips of
  // latency. 4 MiB x 6 buffers x 8 threads: among the best of the sweep on the H200 host
  // (docs/benchmarks.md, 2026-11-29 19:08 UTC: 45.9 / 45.2 GB/s at 256 MiB) while a
  // 16 MiB copy still has four chunks to overlap; 24 MiB of pinned buffers per copy.
  return StagingSettings{env_size("SLIMCUDA_STAGING_THRESHOLD", size_t{1} << 20),
                         StagingConfig{env_size("SLIMCUDA_STAGING_CHUNK", size_t{4} << 20),
                                       static_cast<int>(env_size("SLIMCUDA_STAGING_BUFFERS", 6)),
                                       static_cast<int>(env_size("SLIMCUDA_STAGING_THREADS", std::min(hw, 8u))),
                                       env_size("SLIMCUDA_STAGING_FLAGS", 0) != 0}};
}

}  // namespace

StagingConfig clamp_staging_config(const StagingConfig& c) noexcept {
  return StagingConfig{std::clamp<size_t>(c.chunk_bytes, size_t{64} << 10, size_t{1} << 30),
                       std::clamp(c.buffers, 1, kMaxStagingBuffers), std::clamp(c.threads, 1, kMaxStagingThreads),
                       c.stream_flags};
}

size_t staging_threshold() noexcept {
  static const size_t threshold = settings_from_environment().threshold;
  return threshold;
}

StagingConfig staging_config() noexcept {
  static const StagingConfig config = clamp_staging_config(settings_from_environment().config);
  return config;
}

bool should_stage(size_t nbytes) noexcept {
  const size_t threshold = staging_threshold();
  return threshold != 0 && nbytes >= threshold && caching_enabled();
}

}  // namespace slimcuda
