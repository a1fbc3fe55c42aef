// SPDX-License-Identifier: Apache-2.0
// The staged copy (pageable host memory through pinned chunks), tested directly with every
// pipeline shape, and through the transfer engine's copies from the staging threshold on.
// Links the library statically (//csrc:slimcuda_static): staged_copy is not exported by
// libslimcuda.so, and this binary is alone in its process.
#include "csrc/memory/staged_copy.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/config/config.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/pinned_pool.h"
#include "csrc/memory/transfer.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/test_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr StreamContext kLegacy = StreamContext::unselected(0);
StreamContext on(cudaStream_t stream) { return StreamContext::selected(stream, 0); }

// `n` bytes of device 0's memory ordered on ctx's stream (nullptr, with a test failure,
// when there are none).
void* device_bytes(size_t n, const StreamContext& ctx) {
  Result<void*> r = device_memory::allocate(n, 0, ctx);
  EXPECT_TRUE(r.ok()) << last_error_message();
  return r.ok() ? r.value() : nullptr;
}

// Pageable copies from the staging threshold on go through pinned chunks: every byte lands
// where it should, for odd sizes and unaligned offsets, with and without a selected stream,
// and the staged path is really taken (the pinned pool hands out its chunks).
TEST(StagedCopy, PageableRoundTripsOddSizesAndOffsets) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const size_t threshold = staging_threshold();
  ASSERT_GT(threshold, 0u) << "SLIMCUDA_STAGING_THRESHOLD=0 turns the path under test off";
  testing::TestStream stream;
  ASSERT_TRUE(stream.ok());
  const size_t sizes[] = {threshold - 1,          threshold,       threshold + 1, (size_t{4} << 20) + 7,
                          (size_t{13} << 20) + 3, size_t{12} << 20};
  for (int with_stream = 0; with_stream < 2; ++with_stream) {
    const StreamContext ctx = with_stream ? on(stream.get()) : kLegacy;
    for (size_t n : sizes) {
      std::vector<uint8_t> host(n + 8), back(n + 8, 0);
      for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>((i * 131 + n) >> 3);
      void* dev = device_bytes(n + 512, ctx);
      ASSERT_NE(dev, nullptr);
      uint8_t* d = static_cast<uint8_t*>(dev) + 3;
      const PoolStats before = pinned_memory_stats();
      ASSERT_EQ(transfer::host_to_device(d, host.data() + 5, n, ctx), Error::Ok) << last_error_message();
      ASSERT_EQ(transfer::device_to_host(back.data() + 1, d, n, ctx), Error::Ok) << last_error_message();
      const PoolStats after = pinned_memory_stats();
      EXPECT_EQ(std::memcmp(back.data() + 1, host.data() + 5, n), 0) << n << " bytes, stream " << with_stream;
      EXPECT_EQ(back[0], 0) << "wrote before the destination";
      EXPECT_EQ(back[n + 1], 0) << "wrote past the destination";
      if (n >= threshold) {
        EXPECT_GT(after.allocations, before.allocations) << n << " bytes: not staged";
      } else {
        EXPECT_EQ(after.allocations, before.allocations) << n << " bytes: staged below the threshold";
      }
      EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "staging chunks not returned";
      EXPECT_EQ(device_memory::free(dev, 0), Error::Ok);
    }
  }
}

// The staged copy itself at sizes the policy would send direct (one byte, one chunk and a
// bit), on the legacy default stream.
TEST(StagedCopy, AnySizeThroughTheChunks) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  for (size_t n : {size_t{1}, size_t{7}, size_t{4096}, (size_t{4} << 20) + 1, (size_t{9} << 20) - 5}) {
    std::vector<uint8_t> host(n), back(n, 0);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 7 + 1);
    void* dev = device_bytes(n, kLegacy);
    ASSERT_NE(dev, nullptr);
    ASSERT_EQ(staged_copy(dev, host.data(), n, true, kLegacy, staging_config()), Error::Ok) << last_error_message();
    ASSERT_EQ(staged_copy(back.data(), dev, n, false, kLegacy, staging_config()), Error::Ok) << last_error_message();
    EXPECT_EQ(back, host) << n << " bytes";
    EXPECT_EQ(device_memory::free(dev, 0), Error::Ok);
  }
}

