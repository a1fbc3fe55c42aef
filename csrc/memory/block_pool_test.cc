// SPDX-License-Identifier: Apache-2.0
// BlockPool's caching rules with a fake device (host memory, streams whose completion the
// test controls): reuse, cross-stream safety, split and coalesce, out-of-memory retry,
// statistics. Runs without a GPU; the CUDA-backed pool is covered by allocator_test.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/memory/detail/block_pool.h"

namespace slimcuda {
namespace {

// A fake device: segments are malloc'ed (up to a capacity); a stream is an id whose work
// "completes" when the test says so.
struct FakeDevice {
  // Segments a test leaves in use go with the "device", as real ones go with the process.
  ~FakeDevice() {
    for (auto& [p, n] : segments) std::free(p);
  }
  size_t capacity = SIZE_MAX, used = 0;
  std::map<void*, size_t> segments;
  std::map<void*, int> enqueued, completed;  // per stream: work recorded, work done
  int synchronizes = 0;                      // device-wide
  std::map<void*, int> stream_synchronizes;
  bool capturing = false;           // a graph capture underway: no device-wide synchronize
  int records = 0, queries = 0;     // markers recorded, done() calls
  std::map<void*, int> records_on;  // per stream: markers recorded on it
  std::mutex mu;
};

struct Marker {
  void* stream;
  int upto;
};

class FakeBackend final : public PoolBackend {
 public:
  explicit FakeBackend(FakeDevice* d) : d_(d) {}
  Error allocate_segment(size_t bytes, void** out) noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    if (d_->used + bytes > d_->capacity) return Error::MemoryAllocationFailed;
    *out = std::aligned_alloc(512, bytes);
    d_->segments[*out] = bytes;
    d_->used += bytes;
    return Error::Ok;
  }
  void free_segment(void* ptr) noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    d_->used -= d_->segments.at(ptr);
    d_->segments.erase(ptr);
    std::free(ptr);
  }
  void* record(void* stream) noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    ++d_->records;
    ++d_->records_on[stream];
    return new Marker{stream, d_->enqueued[stream]};
  }
  bool done(void* marker) noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    ++d_->queries;
    auto* m = static_cast<Marker*>(marker);
    return d_->completed[m->stream] >= m->upto;
  }
  void release_marker(void* marker) noexcept override { delete static_cast<Marker*>(marker); }
  bool synchronize() noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    if (d_->capturing) return false;
    ++d_->synchronizes;
    for (auto& [s, n] : d_->enqueued) d_->completed[s] = n;
    return true;
  }
  void synchronize_stream(void* stream) noexcept override {
    std::lock_guard<std::mutex> lock(d_->mu);
    ++d_->stream_synchronizes[stream];
    d_->completed[stream] = d_->enqueued[stream];
  }

 private:
  FakeDevice* d_;
};

void* const kStreamA = reinterpret_cast<void*>(0xA);
void* const kStreamB = reinterpret_cast<void*>(0xB);

struct PoolTest : ::testing::Test {
  FakeDevice device;
  BlockPool pool{std::make_unique<FakeBackend>(&device)};
  // Work "running" on a stream: enqueued but not completed.
  void busy(void* s) { device.enqueued[s] = device.completed[s] + 1; }
  void finish(void* s) { device.completed[s] = device.enqueued[s]; }
  void* alloc(size_t n, void* s) {
    void* p = nullptr;
    EXPECT_EQ(pool.allocate(n, s, &p), Error::Ok);
    return p;
  }
};

TEST_F(PoolTest, FreedBlockIsReusedOnItsStream) {
  void* a = alloc(1000, kStreamA);
  ASSERT_EQ(pool.free(a), Error::Ok);
  busy(kStreamA);  // the freed block may still be in use by queued work on A: fine for A
  EXPECT_EQ(alloc(1000, kStreamA), a);
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.cache_misses, 1u);
  EXPECT_EQ(s.segments, 1u);
  EXPECT_EQ(s.allocated_bytes, 1024u);  // rounded to 512-byte units
}

