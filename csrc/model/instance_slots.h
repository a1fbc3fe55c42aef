// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace slimcuda {

/// A counting semaphore of a model's instances: a run takes a slot before it calls the
/// container's Run and gives it back after. With as many slots as the container has
/// models, a caller holding a slot always finds a free instance inside the container, so
/// it never waits for another caller's work there.
///
/// Thread safety: acquire and release may be called from any threads at once. The slots
/// must outlive every acquire and release (the Model owns them; freeing a model while a
/// run is in flight is the caller's error).
class InstanceSlots {
 public:
  explicit InstanceSlots(size_t count) noexcept : free_(count), count_(count) {}
  // Threads may be blocked on it: it stays where it was made.
  InstanceSlots(const InstanceSlots&) = delete;
  InstanceSlots& operator=(const InstanceSlots&) = delete;
  InstanceSlots(InstanceSlots&&) = delete;
  InstanceSlots& operator=(InstanceSlots&&) = delete;

  [[nodiscard]] size_t count() const noexcept { return count_; }

  /// Takes a slot, waiting while all are taken.
  void acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    freed_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  /// Gives back a slot taken by acquire.
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  size_t free_;
  const size_t count_;
};

/// Holds one slot for a scope.
class InstanceSlot {
 public:
  explicit InstanceSlot(InstanceSlots& slots) : slots_(slots) { slots_.acquire(); }
  ~InstanceSlot() { slots_.release(); }
  // One slot, given back once.
  InstanceSlot(const InstanceSlot&) = delete;
  InstanceSlot& operator=(const InstanceSlot&) = delete;
  InstanceSlot(InstanceSlot&&) = delete;
  InstanceSlot& operator=(InstanceSlot&&) = delete;

 private:
  InstanceSlots& slots_;
};

}  // namespace slimcuda
