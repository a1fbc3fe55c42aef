// SPDX-License-Identifier: Apache-2.0
// The cached pinned host pool (see pinned_pool.h).
#include "csrc/memory/pinned_pool.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "csrc/core/limits.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/caching_config.h"

namespace slimcuda {
namespace {

// Page-locked memory usable from every GPU (portable), with the contract's error codes.
Error host_alloc(size_t bytes, void** out) noexcept {
  const cudaError_t err = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    *out = nullptr;
    return cuda::allocation_error(err, "cudaHostAlloc: pinned host memory");
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
  // The device of each stream blocks were allocated on, as the allocation's StreamContext
  // said: a marker must be recorded on the stream's own device, and asking CUDA again here
  // would repeat what the entry layer resolved.
  void note_stream(void* stream, int device) {
    std::lock_guard<std::mutex> lock(devices_mu_);
    devices_[stream] = device;
  }
  void forget_stream(void* stream) {
    std::lock_guard<std::mutex> lock(devices_mu_);
    devices_.erase(stream);
  }
  void* record(void* stream) noexcept override {
    int device = -1;
    {
      std::lock_guard<std::mutex> lock(devices_mu_);
      const auto known = devices_.find(stream);
      if (known == devices_.end()) return nullptr;  // no marker: the block waits for its stream's retirement
      device = known->second;
    }
    if (device < 0 || device >= kMaxDevices) return nullptr;
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
  bool synchronize() noexcept override {
    // Any GPU may still be copying from or to a pinned block; not while a capture is
    // underway (a device-wide synchronize would invalidate it).
    for (int d = 0; d < cuda::device_count(); ++d) {
      if (!cuda::synchronize_device_outside_captures(d)) return false;
    }
    return true;
  }
  void synchronize_stream(void* stream) noexcept override {
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  std::vector<Marker*> spare_[kMaxDevices];  // per device
  std::mutex devices_mu_;                    // devices_ is written outside the pool's lock
  std::unordered_map<void*, int> devices_;   // stream -> its device
};

std::once_flag pool_once;
BlockPool* the_pool = nullptr;  // never destroyed: blocks may be freed during exit
PinnedPoolBackend* the_backend = nullptr;

BlockPool* pool(bool create) {
  if (!caching_enabled()) return nullptr;
  if (create) {
    std::call_once(pool_once, [] {
      auto backend = std::make_unique<PinnedPoolBackend>();
      PinnedPoolBackend* raw = backend.get();
      the_pool = new (std::nothrow) BlockPool(std::move(backend));
      if (the_pool != nullptr) the_backend = raw;
    });
  }
  return the_pool;
}

}  // namespace

Error pinned_allocate(size_t nbytes, const StreamContext& ctx, void** out) noexcept {
  *out = nullptr;
  if (cuda::device_count() == 0) {
    return set_last_error(Error::NotSupported, "pinned memory needs a CUDA driver and device: %s",
                          last_error_message());
  }
  if (nbytes == 0) return Error::Ok;
  if (BlockPool* p = pool(true)) {
    // (The legacy default stream, nullptr, exists on every device: the last device it was
    // used for is where its markers go, as the current device was before.)
    try {
      the_backend->note_stream(ctx.stream(), ctx.device());
    } catch (const std::bad_alloc&) {
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    }
    return p->allocate(nbytes, ctx.stream(), out);
  }
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
  if (BlockPool* p = pool(false)) {
    p->retire_stream(stream);
    the_backend->forget_stream(stream);  // a later stream at this address may be another device's
  }
}

}  // namespace slimcuda