TEST_F(PoolTest, OtherStreamWaitsUntilTheFirstIsDone) {
  void* a = alloc(1 << 20, kStreamA);  // one 2 MiB small segment, both halves used on A
  void* a2 = alloc(1 << 20, kStreamA);
  busy(kStreamA);  // work queued on A uses them, then they are freed
  ASSERT_EQ(pool.free(a), Error::Ok);
  ASSERT_EQ(pool.free(a2), Error::Ok);      // coalesced: a free 2 MiB block last used on A
  void* large = alloc(4u << 20, kStreamA);  // A's next call: its marker covers the 2 MiB block
  void* b = alloc(1 << 20, kStreamB);
  void* b2 = alloc(1 << 20, kStreamB);
  EXPECT_NE(b, a) << "a block still in use on A was handed to B";
  EXPECT_NE(b2, a);
  EXPECT_NE(b2, a2);
  EXPECT_EQ(pool.stats().segments, 3u);
  finish(kStreamA);
  void* b3 = alloc(1 << 20, kStreamB);
  EXPECT_EQ(b3, a) << "A is done: its cached memory serves B";
  EXPECT_EQ(pool.stats().segments, 3u);
  for (void* p : {b, b2, b3, large}) ASSERT_EQ(pool.free(p), Error::Ok);
}

// The hot path (alloc + free on one stream) makes no device call; a marker is recorded only
// on the stream an allocation is for, and one marker serves every block freed before it.
TEST_F(PoolTest, MarkersAreRecordedOnlyOnTheStreamBeingServed) {
  const size_t n = 4u << 20;  // whole large segments: each free leaves its own block
  std::vector<void*> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(alloc(n, kStreamA));
  busy(kStreamA);
  for (void* p : blocks) ASSERT_EQ(pool.free(p), Error::Ok);
  EXPECT_EQ(device.records, 0) << "a free recorded a marker";

  void* b0 = alloc(n, kStreamB);  // nothing says A's work is done, and B must not ask A
  EXPECT_EQ(std::count(blocks.begin(), blocks.end(), b0), 0) << "B got a block A's work still uses";
  EXPECT_EQ(device.records_on[kStreamA], 0) << "B's allocation recorded on A";
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pool.free(alloc(1000, kStreamA)), Error::Ok);
  EXPECT_EQ(device.records_on[kStreamA], 1) << "A's calls: one marker for all its frees, then none";
  void* b = alloc(n, kStreamB);  // A still busy: the pending marker is asked, not re-recorded
  EXPECT_EQ(std::count(blocks.begin(), blocks.end(), b), 0);
  EXPECT_GT(device.queries, 0);
  finish(kStreamA);
  std::set<void*> reused;
  for (int i = 0; i < 3; ++i) reused.insert(alloc(n, kStreamB));
  EXPECT_EQ(reused, std::set<void*>(blocks.begin(), blocks.end())) << "A is done: all its blocks serve B";
  EXPECT_EQ(device.records, 1) << "one marker served all three blocks";
  for (void* p : reused) ASSERT_EQ(pool.free(p), Error::Ok);
  ASSERT_EQ(pool.free(b0), Error::Ok);
  ASSERT_EQ(pool.free(b), Error::Ok);
}

// A stream that never goes idle: blocks it freed before the pending marker come free once
// that marker completes, however much work (and however many newer frees) follow; the
// newer blocks get the next marker, at the stream's next call.
TEST_F(PoolTest, APendingMarkerIsNotPushedBackByNewerFrees) {
  const size_t n = 4u << 20;
  void* old_block = alloc(n, kStreamA);
  void* new_block = alloc(n, kStreamA);
  device.enqueued[kStreamA] = 1;  // work 1 uses old_block
  ASSERT_EQ(pool.free(old_block), Error::Ok);
  void* small = alloc(1000, kStreamA);  // A's call: marker at work 1, pending
  void* b = alloc(n, kStreamB);
  EXPECT_NE(b, old_block);
  device.enqueued[kStreamA] = 2;  // work 2 uses new_block, then it is freed
  ASSERT_EQ(pool.free(new_block), Error::Ok);
  ASSERT_EQ(pool.free(small), Error::Ok);
  small = alloc(1000, kStreamA);  // the pending marker stays at work 1
  void* b2 = alloc(n, kStreamB);
  EXPECT_NE(b2, old_block);
  EXPECT_NE(b2, new_block);
  device.completed[kStreamA] = 1;  // work 1 done, work 2 still running
  void* b3 = alloc(n, kStreamB);
  EXPECT_EQ(b3, old_block) << "the first marker was replaced by a later one";
  void* b4 = alloc(n, kStreamB);  // new_block: not covered by any marker yet
  EXPECT_NE(b4, new_block);
  EXPECT_EQ(device.records, 1);
  ASSERT_EQ(pool.free(small), Error::Ok);
  small = alloc(1000, kStreamA);  // A's next call: a marker at work 2
  EXPECT_EQ(device.records, 2);
  void* b5 = alloc(n, kStreamB);
  EXPECT_NE(b5, new_block) << "work 2 is still running";
  finish(kStreamA);
  void* b6 = alloc(n, kStreamB);
  EXPECT_EQ(b6, new_block);
  for (void* p : {b, b2, b3, b4, b5, b6, small}) ASSERT_EQ(pool.free(p), Error::Ok);
}

