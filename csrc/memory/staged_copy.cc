// SPDX-License-Identifier: Apache-2.0
// Pageable host <-> device copies staged through pinned chunks (see staged_copy.h).
#include "csrc/memory/staged_copy.h"

#include <cuda.h>  // the driver API's types only: its functions come through the runtime
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/caching_config.h"
#include "csrc/memory/pinned_pool.h"

namespace slimcuda {
namespace {

constexpr size_t kMinPart = size_t{64} << 10;  // smallest memcpy slice given to a thread
// Copies smaller than four chunks get smaller chunks (down to this), so that they too
// have stages to overlap.
constexpr size_t kMinChunk = size_t{256} << 10;
// Idle copy threads and waiting callers poll this long before sleeping: a condition
// variable's wake-up costs tens of µs, a chunk's memcpy about a hundred.
constexpr auto kSpin = std::chrono::microseconds(50);

// A count setting as an int (the clamps below bring it into range).
int setting_int(config::Key key) noexcept {
  return static_cast<int>(std::min<uint64_t>(config::get_integer(key), INT32_MAX));
}

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
  void submit(char* dst, const char* src, size_t n, int parts, Latch* latch, Gate* gate = nullptr) {
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

 private:
  struct Job {
    char* dst;
    const char* src;
    size_t n;
    Latch* latch;
    Gate* gate;
  };

  void work() {
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

  std::vector<std::thread> threads_;  // grows to the largest `parts` asked for
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::atomic<int> queued_{0};  // jobs_.size(), readable without the lock
};

CopyThreads& copy_threads() {
  static CopyThreads* threads = new CopyThreads();
  return *threads;
}

StagingConfig clamped(const StagingConfig& c) {
  return StagingConfig{std::clamp<size_t>(c.chunk_bytes, size_t{64} << 10, size_t{1} << 30),
                       std::clamp(c.buffers, 1, kMaxStagingBuffers), std::clamp(c.threads, 1, kMaxStagingThreads),
                       c.stream_flags};
}

using Events = std::array<cudaEvent_t, kMaxStagingBuffers>;

// One event per pinned buffer, marking its DMA's end: this thread's event slots 1.. of the
// device (cuda::thread_event; slot 0 is wait_for_stream's).
static_assert(kMaxStagingBuffers < cuda::kThreadEventSlots);
Error events_for(int device, int count, Events* out) {
  for (int i = 0; i < count; ++i) SLIMCUDA_RETURN_IF_ERROR(cuda::thread_event(device, 1 + i, &(*out)[i]));
  return Error::Ok;
}

// The pinned buffers of one copy and their memcpy latches. However the copy ends, the
// queued memcpys finish before the buffers go back to the pool.
struct Pipeline {
  std::array<char*, kMaxStagingBuffers> buffer{};
  std::array<Latch, kMaxStagingBuffers> latch;
  ~Pipeline() {
    for (Latch& l : latch) l.wait();
    for (char* b : buffer) pinned_free(b);
  }
};

// The driver's stream memory operations, reached through the runtime (no libcuda link):
// nullptr where the driver or the device lacks them.
struct StreamMemOps {
  CUresult (*wait)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = nullptr;
  CUresult (*write)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = nullptr;
};

const StreamMemOps& stream_mem_ops() {
  static const StreamMemOps ops = [] {
    StreamMemOps o;
    void* wait = nullptr;
    void* write = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &wait, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess ||
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &write, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return o;
    }
    o.wait = reinterpret_cast<decltype(o.wait)>(wait);
    o.write = reinterpret_cast<decltype(o.write)>(write);
    return o;
  }();
  return ops;
}

// This thread's flags in pinned, device-visible memory: per buffer, `ready` (host threads
// -> DMA) and `done` (DMA -> host threads), with a sequence counter that only grows, so a
// flag never has to be reset between copies.
struct ThreadFlags {
  uint32_t* words = nullptr;  // 2 * kMaxStagingBuffers: ready[b], then done[b]
  uint32_t sequence = 0;
  ~ThreadFlags() {
    if (words != nullptr && cudaFreeHost(words) != cudaSuccess) (void)cudaGetLastError();
  }
};

Error thread_flags(ThreadFlags** out) {
  thread_local ThreadFlags flags;
  if (flags.words == nullptr) {
    void* p = nullptr;
    const size_t bytes = 2 * kMaxStagingBuffers * sizeof(uint32_t);
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess) {
      return cuda::allocation_error(cudaGetLastError(), "staged_copy", "staging flags");
    }
    std::memset(p, 0, bytes);
    flags.words = static_cast<uint32_t*>(p);
  }
  *out = &flags;
  return Error::Ok;
}

}  // namespace

