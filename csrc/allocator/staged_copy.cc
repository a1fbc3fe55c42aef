// Pageable host <-> device copies staged through pinned chunks (see staged_copy.h).
#include "csrc/allocator/staged_copy.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "csrc/allocator/cuda_allocator.h"
#include "csrc/allocator/pinned_pool.h"
#include "csrc/cuda/cuda_error.h"

namespace slimcuda {
namespace {

constexpr size_t kChunk = size_t{4} << 20;  // bytes per pinned buffer
constexpr int kBuffers = 3;                  // pinned buffers in flight per copy
constexpr size_t kMinPart = size_t{256} << 10;  // smallest memcpy slice given to a thread

size_t env_size(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<size_t>(x) : fallback;
}

// A few host threads that split a memcpy with the calling thread. One memcpy thread moves
// about 8 GB/s on the H200 host; the link takes ~55 GB/s, so one thread would be the limit.
class CopyThreads {
 public:
  explicit CopyThreads(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  // Never destroyed (a static that outlives every caller): the threads just idle.

  int parallelism() const { return static_cast<int>(threads_.size()) + 1; }

  // memcpy(dst, src, n), cut into up to parallelism() slices; returns when all are copied.
  void copy(char* dst, const char* src, size_t n) {
    const int parts = static_cast<int>(std::min<size_t>(parallelism(), std::max<size_t>(1, n / kMinPart)));
    if (parts <= 1) {
      std::memcpy(dst, src, n);
      return;
    }
    const size_t slice = (n + parts - 1) / parts;
    Latch latch;
    latch.left = parts - 1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int i = 1; i < parts; ++i) {
        const size_t begin = i * slice;
        const size_t len = begin >= n ? 0 : std::min(slice, n - begin);
        jobs_.push_back(Job{dst + begin, src + begin, len, &latch});
      }
    }
    cv_.notify_all();
    std::memcpy(dst, src, std::min(slice, n));  // the caller copies the first slice
    std::unique_lock<std::mutex> lock(latch.mu);
    latch.cv.wait(lock, [&] { return latch.left == 0; });
  }

 private:
  struct Latch {
    int left = 0;
    std::mutex mu;
    std::condition_variable cv;
  };
  struct Job {
    char* dst;
    const char* src;
    size_t n;
    Latch* latch;
  };

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !jobs_.empty(); });
        job = jobs_.front();
        jobs_.pop_front();
      }
      if (job.n > 0) std::memcpy(job.dst, job.src, job.n);
      std::lock_guard<std::mutex> lock(job.latch->mu);
      if (--job.latch->left == 0) job.latch->cv.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
};

CopyThreads& copy_threads() {
  static CopyThreads* threads = [] {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const size_t want = env_size("SLIMCUDA_STAGING_THREADS", std::min<unsigned>(hw, 8));
    return new CopyThreads(static_cast<int>(std::clamp<size_t>(want, 1, 64)) - 1);
  }();
  return *threads;
}

// This thread's events for one device: one per pinned buffer, marking its DMA's end.
struct ThreadEvents {
  std::unordered_map<int, std::array<cudaEvent_t, kBuffers>> by_device;
  ~ThreadEvents() {
    for (auto& [device, events] : by_device) {
      for (cudaEvent_t e : events) {
        if (e != nullptr && cudaEventDestroy(e) != cudaSuccess) (void)cudaGetLastError();
      }
    }
  }
};

Error events_for(int device, std::array<cudaEvent_t, kBuffers>** out) {
  thread_local ThreadEvents events;
  auto it = events.by_device.find(device);
  if (it == events.by_device.end()) {
    std::array<cudaEvent_t, kBuffers> made{};
    for (cudaEvent_t& e : made) {
      const cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        for (cudaEvent_t x : made) {
          if (x != nullptr) (void)cudaEventDestroy(x);
        }
        return set_last_error(Error::Internal, "staged_copy", "cudaEventCreate: %s", cudaGetErrorString(err));
      }
    }
    it = events.by_device.emplace(device, made).first;
  }
  *out = &it->second;
  return Error::Ok;
}