// A caller may destroy its stream at any time after its last call, without telling the
// pool: nothing the pool does later touches that stream (on the H200 a marker recorded on
// a destroyed stream crashed the process inside the driver, 2026-12-01). Its blocks serve
// others once a marker from its own calls, or a device-wide synchronize, says they are done.
TEST_F(PoolTest, AStreamIsNeverTouchedOutsideItsOwnCalls) {
  const size_t n = 4u << 20;
  void* a = alloc(n, kStreamA);
  void* small = alloc(1000, kStreamA);
  busy(kStreamA);
  ASSERT_EQ(pool.free(a), Error::Ok);
  ASSERT_EQ(pool.free(small), Error::Ok);  // A's last call; then "cudaStreamDestroy(A)"
  const int on_a = device.records_on[kStreamA];
  void* b = alloc(n, kStreamB);  // nothing from A's own calls says its work is done
  EXPECT_NE(b, a);
  for (size_t k : {size_t{512}, size_t{1} << 20, n}) ASSERT_EQ(pool.free(alloc(k, kStreamB)), Error::Ok);
  EXPECT_EQ(device.records_on[kStreamA], on_a) << "a marker was recorded on A after its last call";
  device.capacity = device.used;  // out of memory: the retry synchronizes and releases A's cache
  void* c = alloc(2 * n, kStreamB);
  EXPECT_NE(c, nullptr);
  EXPECT_EQ(pool.stats().oom_retries, 1u);
  EXPECT_EQ(device.records_on[kStreamA], on_a);
  ASSERT_EQ(pool.free(b), Error::Ok);
  ASSERT_EQ(pool.free(c), Error::Ok);
}

// Many streams, each reusing its own blocks: after the first round no device call at all
// (before, every search asked the other streams' markers, under the pool's lock).
TEST_F(PoolTest, OwnBlocksComeFirstWithoutDeviceCalls) {
  std::vector<void*> streams;
  for (int s = 0; s < 8; ++s) streams.push_back(reinterpret_cast<void*>(static_cast<uintptr_t>(0x200 + s)));
  auto round = [&] {
    for (void* s : streams) {
      void* x = alloc(4096, s);
      void* y = alloc(70000, s);
      ASSERT_EQ(pool.free(x), Error::Ok);
      ASSERT_EQ(pool.free(y), Error::Ok);
    }
  };
  round();
  round();  // each stream's first marker
  const int records = device.records, queries = device.queries;
  const uint64_t segments = pool.stats().segments;
  for (int i = 0; i < 100; ++i) round();
  EXPECT_EQ(device.records, records);
  EXPECT_EQ(device.queries, queries);
  EXPECT_EQ(pool.stats().segments, segments);
}

// holds(): any address inside the pool's segments, in use or cached, so a double free can
// be told from foreign memory; released segments are no longer held.
TEST_F(PoolTest, HoldsCoversCachedAndInteriorAddresses) {
  void* p = alloc(4096, kStreamA);
  EXPECT_TRUE(pool.holds(p));
  EXPECT_TRUE(pool.holds(static_cast<char*>(p) + 100));
  EXPECT_TRUE(pool.holds(static_cast<char*>(p) + BlockPool::kSmallSegment - 1));
  EXPECT_FALSE(pool.holds(static_cast<char*>(p) + BlockPool::kSmallSegment));
  EXPECT_FALSE(pool.free_if_owned(static_cast<char*>(p) + 512)) << "an interior pointer is not a block";
  int local = 0;
  EXPECT_FALSE(pool.holds(&local));
  EXPECT_FALSE(pool.free_if_owned(&local));
  EXPECT_TRUE(pool.free_if_owned(p));
  EXPECT_FALSE(pool.free_if_owned(p)) << "a double free was accepted";
  EXPECT_TRUE(pool.holds(p)) << "cached memory is still the pool's";
  pool.empty_cache();
  EXPECT_FALSE(pool.holds(p));
}

