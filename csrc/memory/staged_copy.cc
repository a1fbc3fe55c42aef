// SPDX-License-Identifier: Apache-2.0
// Pageable host <-> device copies staged through pinned chunks (see staged_copy.h): the
// chunking, and which pipeline (detail/pipeline.h) runs the copy.
#include "csrc/memory/staged_copy.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "csrc/memory/detail/pipeline.h"

namespace slimcuda {
namespace {

// Copies smaller than four chunks get smaller chunks (down to this), so that they too
// have stages to overlap.
constexpr size_t kMinChunk = size_t{256} << 10;

// A staged_copy's upload source: one contiguous host range, memcpy'd by the copy threads.
class HostRange final : public staging::ChunkSource {
 public:
  HostRange(const char* src, int threads) : src_(src), threads_(threads) {}
  Error fill(uint64_t lo, size_t n, char* buffer, staging::Latch* latch) override {
    copy_.submit(buffer, src_ + lo, n, threads_, latch);
    return Error::Ok;
  }

 private:
  const char* src_;
  int threads_;
  staging::CopyThreads& copy_ = staging::copy_threads();
};

}  // namespace

Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, const StreamContext& ctx,
                  const StagingConfig& requested) noexcept {
  if (nbytes == 0) return Error::Ok;
  const StagingConfig config = clamp_staging_config(requested);
  const size_t quarter = ((nbytes + 3) / 4 + 0xffff) & ~size_t{0xffff};  // in 64 KiB units
  const staging::Chunking c(nbytes, std::min(config.chunk_bytes, std::max(kMinChunk, quarter)), config.buffers);
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (config.stream_flags && stream_flags_available(ctx.device())) {
    return staging::catching([&] { return staging::copy_with_flags(d, s, to_device, c, config.threads, ctx); });
  }
  staging::Events events{};
  SLIMCUDA_RETURN_IF_ERROR(staging::events_for(ctx.device(), c.used, &events));
  return staging::catching([&] {
    staging::Pipeline pipe;
    SLIMCUDA_RETURN_IF_ERROR(pipe.allocate(c, ctx));
    if (!to_device) return staging::download_with_events(d, s, c, pipe, events, config.threads, ctx.stream());
    HostRange source(s, config.threads);
    return staging::upload_with_events(d, c, pipe, events, source, ctx.stream());
  });
}

}  // namespace slimcuda
