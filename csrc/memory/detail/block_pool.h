// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "slimcuda/error.h"

namespace slimcuda {

/// What a BlockPool needs from the device: raw segments and stream-ordered completion
/// markers. The CUDA backend uses cudaMalloc/cudaFree and events; tests use a fake.
class PoolBackend {
 public:
  virtual ~PoolBackend() = default;
  /// A new segment of `bytes`; MemoryAllocationFailed when the device is out of memory.
  virtual Error allocate_segment(size_t bytes, void** out) noexcept = 0;
  virtual void free_segment(void* ptr) noexcept = 0;
  /// Marks "all work enqueued on `stream` so far"; returns an opaque marker.
  virtual void* record(void* stream) noexcept = 0;
  /// Whether the work before `marker` has finished.
  virtual bool done(void* marker) noexcept = 0;
  virtual void release_marker(void* marker) noexcept = 0;
  /// Blocks until every stream's work is done (before releasing memory to the device).
  /// false: not now (a CUDA graph capture is underway, which a device-wide synchronize
  /// would break): nothing is known to be done, and nothing may be released.
  virtual bool synchronize() noexcept = 0;
  /// Blocks until the work queued on `stream` is done (before its blocks forget it).
  virtual void synchronize_stream(void* stream) noexcept = 0;
};

/// Statistics of a pool, in bytes and counts. "Allocated": handed out and not yet freed;
/// "reserved": held from the device (allocated + cached).
struct PoolStats {
  uint64_t allocated_bytes = 0, peak_allocated_bytes = 0;
  uint64_t reserved_bytes = 0, peak_reserved_bytes = 0;
  uint64_t allocations = 0, frees = 0;  // counts of blocks handed out / returned
  uint64_t cache_hits = 0, cache_misses = 0;
  uint64_t segments = 0;     // live segments held from the device
  uint64_t oom_retries = 0;  // device allocations retried after releasing the cache
};

/// A caching allocator for one device: segments from the backend are split into blocks,
/// handed out, cached when freed, coalesced with free neighbours, and reused.
///
/// Stream-ordered reuse: a block remembers the stream it was last used on, and each stream
/// has its own free blocks. An allocation looks first among its own stream's (reusable at
/// once: later work there is ordered after the earlier use; no device call), then among
/// blocks nobody's work can still touch (never used, or their stream retired), and only then
/// among other streams' blocks, each once a marker says the work queued on its stream before
/// its free is done. Markers are recorded only on the stream an allocation is for: that
/// stream is alive (the caller is using it), so a caller may destroy a stream at any time
/// after its last call without the pool ever touching the stream again. The allocation on S
/// records S's marker when S has frees no marker covers and no marker is pending: one marker
/// covers every block freed on S before it, a pending marker is never replaced by a newer one
/// (that would push back the blocks it covers), and the hot path (alloc + free on one stream)
/// makes no device call once the marker is out. Blocks freed after a stream's last marker
/// serve other streams only after a device-wide synchronize (the out-of-memory retry,
/// empty_cache) or retire_stream. Before destroying a stream whose address a later stream
/// could get, call retire_stream (slimcuda does for the streams it owns): the new stream
/// must not inherit blocks the old one's queued work may still use.
/// Thread-safe.
///
/// Sizes: requests round up to 512 bytes. Requests up to 1 MiB come from 2 MiB segments
/// shared by many blocks; larger ones get their own segment rounded up to 2 MiB, and are
/// split only when the remainder is at least 1 MiB.
class BlockPool {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallLimit = size_t{1} << 20;
  static constexpr size_t kSmallSegment = size_t{2} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  explicit BlockPool(std::unique_ptr<PoolBackend> backend);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  /// A block of at least `bytes` (> 0) for use on `stream`, 512-byte aligned (256 from the
  /// backend's segments, kept by 512-byte splitting). Out of device memory: releases the
  /// cached free segments and tries once more; then MemoryAllocationFailed.
  [[nodiscard]] Error allocate(size_t bytes, void* stream, void** out) noexcept;
  /// Returns a block from allocate(); nullptr is ignored; unknown pointers give
  /// InvalidArgument (nothing is freed).
  [[nodiscard]] Error free(void* ptr) noexcept;
  /// free() for a pointer that may be another pool's: false (and no error recorded) when
  /// `ptr` is not a block of this pool. One lock, where owns() + free() take two.
  [[nodiscard]] bool free_if_owned(void* ptr) noexcept;
  /// Whether `ptr` is a block handed out by this pool.
  [[nodiscard]] bool owns(void* ptr) const noexcept;
  /// Whether `ptr` points into memory the pool holds from the device (a block in use, a
  /// cached one, or inside either): a pointer freed twice, or never handed out, that must
  /// not reach the device's own free.
  [[nodiscard]] bool holds(const void* ptr) const noexcept;
  /// Releases every fully free segment to the backend (waiting for all streams first; not
  /// while a graph capture is underway, see PoolBackend::synchronize).
  void empty_cache() noexcept;
  /// `stream` is about to be destroyed: waits for that stream if the pool has blocks of it
  /// (only it: a device-wide wait would break another thread's graph capture), then its
  /// blocks, cached or in use, stop being "its" (a new stream could reuse the address) and
  /// serve any stream.
  void retire_stream(void* stream) noexcept;
  [[nodiscard]] PoolStats stats() const noexcept;