// Every pipeline shape moves every byte, with either hand-off (events, stream flags): one
// buffer (strictly serial), two, more buffers than chunks, a last chunk of one byte, one
// thread and an odd number of threads, on the legacy default stream and on a stream.
TEST(StagedCopy, EveryPipelineShapeRoundTrips) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  ASSERT_TRUE(stream_flags_available(0)) << "the H200's driver has stream memory operations";
  testing::TestStream created;
  ASSERT_TRUE(created.ok());
  constexpr size_t kChunk = size_t{64} << 10;  // the smallest chunk a config may ask for
  std::vector<StagingConfig> shapes;
  for (bool flags : {false, true}) {
    for (StagingConfig c : {StagingConfig{kChunk, 1, 1}, StagingConfig{kChunk, 2, 3}, StagingConfig{kChunk, 5, 2},
                            StagingConfig{kChunk * 4, 3, 7}, StagingConfig{size_t{1} << 20, 16, 4}}) {
      c.stream_flags = flags;
      shapes.push_back(c);
    }
  }
  for (cudaStream_t stream : {static_cast<cudaStream_t>(nullptr), created.get()}) {
    for (const StagingConfig& shape : shapes) {
      for (size_t n : {size_t{1}, kChunk, kChunk + 1, 7 * kChunk + 13, size_t{3} << 20}) {
        std::vector<uint8_t> host(n), back(n, 0);
        for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 29 + n + shape.buffers);
        void* dev = device_bytes(n, kLegacy);
        ASSERT_NE(dev, nullptr);
        const StreamContext ctx = stream == nullptr ? kLegacy : on(stream);
        ASSERT_EQ(staged_copy(dev, host.data(), n, true, ctx, shape), Error::Ok) << last_error_message();
        ASSERT_EQ(staged_copy(back.data(), dev, n, false, ctx, shape), Error::Ok) << last_error_message();
        EXPECT_EQ(back, host) << n << " bytes, chunk " << shape.chunk_bytes << ", " << shape.buffers << " buffers, "
                              << shape.threads << " threads, flags " << shape.stream_flags << ", stream " << stream;
        EXPECT_EQ(device_memory::free(dev, 0), Error::Ok);
      }
    }
  }
}

// Three threads staging at once with `config`, sharing the copy threads (with stream
// flags, gated slices wait at the back of the queue): every copy keeps its bytes.
void three_threads_keep_their_bytes(const StagingConfig& config) {
  constexpr size_t n = (size_t{24} << 20) + 9;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> host(n), back(n, 0);
      for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 13 + t * 101);
      Result<void*> dev = device_memory::allocate(n, 0, kLegacy);
      if (!dev.ok()) {
        ++failures;
        return;
      }
      for (int round = 0; round < 3; ++round) {
        if (staged_copy(dev.value(), host.data(), n, true, kLegacy, config) != Error::Ok ||
            staged_copy(back.data(), dev.value(), n, false, kLegacy, config) != Error::Ok || back != host) {
          ++failures;
        }
        std::fill(back.begin(), back.end(), 0);
      }
      if (device_memory::free(dev.value(), 0) != Error::Ok) ++failures;
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << "stream flags " << config.stream_flags;
}

TEST(StagedCopy, ConcurrentCopiesKeepTheirBytes) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  StagingConfig config = staging_config();
  config.stream_flags = false;
  three_threads_keep_their_bytes(config);
}

TEST(StagedCopy, ConcurrentFlagPipelinesKeepTheirBytes) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  StagingConfig config = staging_config();
  config.stream_flags = true;
  three_threads_keep_their_bytes(config);
}

// The pipeline's shape is read from the settings at each call: an override applies to the
// next copy, clamped like any value (runs without a GPU).
TEST(StagedCopy, SettingsApplyToTheNextCopy) {
  std::string why;
  ASSERT_EQ(config::set("SLIMCUDA_STAGING_BUFFERS", "3", &why), Error::Ok) << why;
  ASSERT_EQ(config::set("SLIMCUDA_STAGING_FLAGS", "on", &why), Error::Ok) << why;
  ASSERT_EQ(config::set("SLIMCUDA_STAGING_THRESHOLD", "0", &why), Error::Ok) << why;
  EXPECT_EQ(staging_config().buffers, 3);
  EXPECT_TRUE(staging_config().stream_flags);
  EXPECT_EQ(staging_threshold(), 0u);
  EXPECT_FALSE(should_stage(size_t{1} << 30)) << "0 turns staging off";
  ASSERT_EQ(config::set("SLIMCUDA_STAGING_BUFFERS", "1000", &why), Error::Ok) << why;
  EXPECT_EQ(staging_config().buffers, kMaxStagingBuffers);
  for (const char* name : {"SLIMCUDA_STAGING_BUFFERS", "SLIMCUDA_STAGING_FLAGS", "SLIMCUDA_STAGING_THRESHOLD"}) {
    ASSERT_EQ(config::set(name, nullptr, &why), Error::Ok) << why;
  }
  EXPECT_EQ(staging_threshold(), config::get_integer(config::Key::StagingThreshold));
}

// --- staged_upload: many host pieces into one device range -------------------------------

