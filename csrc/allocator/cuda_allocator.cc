// The CUDA device allocator: cudaMalloc-backed memory and the blocking copy contract on
// the caller stream (see device_allocator.h and slimcuda.h for the contract).
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "csrc/allocator/block_pool.h"
#include "csrc/allocator/cuda_allocator.h"
#include "csrc/allocator/pinned_pool.h"
#include "csrc/allocator/staged_copy.h"

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/device_allocator.h"

namespace slimcuda {
namespace {

constexpr size_t kCudaMallocAlignment = 256;  // what cudaMalloc guarantees

bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

constexpr int kMaxDevices = 128;  // DeviceIndex is int8

// The caching pool's device side for one GPU: cudaMalloc'ed segments and pooled events.
class CudaPoolBackend final : public PoolBackend {
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
      (void)cudaGetLastError();
      *out = nullptr;
      return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal,
                            "cudaMalloc", "%zu bytes on device %d: %s", bytes, device_, cudaGetErrorString(err));
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
  void synchronize() noexcept override {
    cuda::DeviceGuard guard(device_);
    if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  int device_;
  std::vector<cudaEvent_t> events_;
};

bool caching_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("SLIMCUDA_CACHING_ALLOCATOR");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

class CudaAllocator final : public DeviceAllocator {
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

  // Frees `ptr` if a pool holds it: the pool of `device` is asked first, then the others
  // (a block freed under another index is still found). False when no pool holds it.
  // One pool lock per pool asked.
  bool free_cached(void* ptr, int device) noexcept {
    if (BlockPool* p = pool(device, false); p != nullptr && p->free_if_owned(ptr)) return true;
    const int count = cuda::device_count();
    for (int d = 0; d < count && d < kMaxDevices; ++d) {
      if (d == device) continue;
      if (BlockPool* p = pool(d, false); p != nullptr && p->free_if_owned(ptr)) return true;
    }
    return false;
  }

