// The CUDA device allocator: cudaMalloc-backed memory and the blocking copy contract on
// the caller stream (see device_allocator.h and slimcuda.h for the contract).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/device_allocator.h"

namespace slimcuda {
namespace {

constexpr size_t kCudaMallocAlignment = 256;  // what cudaMalloc guarantees

bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

class CudaAllocator final : public DeviceAllocator {
 public:
  Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) noexcept override {
    if (alignment == 0) alignment = kCudaMallocAlignment;
    SLIMCUDA_CHECK_OR_RETURN(is_power_of_two(alignment), Error::InvalidArgument,
                             "alignment %zu is not a power of two", alignment);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(index, &device));
    if (nbytes == 0) return static_cast<void*>(nullptr);
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
};

}  // namespace

DeviceAllocator* cuda_allocator() noexcept {
  static CudaAllocator instance;
  return &instance;
}

}  // namespace slimcuda
