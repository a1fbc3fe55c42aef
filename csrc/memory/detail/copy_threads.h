// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace slimcuda::staging {

// The host side of every staged copy: threads that memcpy slices of chunks into or out of
// pinned buffers, the latch a pipeline waits on for one chunk's slices, and the gate through
// which the stream-flag pipeline hands a buffer between the GPU and the threads.

// Idle copy threads and waiting callers poll this long before sleeping: a condition
// variable's wake-up costs tens of µs, a chunk's memcpy about a hundred.
inline constexpr auto kSpin = std::chrono::microseconds(50);

// Polls `ready` (yielding the CPU between polls) for up to kSpin; whether it became true.
template <typename Ready>
bool spin_until(Ready&& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
}

// Counts the slices of one chunk's memcpy down to zero. The count changes under the lock
// and a waiter that saw zero takes the lock once more before returning, so the last
// count_down has let go of the latch before its owner may destroy it.
class Latch {
 public:
  void add(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    left_.fetch_add(n, std::memory_order_relaxed);
  }
  void count_down() {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) cv_.notify_all();
  }
  void wait() {
    auto done = [&] { return left_.load(std::memory_order_acquire) == 0; };
    (void)spin_until(done);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, done);
  }

 private:
  std::atomic<int> left_{0};  // written under mu_; read without it while spinning
  std::mutex mu_;
  std::condition_variable cv_;
};

// Whether a 32-bit sequence value `have` has reached `want` (wrap-around safe, the same
// comparison as the driver's CU_STREAM_WAIT_VALUE_GEQ).
inline bool reached(uint32_t have, uint32_t want) { return static_cast<int32_t>(have - want) >= 0; }

// The stream-flag pipeline's hand-offs for one chunk's memcpy (see CopyThreads::submit).
// The flags are words of pinned memory that the GPU reads and writes too: accessed with
// the compiler's atomic builtins (the GPU is no C++ thread, so std::atomic objects do not fit).
struct Gate {
  const uint32_t* wait = nullptr;  // written by the GPU; nullptr: no wait
  uint32_t wait_value = 0;
  uint32_t* flag = nullptr;  // read by the GPU's stream wait
  uint32_t value = 0;
  std::atomic<int> left{0};  // slices still to copy
  bool open() const { return wait == nullptr || reached(__atomic_load_n(wait, __ATOMIC_ACQUIRE), wait_value); }
};

// Host threads that run memcpy slices for every staged copy in the process, in the order
// queued. One memcpy thread moves about 8-10 GB/s on the H200 host; the link takes ~55 GB/s.
class CopyThreads {
 public:
  // Never destroyed (a static that outlives every caller): the threads just idle.

  // Queues memcpy(dst, src, n) cut into up to `parts` slices; `latch` counts them down.
  // Throws (std::system_error, std::bad_alloc) only with nothing of this call left queued
  // or counted, so a caller waiting on the latch never waits for a slice that will not run.
  //
  // With a Gate (the stream-flag pipeline): no slice starts before gate->wait reaches
  // gate->wait_value (a flag the GPU writes when the DMA that last used the buffer ended; a
  // slice not ready yet goes to the back of the queue, so other copies' slices run
  // meanwhile), and the last slice to finish stores gate->value into gate->flag (the flag
  // the chunk's DMA waits on).
  void submit(char* dst, const char* src, size_t n, int parts, Latch* latch, Gate* gate = nullptr);

 private:
  struct Job {
    char* dst;
    const char* src;
    size_t n;
    Latch* latch;
    Gate* gate;
  };

  void work();

  std::vector<std::thread> threads_;  // grows to the largest `parts` asked for
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::atomic<int> queued_{0};  // jobs_.size(), readable without the lock
};

// The process's copy threads.
CopyThreads& copy_threads();

}  // namespace slimcuda::staging
