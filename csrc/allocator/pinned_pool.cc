// The cached pinned host pool (see pinned_pool.h).
#include "csrc/allocator/pinned_pool.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "csrc/allocator/cuda_allocator.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "slimcuda/caller_stream.h"

namespace slimcuda {
namespace {

// Page-locked memory usable from every GPU (portable), with the contract's error codes.
Error host_alloc(size_t bytes, void** out) noexcept {
  const cudaError_t err = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    *out = nullptr;
    return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal,
                          "cudaHostAlloc", "%zu bytes: %s", bytes, cudaGetErrorString(err));
  }
  return Error::Ok;
}

// A marker is an event on the stream's own device (events cannot be recorded on another
// device's stream); the pool keeps used ones per device for reuse.
struct Marker {
  cudaEvent_t event;
  int device;
};

class PinnedPoolBackend final : public PoolBackend {
 public:
  ~PinnedPoolBackend() override {
    for (std::vector<Marker*>& list : spare_) {
      for (Marker* m : list) {
        if (cudaEventDestroy(m->event) != cudaSuccess) (void)cudaGetLastError();
        delete m;
      }
    }
  }
  Error allocate_segment(size_t bytes, void** out) noexcept override { return host_alloc(bytes, out); }
  void free_segment(void* ptr) noexcept override {
    if (cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
  }
  void* record(void* stream) noexcept override {
    int device = -1;
    if (cuda::resolve_device_for_stream(-1, static_cast<cudaStream_t>(stream), &device) != Error::Ok) return nullptr;
    if (device < 0 || device >= static_cast<int>(sizeof(spare_) / sizeof(spare_[0]))) return nullptr;
    cuda::DeviceGuard guard(device);
    if (guard.error() != Error::Ok) return nullptr;
    Marker* m = nullptr;
    if (!spare_[device].empty()) {
      m = spare_[device].back();
      spare_[device].pop_back();
    } else {
      m = new (std::nothrow) Marker{nullptr, device};
      if (m == nullptr) return nullptr;
      if (cudaEventCreateWithFlags(&m->event, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        delete m;
        return nullptr;  // no marker: the block is not handed to another stream yet
      }
    }
    if (cudaEventRecord(m->event, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      (void)cudaGetLastError();
      spare_[device].push_back(m);
      return nullptr;
    }
    return m;
  }
  bool done(void* marker) noexcept override {
    const cudaError_t err = cudaEventQuery(static_cast<Marker*>(marker)->event);
    if (err != cudaSuccess) (void)cudaGetLastError();  // cudaErrorNotReady: still running
    return err == cudaSuccess;
  }
  void release_marker(void* marker) noexcept override {
    if (marker == nullptr) return;
    Marker* m = static_cast<Marker*>(marker);
    spare_[m->device].push_back(m);  // under the pool's lock
  }
  void synchronize() noexcept override {
    // Any GPU may still be copying from or to a pinned block.
    for (int d = 0; d < cuda::device_count(); ++d) {
      cuda::DeviceGuard guard(d);
      if (guard.error() == Error::Ok && cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
    }
  }

 private:
  std::vector<Marker*> spare_[128];  // per device (DeviceIndex is int8)
};

std::once_flag pool_once;
BlockPool* the_pool = nullptr;  // never destroyed: blocks may be freed during exit

BlockPool* pool(bool create) {
  if (!cuda_caching_enabled()) return nullptr;
  if (create) {
    std::call_once(pool_once, [] { the_pool = new (std::nothrow) BlockPool(std::make_unique<PinnedPoolBackend>()); });
  }
  return the_pool;
}

}  // namespace

Error pinned_allocate(size_t nbytes, void** out) noexcept {
  *out = nullptr;
  if (cuda::device_count() == 0) {
    return set_last_error(Error::NotSupported, "pinned_allocate", "pinned memory needs a CUDA driver and device: %s",
                          last_error_message());
  }
  if (nbytes == 0) return Error::Ok;
  if (BlockPool* p = pool(true)) return p->allocate(nbytes, getCallerStream().value_or(nullptr), out);
  return host_alloc(nbytes, out);
}

void pinned_free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  // With caching on every pinned block is the pool's (the setting is read once); off, it
  // came from cudaHostAlloc. cudaFreeHost fails only while the runtime unloads at exit.
  if (BlockPool* p = pool(false)) {
    (void)p->free(ptr);
    return;
  }
  if (cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
}

PoolStats pinned_memory_stats() noexcept {
  BlockPool* p = pool(false);
  return p != nullptr ? p->stats() : PoolStats{};
}

void pinned_empty_cache() noexcept {
  if (BlockPool* p = pool(false)) p->empty_cache();
}

void pinned_retire_stream(void* stream) noexcept {
  if (BlockPool* p = pool(false)) p->retire_stream(stream);
}

}  // namespace slimcuda