// Bad piece lists are refused before anything touches CUDA (so this runs without a GPU).
TEST(StagedUpload, RefusesOverlappingOrOutOfRangePieces) {
  char host[64] = {};
  char* fake_device = host;  // never written: every call below fails its checks first
  const StreamContext ctx = StreamContext::unselected(0);
  UploadPiece overlap[2];
  overlap[0].dst_offset = 0, overlap[0].nbytes = 16, overlap[0].host = host;
  overlap[1].dst_offset = 8, overlap[1].nbytes = 16, overlap[1].host = host;
  EXPECT_EQ(staged_upload(fake_device, 64, overlap, 2, ctx, staging_config()), Error::InvalidArgument);
  UploadPiece past;
  past.dst_offset = 60, past.nbytes = 8, past.host = host;
  EXPECT_EQ(staged_upload(fake_device, 64, &past, 1, ctx, staging_config()), Error::InvalidArgument);
  UploadPiece wraps;
  wraps.dst_offset = UINT64_MAX - 2, wraps.nbytes = 8, wraps.host = host;
  EXPECT_EQ(staged_upload(fake_device, UINT64_MAX, &wraps, 1, ctx, staging_config()), Error::InvalidArgument);
  UploadPiece nothing;
  nothing.dst_offset = 0, nothing.nbytes = 8;
  EXPECT_EQ(staged_upload(fake_device, 64, &nothing, 1, ctx, staging_config()), Error::InvalidArgument);
  EXPECT_EQ(staged_upload(nullptr, 64, nullptr, 0, ctx, staging_config()), Error::InvalidArgument);
  EXPECT_EQ(staged_upload(nullptr, 0, nullptr, 0, ctx, staging_config()), Error::Ok);
}

struct Bytes {
  std::vector<uint8_t> v;
  int fail_at = -1;
  mutable std::atomic<int> reads{0};
};
Error read_bytes(const void* reader, uint64_t offset, size_t n, void* dst) noexcept {
  const Bytes* b = static_cast<const Bytes*>(reader);
  if (b->reads++ == b->fail_at) return set_last_error(Error::AccessFailed, "read failed on purpose");
  std::memcpy(dst, b->v.data() + offset, n);
  return Error::Ok;
}

// Pieces from memory and from a reader, small and spanning many chunks, with gaps between
// them: every piece lands, every gap is zero, for several pipeline shapes and streams.
TEST(StagedUpload, PiecesLandAndGapsAreZero) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  Bytes src;
  src.v.resize(size_t{3} << 20);
  for (size_t i = 0; i < src.v.size(); ++i) src.v[i] = static_cast<uint8_t>((i * 7 + 3) >> 2);
  // (dst_offset, nbytes, from the reader?) — the source offset is the dst offset.
  struct P {
    uint64_t at, n;
    bool read;
  };
  const std::vector<P> layout = {{0, 4, false},
                                 {256, 100, true},
                                 {512, 70000, false},
                                 {70656, 1, true},
                                 {70912, 1 << 20, true},
                                 {(1 << 20) + 80000, 300000, false},
                                 {(size_t{3} << 20) - 9, 9, false}};
  const uint64_t total = src.v.size();
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, total), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::vector<UploadPiece> pieces;
  for (const P& p : layout) {
    UploadPiece u;
    u.dst_offset = p.at, u.nbytes = p.n;
    if (p.read) {
      u.reader = &src, u.read = read_bytes, u.read_offset = p.at;
    } else {
      u.host = src.v.data() + p.at;
    }
    pieces.push_back(u);
  }
  for (const StagingConfig config : {StagingConfig{64 << 10, 2, 1}, StagingConfig{256 << 10, 6, 4}, staging_config()}) {
    for (int on_stream = 0; on_stream < 2; ++on_stream) {
      SCOPED_TRACE(::testing::Message() << "chunk " << config.chunk_bytes << " buffers " << config.buffers << " stream "
                                        << on_stream);
      ASSERT_EQ(cudaMemset(dev, 0xab, total), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const StreamContext ctx = on_stream ? on(stream) : kLegacy;
      ASSERT_EQ(staged_upload(dev, total, pieces.data(), pieces.size(), ctx, config), Error::Ok)
          << last_error_message();
      std::vector<uint8_t> back(total);
      ASSERT_EQ(cudaMemcpy(back.data(), dev, total, cudaMemcpyDeviceToHost), cudaSuccess);
      uint64_t pos = 0;
      for (const P& p : layout) {
        for (; pos < p.at; ++pos) ASSERT_EQ(back[pos], 0) << "gap byte " << pos;
        for (; pos < p.at + p.n; ++pos) ASSERT_EQ(back[pos], src.v[pos]) << "byte " << pos;
      }
      for (; pos < total; ++pos) ASSERT_EQ(back[pos], 0) << "tail byte " << pos;
    }
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
}

TEST(StagedUpload, ReaderErrorStopsTheUploadAndIsReported) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  Bytes src;
  src.v.resize(size_t{8} << 20);
  src.fail_at = 3;
  UploadPiece u;
  u.nbytes = src.v.size(), u.reader = &src, u.read = read_bytes;
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, src.v.size()), cudaSuccess);
  {
    const ErrorContext context("staged_upload_caller");  // as the entry layer opens one
    EXPECT_EQ(staged_upload(dev, src.v.size(), &u, 1, kLegacy, StagingConfig{1 << 20, 2, 2}), Error::AccessFailed);
  }
  EXPECT_STREQ(last_error_message(), "staged_upload_caller: read failed on purpose");
  EXPECT_EQ(src.reads.load(), 4) << "no read after the failed one";
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
}

}  // namespace
}  // namespace slimcuda
