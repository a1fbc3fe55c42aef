// SPDX-License-Identifier: Apache-2.0
// The CUDA device allocator: per-GPU caching pools over cudaMalloc, and the uncached path.
#include "csrc/memory/device_memory.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "csrc/core/limits.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/caching_config.h"

namespace slimcuda::device_memory {
namespace {

constexpr size_t kCudaMallocAlignment = 256;  // what cudaMalloc guarantees

bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// The caching pool's device side for one GPU: cudaMalloc'ed segments and pooled events.
class CudaPoolBackend : public PoolBackend {
 public:
  explicit CudaPoolBackend(int device) : device_(device) {}
  ~CudaPoolBackend() override {
    for (cudaEvent_t e : events_) {
      if (cudaEventDestroy(e) != cudaSuccess) (void)cudaGetLastError();
    }
  }
  Error allocate_segment(size_t bytes, void** out) noexcept override {
    cuda::DeviceGuard guard(device_);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    const cudaError_t err = cudaMalloc(out, bytes);
    if (err != cudaSuccess) {
      *out = nullptr;
      return cuda::allocation_error(err, "cudaMalloc: a cache segment");
    }
    return Error::Ok;
  }
  void free_segment(void* ptr) noexcept override {
    cuda::DeviceGuard guard(device_);
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
  }
  // Called only when another stream wants a block (BlockPool records lazily): rare, so
  // the device switch here stays off the hot path.
  void* record(void* stream) noexcept override {
    cuda::DeviceGuard guard(device_);
    cudaEvent_t e = nullptr;
    if (!events_.empty()) {
      e = events_.back();
      events_.pop_back();
    } else if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;  // no marker: the block simply is not reused on another stream yet
    }
    if (cudaEventRecord(e, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      (void)cudaGetLastError();
      events_.push_back(e);
      return nullptr;
    }
    return e;
  }
  bool done(void* marker) noexcept override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(marker));
    if (err != cudaSuccess) (void)cudaGetLastError();  // cudaErrorNotReady: still running
    return err == cudaSuccess;
  }
  void release_marker(void* marker) noexcept override {
    if (marker != nullptr) events_.push_back(static_cast<cudaEvent_t>(marker));  // under the pool's lock
  }
  bool synchronize() noexcept override {
    // A device-wide synchronize while a graph is being captured (another thread's, on this
    // process's streams) would invalidate that capture.
    return cuda::synchronize_device_outside_captures(device_);
  }
  void synchronize_stream(void* stream) noexcept override {
    cuda::DeviceGuard guard(device_);
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  int device_;
  std::vector<cudaEvent_t> events_;
};

// A private pool's device side: while a graph is being captured no segment comes or goes
// (cudaMalloc, cudaFree and a device synchronization would each invalidate the capture),
// and outside a capture segments are released only when the pool itself goes, because a
// graph may still refer to any address the pool ever handed out.
class PrivateBackend final : public CudaPoolBackend {
 public:
  explicit PrivateBackend(int device) : CudaPoolBackend(device) {}
  ~PrivateBackend() override {
    for (void* p : kept_) CudaPoolBackend::free_segment(p);
  }
  Error allocate_segment(size_t bytes, void** out) noexcept override {
    if (capturing_.load(std::memory_order_acquire)) {
      *out = nullptr;
      return set_last_error(Error::MemoryAllocationFailed,
                            "the graph's pool needs %zu more bytes while capturing, and a cudaMalloc now would "
                            "break the capture",
                            bytes);
    }
    return CudaPoolBackend::allocate_segment(bytes, out);
  }
  void free_segment(void* ptr) noexcept override {
    // Called under the pool's lock by release_free_segments: keep it until the end.
    try {
      kept_.push_back(ptr);
    } catch (const std::bad_alloc&) {
      // Cannot remember it: the segment stays allocated (leaked) rather than freed early.
    }
  }
  bool synchronize() noexcept override {
    return !capturing_.load(std::memory_order_acquire) && CudaPoolBackend::synchronize();
  }
  void set_capturing(bool on) noexcept { capturing_.store(on, std::memory_order_release); }