// The pinned buffers of one copy, back to the pool however the copy ends.
struct Buffers {
  std::array<char*, kBuffers> p{};
  ~Buffers() {
    for (char* b : p) pinned_free(b);
  }
};

}  // namespace

size_t staging_threshold() noexcept {
  // 16 MiB: on the H200 host (2026-11-29 18:26 UTC) staging lost to the driver's own
  // pageable path at 1 and 4 MiB and won in both directions from 16 MiB on.
  static const size_t threshold = env_size("SLIMCUDA_STAGING_THRESHOLD", size_t{16} << 20);
  return threshold;
}

bool should_stage(const void* host, size_t nbytes) noexcept {
  const size_t threshold = staging_threshold();
  if (threshold == 0 || nbytes < threshold || !cuda_caching_enabled()) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, host) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeUnregistered;
}

Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, void* stream_handle,
                  int device) noexcept {
  if (nbytes == 0) return Error::Ok;
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
  std::array<cudaEvent_t, kBuffers>* events = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(events_for(device, &events));
  const size_t chunks = (nbytes + kChunk - 1) / kChunk;
  const int used = static_cast<int>(std::min<size_t>(kBuffers, chunks));
  Buffers buffers;
  for (int i = 0; i < used; ++i) {
    void* p = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(pinned_allocate(std::min(kChunk, nbytes), &p));
    buffers.p[i] = static_cast<char*>(p);
  }
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  auto len_of = [&](size_t k) { return std::min(kChunk, nbytes - k * kChunk); };
  // After a failed enqueue the earlier DMAs may still use the buffers: wait for the stream
  // before the buffers go back to the pool.
  auto fail = [&](cudaError_t err, const char* what) {
    (void)cudaGetLastError();
    if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
    return set_last_error(Error::Internal, "staged_copy", "%s: %s: %s", what, cudaGetErrorName(err),
                          cudaGetErrorString(err));
  };
  if (to_device) {
    for (size_t k = 0; k < chunks; ++k) {
      const int b = static_cast<int>(k % kBuffers);
      if (k >= static_cast<size_t>(kBuffers)) {  // the buffer's previous DMA must be over
        if (cudaError_t e = cudaEventSynchronize((*events)[b]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
      }
      copy_threads().copy(buffers.p[b], s + k * kChunk, len_of(k));
      if (cudaError_t e = cudaMemcpyAsync(d + k * kChunk, buffers.p[b], len_of(k), kind, stream); e != cudaSuccess) {
        return fail(e, "cudaMemcpyAsync");
      }
      if (cudaError_t e = cudaEventRecord((*events)[b], stream); e != cudaSuccess) return fail(e, "cudaEventRecord");
    }
    const int last = static_cast<int>((chunks - 1) % kBuffers);
    if (cudaError_t e = cudaEventSynchronize((*events)[last]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
    return Error::Ok;
  }
  // Device to host: keep `used` DMAs in flight; empty each buffer as its DMA ends.
  auto enqueue = [&](size_t k) -> cudaError_t {
    const int b = static_cast<int>(k % kBuffers);
    cudaError_t e = cudaMemcpyAsync(buffers.p[b], s + k * kChunk, len_of(k), kind, stream);
    if (e == cudaSuccess) e = cudaEventRecord((*events)[b], stream);
    return e;
  };
  for (size_t k = 0; k < static_cast<size_t>(used); ++k) {
    if (cudaError_t e = enqueue(k); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
  }
  for (size_t k = 0; k < chunks; ++k) {
    const int b = static_cast<int>(k % kBuffers);
    if (cudaError_t e = cudaEventSynchronize((*events)[b]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
    copy_threads().copy(d + k * kChunk, buffers.p[b], len_of(k));
    if (k + kBuffers < chunks) {
      if (cudaError_t e = enqueue(k + kBuffers); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda
