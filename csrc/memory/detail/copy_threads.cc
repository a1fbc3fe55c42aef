// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/detail/copy_threads.h"

#include <algorithm>
#include <cstring>

namespace slimcuda::staging {
namespace {

constexpr size_t kMinPart = size_t{64} << 10;  // smallest memcpy slice given to a thread

}  // namespace

void CopyThreads::submit(char* dst, const char* src, size_t n, int parts, Latch* latch, Gate* gate) {
  parts = static_cast<int>(std::clamp<size_t>(n / kMinPart, 1, static_cast<size_t>(parts)));
  const size_t slice = (n + parts - 1) / parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (static_cast<int>(threads_.size()) < parts) threads_.emplace_back([this] { work(); });
    const size_t before = jobs_.size();
    try {
      if (gate != nullptr) gate->left.store(parts, std::memory_order_relaxed);
      for (int i = 0; i < parts; ++i) {
        const size_t begin = std::min(n, i * slice);
        jobs_.push_back(Job{dst + begin, src + begin, std::min(slice, n - begin), latch, gate});
      }
    } catch (...) {
      jobs_.resize(before);  // the workers wait for mu_: none has taken these yet
      throw;
    }
    latch->add(parts);  // under mu_: no worker can count a slice down before it is counted
    queued_.fetch_add(parts, std::memory_order_release);
  }
  cv_.notify_all();
}

void CopyThreads::work() {
  for (;;) {
    spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; });
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !jobs_.empty(); });
      job = jobs_.front();
      jobs_.pop_front();
      if (job.gate != nullptr && !job.gate->open()) {
        // Its buffer's last DMA is still running: let other slices go first.
        const bool alone = jobs_.empty();
        jobs_.push_back(job);
        lock.unlock();
        if (alone) std::this_thread::yield();
        continue;
      }
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (job.n > 0) std::memcpy(job.dst, job.src, job.n);
    if (job.gate != nullptr && job.gate->left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Every slice of the chunk is in the buffer: the DMA waiting on the flag may go.
      __atomic_store_n(job.gate->flag, job.gate->value, __ATOMIC_RELEASE);
    }
    job.latch->count_down();
  }
}

CopyThreads& copy_threads() {
  static CopyThreads* threads = new CopyThreads();
  return *threads;
}

}  // namespace slimcuda::staging
