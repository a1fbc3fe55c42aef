#pragma once

#include <cstddef>

#include "slimcuda/error.h"
#include "slimcuda/result.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// Allocates and copies memory of one device type. Implementations are thread-safe.
///
/// Common contract (the CUDA allocator's, with the caller stream, in slimcuda.h):
///  - allocate: checks alignment first (0 = the allocator's natural alignment, else a power of two,
///    InvalidArgument otherwise), then the index; nbytes 0 returns nullptr and allocates nothing; failure
///    is MemoryAllocationFailed. Free the result with deallocate() of the same allocator
///    and index, never with free()/cudaFree().
///  - copies are blocking: when they return, the host buffer may be reused or freed.
///    Checks in order: null dst or src -> InvalidArgument (even for 0 bytes); bad index ->
///    InvalidArgument; 0 bytes -> Ok with nothing done.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;

  [[nodiscard]] virtual Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) noexcept = 0;
  /// Frees memory from allocate(); nullptr is a no-op.
  virtual void deallocate(void* ptr, DeviceIndex index) noexcept = 0;
  [[nodiscard]] virtual Error copy_host_to_device(void* dst, const void* src, size_t nbytes,
                                                  DeviceIndex index) noexcept = 0;
  [[nodiscard]] virtual Error copy_device_to_host(void* dst, const void* src, size_t nbytes,
                                                  DeviceIndex index) noexcept = 0;
  [[nodiscard]] virtual DeviceType device_type() const noexcept = 0;
};

/// The registered allocator for `type`; nullptr if none. CPU and CUDA are registered
/// when libslimcuda.so loads. The returned allocator lives until the process exits.
[[nodiscard]] DeviceAllocator* get_device_allocator(DeviceType type) noexcept;

/// Replaces the allocator for allocator->device_type() (for tests and custom devices);
/// returns the previous one. The caller keeps `allocator` alive while registered.
DeviceAllocator* register_device_allocator(DeviceAllocator* allocator) noexcept;

}  // namespace slimcuda