bool stream_flags_available(int device) noexcept {
  const StreamMemOps& ops = stream_mem_ops();
  if (ops.wait == nullptr || ops.write == nullptr) return false;
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterSupported, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return supported != 0;
}

namespace {

// The stream-flag pipeline (StagingConfig::stream_flags): every chunk's DMA is enqueued at
// once; the GPU and the host threads hand the pinned buffers back and forth through flags.
Error staged_copy_with_flags(char* d, const char* s, size_t nbytes, bool to_device, const StreamContext& ctx,
                             const StagingConfig& config, size_t chunk, size_t chunks, int used) {
  const StreamMemOps& ops = stream_mem_ops();
  ThreadFlags* flags = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(thread_flags(&flags));
  uint32_t* ready = flags->words;
  uint32_t* done = flags->words + kMaxStagingBuffers;
  const CUstream stream = reinterpret_cast<CUstream>(ctx.stream());
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  auto device_address = [](uint32_t* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));  // pinned memory: one address (UVA)
  };
  auto len_of = [&](size_t k) { return std::min(chunk, nbytes - k * chunk); };
  auto slot = [&](size_t k) { return static_cast<int>(k % used); };
  const uint32_t base = flags->sequence;  // chunk k's sequence value is base + k + 1
  flags->sequence += static_cast<uint32_t>(chunks);
  auto seq = [&](size_t k) { return base + static_cast<uint32_t>(k) + 1; };
  try {
    // Declared before the pipeline: its destructor waits for every queued slice, and the
    // slices read their gates until they are done.
    std::vector<Gate> gates(chunks);
    Pipeline pipe;
    for (int i = 0; i < used; ++i) {
      void* p = nullptr;
      SLIMCUDA_RETURN_IF_ERROR(pinned_allocate(std::min(chunk, nbytes), ctx, &p));
      pipe.buffer[i] = static_cast<char*>(p);
    }
    CopyThreads& threads = copy_threads();
    // After a failed enqueue, the DMAs already queued wait only on flags of memcpys already
    // submitted, which the threads will set: the stream drains, then the buffers go back.
    auto fail = [&](const char* what) {
      const cudaError_t err = cudaGetLastError();
      if (cudaStreamSynchronize(ctx.stream()) != cudaSuccess) (void)cudaGetLastError();
      return set_last_error(Error::Internal, "staged_copy", "%s failed: %s", what, cudaGetErrorString(err));
    };
    for (size_t k = 0; k < chunks; ++k) {
      const int b = slot(k);
      Gate& g = gates[k];
      char* buffer = pipe.buffer[b];
      if (to_device) {
        // The memcpy into buffer b waits for the DMA of the chunk that used it before.
        if (k >= static_cast<size_t>(used)) {
          g.wait = done + b;
          g.wait_value = seq(k - used);
        }
        g.flag = ready + b;
        g.value = seq(k);
        threads.submit(buffer, s + k * chunk, len_of(k), config.threads, &pipe.latch[b], &g);
        if (ops.wait(stream, device_address(ready + b), seq(k), CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
          return fail("cuStreamWaitValue32");
        }
        if (cudaMemcpyAsync(d + k * chunk, buffer, len_of(k), kind, ctx.stream()) != cudaSuccess) {
          return fail("cudaMemcpyAsync");
        }
        if (ops.write(stream, device_address(done + b), seq(k), CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS) {
          return fail("cuStreamWriteValue32");
        }
      } else {
        // The DMA into buffer b waits for the memcpy out of the chunk that used it before;
        // the memcpy of this chunk waits for its DMA.
        if (k >= static_cast<size_t>(used) &&
            ops.wait(stream, device_address(ready + b), seq(k - used), CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
          return fail("cuStreamWaitValue32");
        }
        if (cudaMemcpyAsync(buffer, s + k * chunk, len_of(k), kind, ctx.stream()) != cudaSuccess) {
          return fail("cudaMemcpyAsync");
        }
        if (ops.write(stream, device_address(done + b), seq(k), CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS) {
          return fail("cuStreamWriteValue32");
        }
        g.wait = done + b;
        g.wait_value = seq(k);
        g.flag = ready + b;
        g.value = seq(k);
        threads.submit(d + k * chunk, buffer, len_of(k), config.threads, &pipe.latch[b], &g);
      }
    }
    if (to_device) {
      // The copy is complete when the last DMA is (the memcpys before each DMA are done).
      SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(ctx.stream(), ctx.device()));
    }
    return Error::Ok;  // device to host: Pipeline's destructor waits for the last memcpys
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "staged_copy", "out of host memory");
  } catch (const std::system_error& e) {  // a copy thread could not be started
    return set_last_error(Error::Internal, "staged_copy", "%s", e.what());
  }
}

}  // namespace