 private:
  struct Block {
    char* ptr;
    size_t size;
    void* stream;  // last stream it was used on (kRetired: nobody's work can touch it)
    bool small;
    bool in_use = false;
    uint64_t freed_at = 0;  // sequence number of its last free
    Block* prev = nullptr;  // neighbours within the segment
    Block* next = nullptr;
  };
  // Per stream: blocks freed before `done_before` (a sequence number) are known to be
  // done; `marker`, when set, is pending and covers blocks freed before `recorded_at`.
  // `checked`: the search in which the pending marker was last asked (once per search).
  // `last_free`: the stream's newest free, to know whether a new marker would cover more.
  struct StreamMarker {
    void* marker = nullptr;
    uint64_t recorded_at = 0;
    uint64_t done_before = 0;
    uint64_t checked = 0;
    uint64_t last_free = 0;
  };
  struct Order {
    bool operator()(const Block* a, const Block* b) const {
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  using FreeSet = std::set<Block*, Order>;
  struct StreamFree {
    FreeSet set[2];  // [small?]
    bool empty() const { return set[0].empty() && set[1].empty(); }
  };

  Block* find_free(size_t size, bool small, void* stream);
  // The first block of `set` that fits `size` and, for another stream's blocks, is done
  // (ready_for); `*examined` counts the candidates looked at, across calls of one search.
  Block* first_fit(FreeSet& set, size_t size, bool small, void* stream, int* examined);
  bool ready_for(Block* b, void* stream);
  // An allocation for `stream`: its marker, if frees on it are not yet covered by one.
  void mark_stream(void* stream);
  Block* take(Block* b, size_t size, void* stream);
  void insert_free(Block* b);
  void erase_free(Block* b);
  // free()'s body, under the lock; false when `ptr` is not in use here.
  bool free_locked(void* ptr);
  void release_free_segments();

  std::unique_ptr<PoolBackend> backend_;
  mutable std::mutex mu_;
  std::unordered_map<void*, StreamFree> free_;       // stream -> its free blocks
  std::unordered_map<void*, Block*> in_use_;         // ptr -> block
  std::unordered_map<void*, StreamMarker> markers_;  // stream -> its markers
  std::map<const char*, size_t> segments_;           // base -> bytes, for holds()
  uint64_t sequence_ = 0;
  uint64_t search_ = 0;  // find_free calls, for StreamMarker::checked
  PoolStats stats_;
};

}  // namespace slimcuda
