// SPDX-License-Identifier: Apache-2.0
#include "csrc/pool/block_pool.h"

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
  for (FreeSet& set : free_) {
    for (Block* b : set) delete b;
  }
  for (auto& [ptr, b] : in_use_) delete b;
}

bool BlockPool::ready_for(Block* b, void* stream) {
  // Same stream: ordered after the earlier use. Retired: its work is known to be over.
  if (b->stream == stream || b->stream == kRetired) return true;
  StreamMarker& m = markers_[b->stream];
  if (b->freed_at < m.done_before) return true;  // a completed marker covers it
  auto settle = [&] {                            // the marker completed: what it covers is done, the marker goes back
    m.done_before = m.recorded_at;
    backend_->release_marker(m.marker);
    m.marker = nullptr;
  };
  if (m.marker != nullptr) {
    // Pending, whether it covers b or not: b waits, and the marker is not replaced by a
    // newer one (that would push back the blocks it covers). Asked once per search.
    if (m.checked == search_) return false;
    m.checked = search_;
    if (!backend_->done(m.marker)) return false;
    settle();
    if (b->freed_at < m.done_before) return true;
  }
  // Freed after every marker so far: record one now (b's work was enqueued before).
  m.marker = backend_->record(b->stream);
  m.recorded_at = ++sequence_;
  m.checked = search_;
  if (m.marker == nullptr || !backend_->done(m.marker)) return false;  // no marker: not this time
  settle();
  return true;
}

BlockPool::Block* BlockPool::find_free(size_t size, bool small, void* stream) {
  ++search_;
  FreeSet& set = free_[small ? 1 : 0];
  Block key{nullptr, size, nullptr, small};
  int examined = 0;
  for (auto it = set.lower_bound(&key); it != set.end() && examined < kMaxCandidates; ++it, ++examined) {
    Block* b = *it;
    // A large request takes a cached block only if it does not waste more than the block's
    // own size would allow for a split (keeps huge blocks for huge requests).
    if (!small && b->size >= size + kSmallLimit && b->size > 2 * size) break;
    if (ready_for(b, stream)) return b;
  }
  return nullptr;
}

BlockPool::Block* BlockPool::take(Block* b, size_t size, void* stream) {
  free_[b->small ? 1 : 0].erase(b);
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
    free_[r->small ? 1 : 0].insert(r);
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
      b = new Block{static_cast<char*>(p), segment, stream, small};
      segments_.emplace(b->ptr, segment);
      ++stats_.segments;
      stats_.reserved_bytes += segment;
      stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
      free_[small ? 1 : 0].insert(b);
    }
    b = take(b, size, stream);
    stats_.allocated_bytes += b->size;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    ++stats_.allocations;
    *out = b->ptr;
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, __func__, "out of host memory");
  }
}

bool BlockPool::free_locked(void* ptr) {
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return false;
  Block* b = it->second;
  in_use_.erase(it);
  b->in_use = false;
  b->freed_at = ++sequence_;  // no device call here: markers are recorded when needed
  stats_.allocated_bytes -= b->size;
  ++stats_.frees;
  // Coalesce with free neighbours used on the same stream (one stream keeps the merged
  // block's reuse rule exact; the later free time covers both).
  for (Block* n : {b->prev, b->next}) {
    if (n == nullptr || n->in_use || n->stream != b->stream) continue;
    free_[n->small ? 1 : 0].erase(n);
    Block* lo = n == b->prev ? n : b;
    Block* hi = n == b->prev ? b : n;
    lo->size += hi->size;
    lo->next = hi->next;
    if (hi->next != nullptr) hi->next->prev = lo;
    lo->freed_at = std::max(lo->freed_at, hi->freed_at);
    delete hi;
    b = lo;
  }
  free_[b->small ? 1 : 0].insert(b);
  return true;
}

Error BlockPool::free(void* ptr) noexcept {
  if (ptr == nullptr) return Error::Ok;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    SLIMCUDA_CHECK_OR_RETURN(free_locked(ptr), Error::InvalidArgument, "%p is not a block of this pool", ptr);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, __func__, "out of host memory");
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
    set_last_error(Error::MemoryAllocationFailed, __func__, "out of host memory");
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
  backend_->synchronize();
  // Every queued use is done now: free neighbours merge whatever their streams.
  for (FreeSet& set : free_) {
    // Merge from the first block of each run of free neighbours only: the blocks after it
    // are deleted while merging, and must not be looked at again.
    std::vector<Block*> heads;
    for (Block* b : set) {
      if (b->prev == nullptr || b->prev->in_use) heads.push_back(b);
    }
    for (Block* b : heads) {
      b->stream = kRetired;
      while (b->next != nullptr && !b->next->in_use) {
        Block* n = b->next;
        set.erase(n);
        set.erase(b);
        b->size += n->size;
        b->next = n->next;
        if (n->next != nullptr) n->next->prev = b;
        delete n;
        set.insert(b);
      }
    }
  }
  for (FreeSet& set : free_) {
    for (auto it = set.begin(); it != set.end();) {
      Block* b = *it;
      if (b->prev == nullptr && b->next == nullptr) {  // a whole segment, unused
        backend_->free_segment(b->ptr);
        segments_.erase(b->ptr);
        stats_.reserved_bytes -= b->size;
        --stats_.segments;
        it = set.erase(it);
        delete b;
      } else {
        ++it;
      }
    }
  }
}

void BlockPool::retire_stream(void* stream) noexcept {
  if (stream == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  bool any = false;
  for (FreeSet& set : free_) {
    for (Block* b : set) any = any || b->stream == stream;
  }
  for (auto& [ptr, b] : in_use_) any = any || b->stream == stream;
  if (any) {
    // The stream's queued work must be over before its blocks forget it: blocks still in
    // use become nobody's too, reusable by anyone once freed (the stream will be gone).
    backend_->synchronize();
    for (FreeSet& set : free_) {
      for (Block* b : set) {
        if (b->stream == stream) b->stream = kRetired;
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
