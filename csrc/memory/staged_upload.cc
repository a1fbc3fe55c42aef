// SPDX-License-Identifier: Apache-2.0
// Many host pieces uploaded into one device range through pinned chunks (see staged_copy.h):
// the pieces' checks, and how they fill the chunks of the upload pipeline
// (detail/upload_pipeline.cc).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "csrc/cuda/device.h"
#include "csrc/memory/detail/pipeline.h"
#include "csrc/memory/staged_copy.h"

namespace slimcuda {
namespace {

// staged_upload's source: each chunk from the pieces that fall in it (memcpys from host
// pieces go to the copy threads, reads run here), the gaps zeroed.
class Pieces final : public staging::ChunkSource {
 public:
  Pieces(const UploadPiece* pieces, size_t count, int threads) : pieces_(pieces), count_(count), threads_(threads) {}

  Error fill(uint64_t lo, size_t len, char* buffer, staging::Latch* latch) override {
    const uint64_t hi = lo + len;
    uint64_t pos = lo;
    for (size_t q = next_piece_; q < count_ && pieces_[q].dst_offset < hi; ++q) {
      const UploadPiece& p = pieces_[q];
      const uint64_t from = std::max(lo, p.dst_offset), to = std::min(hi, p.dst_offset + p.nbytes);
      if (from >= to) {
        if (p.dst_offset + p.nbytes <= lo) next_piece_ = q + 1;
        continue;
      }
      if (from > pos) std::memset(buffer + (pos - lo), 0, static_cast<size_t>(from - pos));
      const size_t n = static_cast<size_t>(to - from);
      const uint64_t within = from - p.dst_offset;
      if (p.host != nullptr) {
        copy_.submit(buffer + (from - lo), static_cast<const char*>(p.host) + within, n, threads_, latch);
      } else {
        SLIMCUDA_RETURN_IF_ERROR(p.read(p.reader, p.read_offset + within, n, buffer + (from - lo)));
      }
      pos = to;
      if (p.dst_offset + p.nbytes <= hi) next_piece_ = q + 1;
    }
    if (pos < hi) std::memset(buffer + (pos - lo), 0, static_cast<size_t>(hi - pos));
    return Error::Ok;
  }

 private:
  const UploadPiece* pieces_;
  size_t count_;
  int threads_;
  size_t next_piece_ = 0;  // the first piece that does not end before the chunk being filled
  staging::CopyThreads& copy_ = staging::copy_threads();
};

}  // namespace

Error staged_upload(void* dst, uint64_t total, const UploadPiece* pieces, size_t count, const StreamContext& ctx,
                    const StagingConfig& requested) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(dst != nullptr || total == 0, Error::InvalidArgument, "null destination");
  SLIMCUDA_CHECK_OR_RETURN(pieces != nullptr || count == 0, Error::InvalidArgument, "null pieces");
  uint64_t end = 0;
  for (size_t i = 0; i < count; ++i) {
    const UploadPiece& p = pieces[i];
    SLIMCUDA_CHECK_OR_RETURN(p.dst_offset >= end && p.nbytes <= total && p.dst_offset <= total - p.nbytes,
                             Error::InvalidArgument,
                             "piece %zu (%llu bytes at %llu) overlaps the one before or ends past the %llu bytes", i,
                             static_cast<unsigned long long>(p.nbytes), static_cast<unsigned long long>(p.dst_offset),
                             static_cast<unsigned long long>(total));
    SLIMCUDA_CHECK_OR_RETURN(p.nbytes == 0 || p.host != nullptr || p.read != nullptr, Error::InvalidArgument,
                             "piece %zu has neither host memory nor a reader", i);
    end = p.dst_offset + p.nbytes;
  }
  if (total == 0) return Error::Ok;
  cuda::DeviceGuard guard(ctx.device());
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  const StagingConfig config = clamp_staging_config(requested);
  const staging::Chunking c(total, std::min<uint64_t>(config.chunk_bytes, total), config.buffers);
  staging::Events events{};
  SLIMCUDA_RETURN_IF_ERROR(staging::events_for(ctx.device(), c.used, &events));
  return staging::catching([&] {
    staging::Pipeline pipe;
    SLIMCUDA_RETURN_IF_ERROR(pipe.allocate(c, ctx));
    Pieces source(pieces, count, config.threads);
    return staging::upload_with_events(static_cast<char*>(dst), c, pipe, events, source, ctx.stream());
  });
}

}  // namespace slimcuda