  // For a pointer no pool just freed as `device`'s: InvalidArgument when it is another
  // device's block in use, or points into cached memory (freed twice, or never returned
  // by allocate); such a pointer must not reach cudaFree, which could release a whole
  // segment the pool still hands out.
  Error check_not_cached(void* ptr, int device) noexcept {
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
    return Error::Ok;
  }

  Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) noexcept override {
    if (alignment == 0) alignment = kCudaMallocAlignment;
    SLIMCUDA_CHECK_OR_RETURN(is_power_of_two(alignment), Error::InvalidArgument,
                             "alignment %zu is not a power of two", alignment);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(index, &device));
    if (nbytes == 0) return static_cast<void*>(nullptr);
    if (alignment <= kCudaMallocAlignment) {
      if (BlockPool* p = pool(device, true)) {
        // Cached blocks are ordered on the stream they are allocated on: the caller
        // stream, else the legacy default stream.
        void* out = nullptr;
        SLIMCUDA_RETURN_IF_ERROR(p->allocate(nbytes, getCallerStream().value_or(nullptr), &out));
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
    const cudaError_t err = cudaMalloc(&base, nbytes + extra);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal,
                            __func__, "cudaMalloc(%zu) on device %d: %s: %s", nbytes + extra, device,
                            cudaGetErrorName(err), cudaGetErrorString(err));
    }
    if (extra == 0) return base;
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(base) + alignment - 1) & ~(uintptr_t{alignment} - 1);
    void* user = reinterpret_cast<void*>(aligned);
    if (user != base) {
      std::lock_guard<std::mutex> lock(mutex_);
      offsets_[user] = base;
    }
    return user;
  }

  void deallocate(void* ptr, DeviceIndex index) noexcept override {
    if (ptr == nullptr) return;
    if (caching_enabled()) {
      int device = -1;
      if (cuda::resolve_device(index, &device) != Error::Ok) return;
      if (free_cached(ptr, device) || check_not_cached(ptr, device) != Error::Ok) return;  // reason recorded
    }
    void* base = ptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = offsets_.find(ptr);
      if (it != offsets_.end()) {
        base = it->second;
        offsets_.erase(it);
      }
    }
    int device = -1;
    if (cuda::resolve_device(index, &device) != Error::Ok) return;  // reason already recorded
    cuda::DeviceGuard guard(device);
    if (guard.error() != Error::Ok) return;
    const cudaError_t err = cudaFree(base);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      set_last_error(Error::Internal, __func__, "cudaFree on device %d: %s: %s", device, cudaGetErrorName(err),
                     cudaGetErrorString(err));
    }
  }

  Error copy_host_to_device(void* dst, const void* src, size_t nbytes, DeviceIndex index) noexcept override {
    return copy(dst, src, nbytes, index, cudaMemcpyHostToDevice, __func__);
  }

  Error copy_device_to_host(void* dst, const void* src, size_t nbytes, DeviceIndex index) noexcept override {
    return copy(dst, src, nbytes, index, cudaMemcpyDeviceToHost, __func__);
  }

  DeviceType device_type() const noexcept override { return DeviceType::CUDA; }

 private:
  static Error copy(void* dst, const void* src, size_t nbytes, DeviceIndex index, cudaMemcpyKind kind,
                    const char* function) noexcept {
    if (dst == nullptr || src == nullptr) {
      return set_last_error(Error::InvalidArgument, function, "null %s", dst == nullptr ? "dst" : "src");
    }
    const std::optional<cudaStream_t> caller = getCallerStream();
    int device = -1;
    if (caller.has_value()) {
      SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device_for_stream(index, *caller, &device));
    } else {
      SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(index, &device));
    }
    if (nbytes == 0) return Error::Ok;
    cuda::DeviceGuard guard(device);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    const bool to_device = kind == cudaMemcpyHostToDevice;
    if (should_stage(to_device ? src : dst, nbytes)) {  // big and pageable: through pinned chunks
      return staged_copy(dst, src, nbytes, to_device, caller.value_or(nullptr), device);
    }
    if (!caller.has_value()) {
      SLIMCUDA_CUDA_TRY(cudaMemcpy(dst, src, nbytes, kind));
      return Error::Ok;
    }
    // Ordered after the work already on the caller's stream; the wait covers this copy
    // only, so the host buffer is free to reuse when we return.
    SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, kind, *caller));
    return cuda::wait_for_stream(*caller, device);
  }

  std::mutex mutex_;
  std::unordered_map<void*, void*> offsets_;  // aligned pointer -> cudaMalloc base
  std::mutex pools_mu_;  // creation only
  std::atomic<BlockPool*> pools_[kMaxDevices] = {};
};

CudaAllocator& the_cuda_allocator() {
  // Never destroyed: blocks may be freed by static destructors after main returns, and
  // the CUDA runtime may already be unloading then.
  static CudaAllocator* instance = new CudaAllocator();
  return *instance;
}

}  // namespace

DeviceAllocator* cuda_allocator() noexcept { return &the_cuda_allocator(); }

Error cuda_memory_stats(int device_index, PoolStats* out) noexcept {
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
  BlockPool* p = the_cuda_allocator().pool(device, false);
  *out = p != nullptr ? p->stats() : PoolStats{};
  return Error::Ok;
}

Error cuda_empty_cache(int device_index) noexcept {
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
  if (BlockPool* p = the_cuda_allocator().pool(device, false)) p->empty_cache();
  return Error::Ok;
}

bool cuda_caching_enabled() noexcept { return caching_enabled(); }

Error cuda_free_checked(void* ptr, int device, bool* freed) noexcept {
  *freed = false;
  if (ptr == nullptr || !caching_enabled()) return Error::Ok;
  CudaAllocator& a = the_cuda_allocator();
  if (BlockPool* p = a.pool(device, false); p != nullptr && p->free_if_owned(ptr)) {
    *freed = true;
    return Error::Ok;
  }
  return a.check_not_cached(ptr, device);
}

void cuda_retire_stream(void* stream) noexcept {
  if (stream == nullptr) return;
  const int count = cuda::device_count();
  for (int d = 0; d < count && d < kMaxDevices; ++d) {
    if (BlockPool* p = the_cuda_allocator().pool(d, false)) p->retire_stream(stream);
  }
  pinned_retire_stream(stream);
}

}  // namespace slimcuda