 private:
  std::atomic<bool> capturing_{false};
  std::vector<void*> kept_;
};

// Memory handed out without the cache (caching off, or alignment above 256): what free()
// needs to know to check and release it.
struct Direct {
  void* base;  // what cudaMalloc returned (the pointer may be aligned past it)
  int device;
};

class Allocator {
 public:
  // The pool of `device`, created on first use (nullptr when caching is off). Pools live
  // as long as the allocator (forever), so a lookup is one atomic load.
  BlockPool* pool(int device, bool create) noexcept {
    if (!caching_enabled() || device < 0 || device >= kMaxDevices) return nullptr;
    BlockPool* p = pools_[device].load(std::memory_order_acquire);
    if (p != nullptr || !create) return p;
    std::lock_guard<std::mutex> lock(pools_mu_);
    p = pools_[device].load(std::memory_order_relaxed);
    if (p == nullptr) {
      p = new (std::nothrow) BlockPool(std::make_unique<CudaPoolBackend>(device));
      pools_[device].store(p, std::memory_order_release);
    }
    return p;
  }

  Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept {
    if (alignment == 0) alignment = kCudaMallocAlignment;
    SLIMCUDA_CHECK_OR_RETURN(is_power_of_two(alignment), Error::InvalidArgument, "alignment %zu is not a power of two",
                             alignment);
    if (nbytes == 0) return static_cast<void*>(nullptr);
    const int device = ctx.device();
    if (routes_.load(std::memory_order_acquire) > 0) {
      if (BlockPool* p = routed_pool(ctx.stream(), device)) {
        SLIMCUDA_CHECK_OR_RETURN(alignment <= kCudaMallocAlignment, Error::NotSupported,
                                 "alignment %zu in a graph's private pool (at most %zu)", alignment,
                                 kCudaMallocAlignment);
        void* out = nullptr;
        SLIMCUDA_RETURN_IF_ERROR(p->allocate(nbytes, ctx.stream(), &out));
        return out;
      }
    }
    if (alignment <= kCudaMallocAlignment) {
      if (BlockPool* p = pool(device, true)) {
        void* out = nullptr;
        SLIMCUDA_RETURN_IF_ERROR(p->allocate(nbytes, ctx.stream(), &out));
        return out;
      }
    }
    // cudaMalloc aligns to 256; larger alignments over-allocate and remember the base.
    const size_t extra = alignment > kCudaMallocAlignment ? alignment - kCudaMallocAlignment : 0;
    SLIMCUDA_CHECK_OR_RETURN(nbytes <= SIZE_MAX - extra, Error::MemoryAllocationFailed,
                             "%zu bytes aligned to %zu overflows size_t", nbytes, alignment);
    cuda::DeviceGuard guard(device);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    void* base = nullptr;
    if (const cudaError_t err = cudaMalloc(&base, nbytes + extra); err != cudaSuccess) {
      return cuda::allocation_error(err, "cudaMalloc");
    }
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(base) + alignment - 1) & ~(uintptr_t{alignment} - 1);
    void* user = reinterpret_cast<void*>(aligned);
    try {
      std::lock_guard<std::mutex> lock(direct_mu_);
      direct_[user] = Direct{base, device};
    } catch (const std::bad_alloc&) {
      if (cudaFree(base) != cudaSuccess) (void)cudaGetLastError();
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    }
    return user;
  }

  Error free(void* ptr, int device) noexcept {
    if (ptr == nullptr) return Error::Ok;
    if (BlockPool* p = pool(device, false); p != nullptr && p->free_if_owned(ptr)) return Error::Ok;
    if (private_count_.load(std::memory_order_acquire) > 0) {
      std::shared_lock<std::shared_mutex> lock(private_mu_);
      for (const auto& [pool, pool_device] : private_) {
        if (pool->free_if_owned(ptr)) {
          SLIMCUDA_CHECK_OR_RETURN(pool_device == device, Error::InvalidArgument, "%p is memory of device %d, not %d",
                                   ptr, pool_device, device);
          return Error::Ok;
        }
      }
    }
    // Not a block of this device's pool: say what it is instead, freeing nothing.
    const int count = cuda::device_count();
    for (int d = 0; d < count && d < kMaxDevices; ++d) {
      BlockPool* p = pool(d, false);
      if (p == nullptr) continue;
      SLIMCUDA_CHECK_OR_RETURN(!p->owns(ptr), Error::InvalidArgument, "%p is memory of device %d, not %d", ptr, d,
                               device);
      SLIMCUDA_CHECK_OR_RETURN(!p->holds(ptr), Error::InvalidArgument,
                               "%p is not a block in use on device %d (freed twice, or not a pointer an allocation "
                               "returned)",
                               ptr, d);
    }
    Direct direct{};
    {
      std::lock_guard<std::mutex> lock(direct_mu_);
      auto it = direct_.find(ptr);
      SLIMCUDA_CHECK_OR_RETURN(it != direct_.end(), Error::InvalidArgument,
                               "%p is not device memory slimcuda allocated (or it was freed already)", ptr);
      SLIMCUDA_CHECK_OR_RETURN(it->second.device == device, Error::InvalidArgument, "%p is memory of device %d, not %d",
                               ptr, it->second.device, device);
      direct = it->second;
      direct_.erase(it);
    }
    cuda::DeviceGuard guard(device);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_CUDA_TRY(cudaFree(direct.base));
    return Error::Ok;
  }