size_t staging_threshold() noexcept {
  // Default 1 MiB: with small copies cut into four chunks, staging matched or beat the
  // driver's own pageable path at every size from 1 MiB on, both directions (H200 host,
  // 2026-11-29 19:17 UTC, docs/benchmarks.md); below that a copy is a few round trips of
  // latency.
  return static_cast<size_t>(config::get_integer(config::Key::StagingThreshold));
}

StagingConfig staging_config() noexcept {
  // Defaults 4 MiB x 6 buffers x min(8, hardware threads): among the best of the sweep on
  // the H200 host (docs/benchmarks.md, 2026-11-29 19:08 UTC: 45.9 / 45.2 GB/s at 256 MiB)
  // while a 16 MiB copy still has four chunks to overlap; 24 MiB of pinned buffers per copy.
  return clamped(StagingConfig{static_cast<size_t>(config::get_integer(config::Key::StagingChunk)),
                               setting_int(config::Key::StagingBuffers), setting_int(config::Key::StagingThreads),
                               config::get_bool(config::Key::StagingFlags)});
}

bool should_stage(size_t nbytes) noexcept {
  const size_t threshold = staging_threshold();
  return threshold != 0 && nbytes >= threshold && caching_enabled();
}

Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, const StreamContext& ctx,
                  const StagingConfig& requested) noexcept {
  if (nbytes == 0) return Error::Ok;
  const StagingConfig config = clamped(requested);
  const size_t quarter = ((nbytes + 3) / 4 + 0xffff) & ~size_t{0xffff};  // in 64 KiB units
  const size_t chunk = std::min(config.chunk_bytes, std::max(kMinChunk, quarter));
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const cudaStream_t stream = ctx.stream();
  const size_t chunks = (nbytes + chunk - 1) / chunk;
  const int used = static_cast<int>(std::min<size_t>(config.buffers, chunks));
  if (config.stream_flags && stream_flags_available(ctx.device())) {
    return staged_copy_with_flags(static_cast<char*>(dst), static_cast<const char*>(src), nbytes, to_device, ctx,
                                  config, chunk, chunks, used);
  }
  Events events{};
  SLIMCUDA_RETURN_IF_ERROR(events_for(ctx.device(), used, &events));
  try {
    Pipeline pipe;
    for (int i = 0; i < used; ++i) {
      void* p = nullptr;
      SLIMCUDA_RETURN_IF_ERROR(pinned_allocate(std::min(chunk, nbytes), ctx, &p));
      pipe.buffer[i] = static_cast<char*>(p);
    }
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    auto len_of = [&](size_t k) { return std::min(chunk, nbytes - k * chunk); };
    auto slot = [&](size_t k) { return static_cast<int>(k % used); };
    // After a failed call the DMAs already queued may still use the buffers: wait for the
    // stream before they go back to the pool (Pipeline's destructor waits for the memcpys).
    auto fail = [&](cudaError_t err, const char* what) {
      (void)cudaGetLastError();
      if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
      return set_last_error(Error::Internal, "staged_copy", "%s: %s: %s", what, cudaGetErrorName(err),
                            cudaGetErrorString(err));
    };
    CopyThreads& threads = copy_threads();

    if (to_device) {
      // Up to `ahead` chunks are being memcpy'd while the DMAs of earlier ones run; a buffer
      // is refilled once the DMA that read it last has ended.
      const size_t ahead = static_cast<size_t>(std::max(1, used - 1));
      auto fill = [&](size_t j) -> cudaError_t {
        const int b = slot(j);
        if (j >= static_cast<size_t>(used)) {
          if (cudaError_t e = cudaEventSynchronize(events[b]); e != cudaSuccess) return e;
        }
        threads.submit(pipe.buffer[b], s + j * chunk, len_of(j), config.threads, &pipe.latch[b]);
        return cudaSuccess;
      };
      for (size_t j = 0; j < std::min(ahead, chunks); ++j) {
        if (cudaError_t e = fill(j); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
      }
      for (size_t k = 0; k < chunks; ++k) {
        const int b = slot(k);
        pipe.latch[b].wait();
        if (cudaError_t e = cudaMemcpyAsync(d + k * chunk, pipe.buffer[b], len_of(k), kind, stream); e != cudaSuccess) {
          return fail(e, "cudaMemcpyAsync");
        }
        if (cudaError_t e = cudaEventRecord(events[b], stream); e != cudaSuccess) return fail(e, "cudaEventRecord");
        if (k + ahead < chunks) {
          if (cudaError_t e = fill(k + ahead); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
        }
      }
      if (cudaError_t e = cudaEventSynchronize(events[slot(chunks - 1)]); e != cudaSuccess) {
        return fail(e, "cudaEventSynchronize");
      }
      return Error::Ok;
    }

    // Device to host: `used` DMAs in flight; each buffer is emptied by the threads as its
    // DMA ends and refilled by the next DMA once that memcpy is done.
    auto enqueue = [&](size_t j) -> cudaError_t {
      const int b = slot(j);
      cudaError_t e = cudaMemcpyAsync(pipe.buffer[b], s + j * chunk, len_of(j), kind, stream);
      if (e == cudaSuccess) e = cudaEventRecord(events[b], stream);
      return e;
    };
    for (size_t j = 0; j < static_cast<size_t>(used); ++j) {
      if (cudaError_t e = enqueue(j); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
    }
    for (size_t k = 0; k < chunks; ++k) {
      const int b = slot(k);
      if (used == 1 && k > 0) {  // one buffer: strictly one chunk after the other
        pipe.latch[0].wait();
        if (cudaError_t e = enqueue(k); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
      }
      if (cudaError_t e = cudaEventSynchronize(events[b]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
      threads.submit(d + k * chunk, pipe.buffer[b], len_of(k), config.threads, &pipe.latch[b]);
      if (used > 1 && k > 0 && k - 1 + used < chunks) {  // refill the previous chunk's buffer
        pipe.latch[slot(k - 1)].wait();
        if (cudaError_t e = enqueue(k - 1 + used); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
      }
    }
    for (int i = 0; i < used; ++i) pipe.latch[i].wait();  // the last memcpys: dst complete
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "staged_copy", "out of host memory");
  } catch (const std::system_error& e) {  // a copy thread could not be started
    return set_last_error(Error::Internal, "staged_copy", "%s", e.what());
  }
}

Error staged_upload(void* dst, uint64_t total, const UploadPiece* pieces, size_t count, const StreamContext& ctx,
                    const StagingConfig& requested) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(dst != nullptr || total == 0, Error::InvalidArgument, "null destination");
  SLIMCUDA_CHECK_OR_RETURN(pieces != nullptr || count == 0, Error::InvalidArgument, "null pieces");
  uint64_t end = 0;
  for (size_t i = 0; i < count; ++i) {
    const UploadPiece& p = pieces[i];
    SLIMCUDA_CHECK_OR_RETURN(p.dst_offset >= end && p.nbytes <= total && p.dst_offset <= total - p.nbytes,
                             Error::InvalidArgument,
                             "piece %zu (%llu bytes at %llu) overlaps the one before or ends past the %llu bytes", i,
                             static_cast<unsigned long long>(p.nbytes), static_cast<unsigned long long>(p.dst_offset),
                             static_cast<unsigned long long>(total));
    SLIMCUDA_CHECK_OR_RETURN(p.nbytes == 0 || p.host != nullptr || p.read != nullptr, Error::InvalidArgument,
                             "piece %zu has neither host memory nor a reader", i);
    end = p.dst_offset + p.nbytes;
  }
  if (total == 0) return Error::Ok;
  cuda::DeviceGuard guard(ctx.device());
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  const StagingConfig config = clamped(requested);
  const uint64_t chunk = std::min<uint64_t>(config.chunk_bytes, total);
  const uint64_t chunks = (total + chunk - 1) / chunk;
  const int used = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(config.buffers), chunks));
  const cudaStream_t stream = ctx.stream();
  char* d = static_cast<char*>(dst);
  Events events{};
  SLIMCUDA_RETURN_IF_ERROR(events_for(ctx.device(), used, &events));
  try {
    Pipeline pipe;
    for (int i = 0; i < used; ++i) {
      void* p = nullptr;
      SLIMCUDA_RETURN_IF_ERROR(pinned_allocate(static_cast<size_t>(chunk), ctx, &p));
      pipe.buffer[i] = static_cast<char*>(p);
    }
    auto slot = [&](uint64_t k) { return static_cast<int>(k % static_cast<uint64_t>(used)); };
    auto len_of = [&](uint64_t k) { return static_cast<size_t>(std::min(chunk, total - k * chunk)); };
    // As staged_copy: DMAs already queued may still read the chunks; drain the stream first
    // (Pipeline's destructor waits for the memcpys).
    auto drain = [&] {
      if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
    };
    auto fail = [&](cudaError_t err, const char* what) {
      (void)cudaGetLastError();
      drain();
      return set_last_error(Error::Internal, "staged_upload", "%s: %s: %s", what, cudaGetErrorName(err),
                            cudaGetErrorString(err));
    };
    CopyThreads& threads = copy_threads();
    size_t next_piece = 0;  // the first piece that does not end before the chunk being filled
    // Fills chunk j's buffer once the DMA that read it last is done: memcpys from host pieces
    // go to the copy threads, reads run here, gaps are zeroed.
    auto fill = [&](uint64_t j) -> Error {
      const int b = slot(j);
      if (j >= static_cast<uint64_t>(used)) {
        if (cudaError_t e = cudaEventSynchronize(events[b]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
      }
      const uint64_t lo = j * chunk, hi = lo + len_of(j);
      char* buffer = pipe.buffer[b];
      uint64_t pos = lo;
      for (size_t q = next_piece; q < count && pieces[q].dst_offset < hi; ++q) {
        const UploadPiece& p = pieces[q];
        const uint64_t from = std::max(lo, p.dst_offset), to = std::min(hi, p.dst_offset + p.nbytes);
        if (from >= to) {
          if (p.dst_offset + p.nbytes <= lo) next_piece = q + 1;
          continue;
        }
        if (from > pos) std::memset(buffer + (pos - lo), 0, static_cast<size_t>(from - pos));
        const size_t n = static_cast<size_t>(to - from);
        const uint64_t within = from - p.dst_offset;
        if (p.host != nullptr) {
          threads.submit(buffer + (from - lo), static_cast<const char*>(p.host) + within, n, config.threads,
                         &pipe.latch[b]);
        } else if (const Error e = p.read(p.reader, p.read_offset + within, n, buffer + (from - lo)); e != Error::Ok) {
          drain();
          return e;
        }
        pos = to;
        if (p.dst_offset + p.nbytes <= hi) next_piece = q + 1;
      }
      if (pos < hi) std::memset(buffer + (pos - lo), 0, static_cast<size_t>(hi - pos));
      return Error::Ok;
    };
    const uint64_t ahead = static_cast<uint64_t>(std::max(1, used - 1));
    for (uint64_t j = 0; j < std::min(ahead, chunks); ++j) SLIMCUDA_RETURN_IF_ERROR(fill(j));
    for (uint64_t k = 0; k < chunks; ++k) {
      const int b = slot(k);
      pipe.latch[b].wait();
      if (cudaError_t e = cudaMemcpyAsync(d + k * chunk, pipe.buffer[b], len_of(k), cudaMemcpyHostToDevice, stream);
          e != cudaSuccess) {
        return fail(e, "cudaMemcpyAsync");
      }
      if (cudaError_t e = cudaEventRecord(events[b], stream); e != cudaSuccess) return fail(e, "cudaEventRecord");
      if (k + ahead < chunks) SLIMCUDA_RETURN_IF_ERROR(fill(k + ahead));
    }
    if (cudaError_t e = cudaEventSynchronize(events[slot(chunks - 1)]); e != cudaSuccess) {
      return fail(e, "cudaEventSynchronize");
    }
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "staged_upload", "out of host memory");
  } catch (const std::system_error& e) {  // a copy thread could not be started
    return set_last_error(Error::Internal, "staged_upload", "%s", e.what());
  }
}

}  // namespace slimcuda
