// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/detail/block_pool.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

// At most this many cached blocks are examined per allocation before asking the device:
// bounds the time spent on blocks of busy streams.
constexpr int kMaxCandidates = 64;

// The stream of blocks whose stream was retired (or whose old work is known to be over):
// nobody's, reusable by any stream at once.
void* const kRetired = reinterpret_cast<void*>(~uintptr_t{0});

}  // namespace

BlockPool::BlockPool(std::unique_ptr<PoolBackend> backend) : backend_(std::move(backend)) {}

BlockPool::~BlockPool() {
  // Memory still in use is the caller's: its segments stay allocated (they go with the
  // process); only our bookkeeping for it is freed.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [stream, m] : markers_) {
    if (m.marker != nullptr) backend_->release_marker(m.marker);
  }
  release_free_segments();
  for (auto& [stream, f] : free_) {
    for (FreeSet& set : f.set) {
      for (Block* b : set) delete b;
    }
  }
  for (auto& [ptr, b] : in_use_) delete b;
}

void BlockPool::insert_free(Block* b) { free_[b->stream].set[b->small ? 1 : 0].insert(b); }

void BlockPool::erase_free(Block* b) {
  auto it = free_.find(b->stream);
  if (it == free_.end()) return;
  it->second.set[b->small ? 1 : 0].erase(b);
  if (it->second.empty()) free_.erase(it);  // streams come and go: keep only those with blocks
}

bool BlockPool::ready_for(Block* b, void* stream) {
  // Same stream: ordered after the earlier use. Retired: its work is known to be over.
  if (b->stream == stream || b->stream == kRetired) return true;
  auto it = markers_.find(b->stream);
  if (it == markers_.end()) return false;  // no marker was ever recorded for its stream
  StreamMarker& m = it->second;
  if (b->freed_at < m.done_before) return true;  // a completed marker covers it
  // Pending, whether it covers b or not: asked once per search. Never a new marker here:
  // b's stream may be gone (only an allocation on a stream records on it, mark_stream).
  if (m.marker == nullptr || m.checked == search_) return false;
  m.checked = search_;
  if (!backend_->done(m.marker)) return false;
  m.done_before = std::max(m.done_before, m.recorded_at);  // a synchronize may have gone further
  backend_->release_marker(m.marker);
  m.marker = nullptr;
  return b->freed_at < m.done_before;
}

void BlockPool::mark_stream(void* stream) {
  if (stream == kRetired) return;
  auto it = markers_.find(stream);
  if (it == markers_.end()) return;  // nothing freed on it yet
  StreamMarker& m = it->second;
  // Covered already (by a completed marker), or a pending one that must not be pushed back.
  if (m.last_free < m.done_before || m.marker != nullptr) return;
  m.marker = backend_->record(stream);  // `stream` is the one being served: alive
  m.recorded_at = ++sequence_;
  m.checked = 0;
}

BlockPool::Block* BlockPool::first_fit(FreeSet& set, size_t size, bool small, void* stream, int* examined) {
  Block key{nullptr, size, nullptr, small};
  for (auto it = set.lower_bound(&key); it != set.end() && *examined < kMaxCandidates; ++it, ++*examined) {
    Block* b = *it;
    // A large request takes a cached block only if it does not waste more than the block's
    // own size would allow for a split (keeps huge blocks for huge requests).
    if (!small && b->size >= size + kSmallLimit && b->size > 2 * size) break;
    if (ready_for(b, stream)) return b;
  }
  return nullptr;
}

BlockPool::Block* BlockPool::find_free(size_t size, bool small, void* stream) {
  ++search_;
  const int k = small ? 1 : 0;
  // The stream's own blocks, then nobody's: no device call for either.
  for (void* owner : {stream, kRetired}) {
    auto it = free_.find(owner);
    int examined = 0;
    if (it == free_.end()) continue;
    if (Block* b = first_fit(it->second.set[k], size, small, stream, &examined)) return b;
  }
  // Other streams' blocks whose markers say their work is done.
  int examined = 0;
  for (auto& [owner, f] : free_) {
    if (owner == stream || owner == kRetired) continue;
    if (Block* b = first_fit(f.set[k], size, small, stream, &examined)) return b;
    if (examined >= kMaxCandidates) break;
  }
  return nullptr;
}

BlockPool::Block* BlockPool::take(Block* b, size_t size, void* stream) {
  erase_free(b);
  const size_t rest = b->size - size;
  if (rest >= (b->small ? kRound : kSmallLimit)) {
    Block* r = new Block{b->ptr + size, rest, b->stream, b->small};
    r->freed_at = b->freed_at;
    // Taken by another stream, b's old work is done (ready_for said so): the remainder is
    // anyone's. On the same stream it stays that stream's, covered by its later markers.
    if (b->stream != stream) r->stream = kRetired;
    r->prev = b;
    r->next = b->next;
    if (b->next != nullptr) b->next->prev = r;
    b->next = r;
    b->size = size;
    insert_free(r);
  }
  b->in_use = true;
  b->stream = stream;
  in_use_[b->ptr] = b;
  return b;
}

Error BlockPool::allocate(size_t bytes, void* stream, void** out) noexcept {
  try {
    *out = nullptr;
    SLIMCUDA_CHECK_OR_RETURN(bytes > 0, Error::InvalidArgument, "zero-byte block");
    SLIMCUDA_CHECK_OR_RETURN(bytes <= (SIZE_MAX >> 2), Error::MemoryAllocationFailed, "%zu bytes", bytes);
    const size_t size = round_up(bytes, kRound);
    const bool small = size <= kSmallLimit;
    std::lock_guard<std::mutex> lock(mu_);
    mark_stream(stream);
    Block* b = find_free(size, small, stream);
    if (b != nullptr) {
      ++stats_.cache_hits;
    } else {
      ++stats_.cache_misses;
      const size_t segment = small ? kSmallSegment : round_up(size, kLargeRound);
      void* p = nullptr;
      Error e = backend_->allocate_segment(segment, &p);
      if (e == Error::MemoryAllocationFailed) {
        ++stats_.oom_retries;
        release_free_segments();
        e = backend_->allocate_segment(segment, &p);
      }
      SLIMCUDA_RETURN_IF_ERROR(e);
      // A new segment: no work has touched it, so what take() splits off is anyone's.
      b = new Block{static_cast<char*>(p), segment, kRetired, small};
      segments_.emplace(b->ptr, segment);
      ++stats_.segments;
      stats_.reserved_bytes += segment;
      stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
      insert_free(b);
    }
    b = take(b, size, stream);
    stats_.allocated_bytes += b->size;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    ++stats_.allocations;
    *out = b->ptr;
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

bool BlockPool::free_locked(void* ptr) {
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return false;
  Block* b = it->second;
  if (b->stream != kRetired) markers_.try_emplace(b->stream);  // may throw: before any change
  in_use_.erase(it);
  b->in_use = false;
  b->freed_at = ++sequence_;  // no device call here: markers are recorded when needed
  stats_.allocated_bytes -= b->size;
  ++stats_.frees;
  // Coalesce with free neighbours used on the same stream, or on none (one stream keeps the
  // merged block's reuse rule exact; the later free time covers both, and a retired part
  // that joins a stream's block is only held to a stricter rule).
  for (Block* n : {b->prev, b->next}) {
    if (n == nullptr || n->in_use) continue;
    if (n->stream != b->stream && n->stream != kRetired && b->stream != kRetired) continue;
    erase_free(n);
    Block* lo = n == b->prev ? n : b;
    Block* hi = n == b->prev ? b : n;
    lo->size += hi->size;
    lo->next = hi->next;
    if (hi->next != nullptr) hi->next->prev = lo;
    lo->freed_at = std::max(lo->freed_at, hi->freed_at);
    lo->stream = lo->stream == kRetired ? hi->stream : lo->stream;
    delete hi;
    b = lo;
  }
  if (auto m = markers_.find(b->stream); m != markers_.end()) m->second.last_free = b->freed_at;
  insert_free(b);
  return true;
}

Error BlockPool::free(void* ptr) noexcept {
  if (ptr == nullptr) return Error::Ok;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    SLIMCUDA_CHECK_OR_RETURN(free_locked(ptr), Error::InvalidArgument, "%p is not a block of this pool", ptr);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

bool BlockPool::free_if_owned(void* ptr) noexcept {
  if (ptr == nullptr) return false;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    return free_locked(ptr);
  } catch (const std::bad_alloc&) {
    // The block left in_use_ before the set insert failed: it is lost to the cache (its
    // segment stays reserved), never handed out twice.
    set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    return true;
  }
}

bool BlockPool::owns(void* ptr) const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_.count(ptr) != 0;
}

bool BlockPool::holds(const void* ptr) const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  const char* p = static_cast<const char*>(ptr);
  auto it = segments_.upper_bound(p);  // the first segment after p
  if (it == segments_.begin()) return false;
  --it;
  return p < it->first + it->second;
}

void BlockPool::release_free_segments() {
  if (!backend_->synchronize()) return;  // a capture is underway: nothing known to be done
  // Every queued use is done now: every free block is nobody's, and free neighbours merge.
  std::vector<Block*> all;
  for (auto& [stream, f] : free_) {
    for (FreeSet& set : f.set) all.insert(all.end(), set.begin(), set.end());
  }
  free_.clear();
  for (auto& [stream, m] : markers_) m.done_before = sequence_ + 1;  // every free so far is done
  std::set<Block*> gone;                                             // merged away
  for (Block* b : all) {
    if (gone.count(b) != 0) continue;
    if (b->prev != nullptr && !b->prev->in_use) continue;  // not the head of its run: merged below
    b->stream = kRetired;
    while (b->next != nullptr && !b->next->in_use) {
      Block* n = b->next;
      b->size += n->size;
      b->next = n->next;
      if (n->next != nullptr) n->next->prev = b;
      gone.insert(n);
      delete n;
    }
    if (b->prev == nullptr && b->next == nullptr) {  // a whole segment, unused
      backend_->free_segment(b->ptr);
      segments_.erase(b->ptr);
      stats_.reserved_bytes -= b->size;
      --stats_.segments;
      delete b;
    } else {
      insert_free(b);
    }
  }
}

void BlockPool::retire_stream(void* stream) noexcept {
  if (stream == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto own = free_.find(stream);
  bool any = own != free_.end();
  for (auto& [ptr, b] : in_use_) any = any || b->stream == stream;
  if (any) {
    // The stream's queued work must be over before its blocks forget it: blocks still in
    // use become nobody's too, reusable by anyone once freed (the stream will be gone).
    backend_->synchronize_stream(stream);
    if (own != free_.end()) {
      std::vector<Block*> blocks;
      for (FreeSet& set : own->second.set) blocks.insert(blocks.end(), set.begin(), set.end());
      free_.erase(own);
      for (Block* b : blocks) {
        b->stream = kRetired;
        insert_free(b);
      }
    }
    for (auto& [ptr, b] : in_use_) {
      if (b->stream == stream) b->stream = kRetired;
    }
  }
  auto it = markers_.find(stream);
  if (it != markers_.end()) {
    if (it->second.marker != nullptr) backend_->release_marker(it->second.marker);
    markers_.erase(it);
  }
}

void BlockPool::empty_cache() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  release_free_segments();
}

PoolStats BlockPool::stats() const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace slimcuda