TEST_F(PoolTest, SplitAndCoalesce) {
  void* x = alloc(4096, kStreamA);
  void* y = alloc(4096, kStreamA);
  void* z = alloc(4096, kStreamA);
  EXPECT_EQ(static_cast<char*>(y) - static_cast<char*>(x), 4096);
  EXPECT_EQ(static_cast<char*>(z) - static_cast<char*>(y), 4096);
  EXPECT_EQ(pool.stats().segments, 1u);
  ASSERT_EQ(pool.free(y), Error::Ok);
  ASSERT_EQ(pool.free(x), Error::Ok);
  ASSERT_EQ(pool.free(z), Error::Ok);
  // Coalesced back into the whole segment: one 2 MiB request fits without a new segment.
  void* big = alloc(BlockPool::kSmallLimit, kStreamA);
  EXPECT_EQ(big, x);
  EXPECT_EQ(pool.stats().segments, 1u);
  ASSERT_EQ(pool.free(big), Error::Ok);
}

TEST_F(PoolTest, StatsReturnToZeroAfterEverythingIsFreed) {
  std::vector<void*> blocks;
  for (size_t n : {1u, 511u, 513u, 70000u, 1u << 20, (1u << 20) + 1, 5u << 20}) blocks.push_back(alloc(n, kStreamA));
  EXPECT_GT(pool.stats().allocated_bytes, 0u);
  for (void* p : blocks) ASSERT_EQ(pool.free(p), Error::Ok);
  PoolStats s = pool.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.allocations, s.frees);
  EXPECT_GT(s.reserved_bytes, 0u) << "freed memory stays cached";
  pool.empty_cache();
  s = pool.stats();
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.segments, 0u);
  EXPECT_EQ(device.used, 0u);
  EXPECT_GE(s.peak_allocated_bytes, (5u << 20));
}

TEST_F(PoolTest, LargeRequestsRoundToTwoMiBAndSplitBigRemainders) {
  void* p = alloc((3u << 20) + 100, kStreamA);  // 4 MiB segment; 1 MiB - 100 left: not split
  EXPECT_EQ(pool.stats().reserved_bytes, 4u << 20);
  ASSERT_EQ(pool.free(p), Error::Ok);
  void* q = alloc(2u << 20, kStreamA);  // reuses the 4 MiB segment, splits off 2 MiB
  EXPECT_EQ(q, p);
  void* r = alloc(2u << 20, kStreamA);
  EXPECT_EQ(static_cast<char*>(r), static_cast<char*>(p) + (2u << 20));
  EXPECT_EQ(pool.stats().segments, 1u);
  ASSERT_EQ(pool.free(q), Error::Ok);
  ASSERT_EQ(pool.free(r), Error::Ok);
}

TEST_F(PoolTest, OutOfMemoryReleasesTheCacheAndRetries) {
  device.capacity = 8u << 20;
  void* a = alloc(6u << 20, kStreamA);
  busy(kStreamA);                       // A's queued work still uses it: B cannot take it yet
  ASSERT_EQ(pool.free(a), Error::Ok);   // cached: the device is still 6 MiB full
  void* b = alloc(4u << 20, kStreamB);  // a new segment does not fit: release the cache, retry
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(pool.stats().oom_retries, 1u);
  EXPECT_GE(device.synchronizes, 1);
  void* c = nullptr;
  EXPECT_EQ(pool.allocate(16u << 20, kStreamA, &c), Error::MemoryAllocationFailed);
  EXPECT_EQ(c, nullptr);
  ASSERT_EQ(pool.free(b), Error::Ok);
}

// Blocks of a stream about to be destroyed stop belonging to it: a new stream that reuses
// its address must still wait for the old work.
TEST_F(PoolTest, RetiredStreamBlocksWaitForTheirMarkers) {
  const size_t n = 4u << 20;  // whole large segments: no remainders to pick instead
  void* a = alloc(n, kStreamA);
  void* kept = alloc(n, kStreamA);  // still in use when A goes
  busy(kStreamA);
  ASSERT_EQ(pool.free(a), Error::Ok);
  const int syncs = device.synchronizes;
  busy(kStreamB);                // B's work is not waited for
  pool.retire_stream(kStreamA);  // "destroyed": waits for A alone, then forgets it
  EXPECT_EQ(device.stream_synchronizes[kStreamA], 1);
  EXPECT_EQ(device.synchronizes, syncs) << "retiring one stream waited for the whole device";
  finish(kStreamB);
  void* later = alloc(n, kStreamB);
  EXPECT_EQ(later, a) << "A's old work is done: its block serves anyone";
  ASSERT_EQ(pool.free(kept), Error::Ok);  // freed after its stream is gone: no marker on it
  void* last = alloc(n, kStreamB);
  EXPECT_EQ(last, kept);
  ASSERT_EQ(pool.free(later), Error::Ok);
  ASSERT_EQ(pool.free(last), Error::Ok);
  pool.retire_stream(kStreamB);
  pool.retire_stream(nullptr);  // the legacy default stream is never retired
}

