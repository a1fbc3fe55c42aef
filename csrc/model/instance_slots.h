// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace slimcuda {

/// A counting semaphore of a model's instances: a run takes a slot before it calls the
/// container's Run and gives it back after. With as many slots as the container has
/// models, a caller holding a slot always finds a free instance inside the container, so
/// it never waits for another caller's work there.
///
/// Each slot has an index (0..count-1): what the holder owns exclusively while it holds
/// it (the CUDA graphs captured for that slot, csrc/graph).
///
/// Thread safety: acquire and release may be called from any threads at once. The slots
/// must outlive every acquire and release (the Model owns them; freeing a model while a
/// run is in flight is the caller's error).
class InstanceSlots {
 public:
  explicit InstanceSlots(size_t count) : count_(count) {
    free_.reserve(count);
    for (size_t i = count; i-- > 0;) free_.push_back(i);
  }
  // Threads may be blocked on it: it stays where it was made.
  InstanceSlots(const InstanceSlots&) = delete;
  InstanceSlots& operator=(const InstanceSlots&) = delete;
  InstanceSlots(InstanceSlots&&) = delete;
  InstanceSlots& operator=(InstanceSlots&&) = delete;

  [[nodiscard]] size_t count() const noexcept { return count_; }

  /// Takes a slot, waiting while all are taken; returns its index.
  size_t acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    freed_.wait(lock, [this] { return !free_.empty(); });
    const size_t index = free_.back();
    free_.pop_back();
    return index;
  }
  /// Gives back the slot `index` taken by acquire (the vector has room: it never holds
  /// more than count indices).
  void release(size_t index) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(index);
    }
    freed_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<size_t> free_;  // indices of the free slots; the last is taken first
  const size_t count_;
};

/// Holds one slot for a scope.
class InstanceSlot {
 public:
  explicit InstanceSlot(InstanceSlots& slots) : slots_(slots), index_(slots_.acquire()) {}
  ~InstanceSlot() { slots_.release(index_); }
  [[nodiscard]] size_t index() const noexcept { return index_; }
  // One slot, given back once.
  InstanceSlot(const InstanceSlot&) = delete;
  InstanceSlot& operator=(const InstanceSlot&) = delete;
  InstanceSlot(InstanceSlot&&) = delete;
  InstanceSlot& operator=(InstanceSlot&&) = delete;

 private:
  InstanceSlots& slots_;
  size_t index_;
};

}  // namespace slimcuda