  // Private pools (graphs): known to free(), and routed to by stream while a route lives.
  void add_private(BlockPool* p, int device) {
    std::unique_lock<std::shared_mutex> lock(private_mu_);
    private_.emplace(p, device);
    private_count_.fetch_add(1, std::memory_order_release);
  }
  void remove_private(BlockPool* p) noexcept {
    std::unique_lock<std::shared_mutex> lock(private_mu_);
    if (private_.erase(p) != 0) private_count_.fetch_sub(1, std::memory_order_release);
  }
  Error add_route(cudaStream_t stream, BlockPool* p, int device) noexcept {
    try {
      std::unique_lock<std::shared_mutex> lock(private_mu_);
      SLIMCUDA_CHECK_OR_RETURN(routes_map_.count(stream) == 0, Error::InvalidArgument,
                               "stream %p is already routed to a graph's pool", static_cast<void*>(stream));
      routes_map_.emplace(stream, Route{p, device});
      routes_.fetch_add(1, std::memory_order_release);
      return Error::Ok;
    } catch (const std::bad_alloc&) {
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    }
  }
  void remove_route(cudaStream_t stream) noexcept {
    std::unique_lock<std::shared_mutex> lock(private_mu_);
    if (routes_map_.erase(stream) != 0) routes_.fetch_sub(1, std::memory_order_release);
  }

 private:
  struct Route {
    BlockPool* pool;
    int device;
  };
  BlockPool* routed_pool(cudaStream_t stream, int device) noexcept {
    std::shared_lock<std::shared_mutex> lock(private_mu_);
    auto it = routes_map_.find(stream);
    // The legacy default stream exists on every device: route only the pool's own.
    return it != routes_map_.end() && it->second.device == device ? it->second.pool : nullptr;
  }

  std::shared_mutex private_mu_;
  std::unordered_map<BlockPool*, int> private_;  // pool -> device
  std::atomic<int> private_count_{0};
  std::unordered_map<cudaStream_t, Route> routes_map_;
  std::atomic<int> routes_{0};
  std::mutex pools_mu_;  // creation only
  std::atomic<BlockPool*> pools_[kMaxDevices] = {};
  std::mutex direct_mu_;
  std::unordered_map<void*, Direct> direct_;
};

Allocator& the_allocator() {
  // Never destroyed: blocks may be freed by static destructors after main returns, and
  // the CUDA runtime may already be unloading then.
  static Allocator* instance = new Allocator();
  return *instance;
}

}  // namespace

struct PrivatePool::Impl {
  PrivateBackend* backend = nullptr;  // owned by pool
  std::unique_ptr<BlockPool> pool;
};

PrivatePool::PrivatePool(int device, std::unique_ptr<Impl> impl) noexcept : device_(device), impl_(std::move(impl)) {}

Error PrivatePool::create(int device, std::unique_ptr<PrivatePool>* out) noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    auto backend = std::make_unique<PrivateBackend>(device);
    impl->backend = backend.get();
    impl->pool = std::make_unique<BlockPool>(std::move(backend));
    the_allocator().add_private(impl->pool.get(), device);
    out->reset(new PrivatePool(device, std::move(impl)));
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

PrivatePool::~PrivatePool() {
  if (impl_ == nullptr) return;
  the_allocator().remove_private(impl_->pool.get());
  impl_->backend->set_capturing(false);
  impl_->pool.reset();  // waits for the device, then its backend frees every segment
}

void PrivatePool::set_capturing(bool capturing) noexcept { impl_->backend->set_capturing(capturing); }

PoolStats PrivatePool::stats() const noexcept { return impl_->pool->stats(); }

StreamRoute::StreamRoute(cudaStream_t stream, PrivatePool* pool) noexcept : stream_(stream) {
  error_ = the_allocator().add_route(stream, pool->impl_->pool.get(), pool->device());
}

StreamRoute::~StreamRoute() {
  if (error_ == Error::Ok) the_allocator().remove_route(stream_);
}

Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept {
  return the_allocator().allocate(nbytes, alignment, ctx);
}

Error free(void* ptr, int device) noexcept { return the_allocator().free(ptr, device); }

PoolStats stats(int device) noexcept {
  BlockPool* p = the_allocator().pool(device, false);
  return p != nullptr ? p->stats() : PoolStats{};
}

void empty_cache(int device) noexcept {
  if (BlockPool* p = the_allocator().pool(device, false)) p->empty_cache();
}

void retire_stream(void* stream) noexcept {
  if (stream == nullptr) return;
  const int count = cuda::device_count();
  for (int d = 0; d < count && d < kMaxDevices; ++d) {
    if (BlockPool* p = the_allocator().pool(d, false)) p->retire_stream(stream);
  }
}

}  // namespace slimcuda::device_memory