// While a graph capture is underway a device-wide synchronize would break it: empty_cache
// and the out-of-memory retry release nothing then (the allocation fails cleanly), and
// work afterwards as before.
TEST_F(PoolTest, NoDeviceWideSynchronizeDuringACapture) {
  device.capacity = 8u << 20;
  void* a = alloc(6u << 20, kStreamA);
  ASSERT_EQ(pool.free(a), Error::Ok);
  device.capturing = true;
  pool.empty_cache();
  EXPECT_EQ(pool.stats().segments, 1u) << "a segment was released without a synchronize";
  void* b = nullptr;
  EXPECT_EQ(pool.allocate(4u << 20, kStreamB, &b), Error::MemoryAllocationFailed);
  EXPECT_EQ(device.synchronizes, 0);
  device.capturing = false;
  b = alloc(4u << 20, kStreamB);  // now the retry synchronizes and releases A's segment
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(device.synchronizes, 1);
  ASSERT_EQ(pool.free(b), Error::Ok);
}

// empty_cache merges neighbours freed on different streams, so whole segments go back.
TEST_F(PoolTest, EmptyCacheReleasesSegmentsSplitAcrossStreams) {
  void* x = alloc(4096, kStreamA);
  void* y = alloc(4096, kStreamB);  // B reuses the rest of A's segment (A is idle)
  EXPECT_EQ(pool.stats().segments, 1u);
  ASSERT_EQ(pool.free(x), Error::Ok);
  ASSERT_EQ(pool.free(y), Error::Ok);
  pool.empty_cache();
  EXPECT_EQ(pool.stats().segments, 0u);
  EXPECT_EQ(pool.stats().reserved_bytes, 0u);
  EXPECT_EQ(device.used, 0u);
}

// Runs of several free neighbours (three streams, one in use between two runs) merge and
// release without touching a block merged away (ASan in CI watches this).
TEST_F(PoolTest, EmptyCacheMergesLongRunsAroundABlockInUse) {
  void* const kStreamC = reinterpret_cast<void*>(0xC);
  std::vector<void*> blocks;
  for (void* s : {kStreamA, kStreamB, kStreamC, kStreamA, kStreamB, kStreamC, kStreamA})
    blocks.push_back(alloc(4096, s));
  EXPECT_EQ(pool.stats().segments, 1u);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i != 3) {
      ASSERT_EQ(pool.free(blocks[i]), Error::Ok);
    }
  }
  pool.empty_cache();  // block 3 in use: the segment stays, both runs beside it merge
  EXPECT_EQ(pool.stats().segments, 1u);
  EXPECT_EQ(alloc(3 * 4096, kStreamB), blocks[0]) << "the merged run before block 3 was not reused";
  EXPECT_EQ(pool.free(blocks[0]), Error::Ok);
  EXPECT_EQ(pool.free(blocks[3]), Error::Ok);
  pool.empty_cache();
  EXPECT_EQ(pool.stats().segments, 0u);
  EXPECT_EQ(device.used, 0u);
}

TEST_F(PoolTest, BadInput) {
  int local = 0;
  EXPECT_EQ(pool.free(&local), Error::InvalidArgument);
  EXPECT_EQ(pool.free(nullptr), Error::Ok);
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(pool.allocate(0, kStreamA, &p), Error::InvalidArgument);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(pool.allocate(SIZE_MAX, kStreamA, &p), Error::MemoryAllocationFailed);
  void* q = alloc(10, kStreamA);
  EXPECT_TRUE(pool.owns(q));
  ASSERT_EQ(pool.free(q), Error::Ok);
  EXPECT_FALSE(pool.owns(q));
  EXPECT_EQ(pool.free(q), Error::InvalidArgument) << "double free is refused";
}

TEST_F(PoolTest, ThreadsOnTheirOwnStreams) {
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      void* stream = reinterpret_cast<void*>(static_cast<uintptr_t>(0x100 + t));
      std::set<void*> mine;
      for (int i = 0; i < 500; ++i) {
        void* p = nullptr;
        if (pool.allocate(64 + 512 * (i % 7), stream, &p) != Error::Ok || !mine.insert(p).second) ++errors;
        if (i % 3 == 2) {
          for (void* q : mine) errors += pool.free(q) != Error::Ok;
          mine.clear();
        }
      }
      for (void* q : mine) errors += pool.free(q) != Error::Ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(pool.stats().allocated_bytes, 0u);
}

}  // namespace
}  // namespace slimcuda
