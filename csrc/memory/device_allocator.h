// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"
#include "slimcuda/result.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// Allocates and copies memory of one device type: what a tensor's Storage uses. The CUDA
/// one is the caching device allocator (device_memory) with the transfer engine's copies;
/// the CPU one is the host heap. Implementations are thread-safe.
///
/// Contract:
///  - allocate: alignment 0 = the allocator's natural alignment, else a power of two
///    (InvalidArgument otherwise); nbytes 0 returns nullptr and allocates nothing; failure
///    is MemoryAllocationFailed. CUDA memory goes to ctx.device(), ordered on ctx.stream().
///    Free the result with deallocate() of the same allocator and device, never with
///    free()/cudaFree().
///  - copies are blocking (transfer.h): when they return, the host buffer may be reused.
///    Null dst or src -> InvalidArgument (even for 0 bytes); 0 bytes -> Ok, nothing done.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;

  [[nodiscard]] virtual Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept = 0;
  /// Frees memory from allocate() of `device` (ignored by the CPU); nullptr is a no-op.
  /// The CUDA rule: device_memory::free.
  [[nodiscard]] virtual Error deallocate(void* ptr, int device) noexcept = 0;
  [[nodiscard]] virtual Error copy_host_to_device(void* dst, const void* src, size_t nbytes,
                                                  const StreamContext& ctx) noexcept = 0;
  [[nodiscard]] virtual Error copy_device_to_host(void* dst, const void* src, size_t nbytes,
                                                  const StreamContext& ctx) noexcept = 0;
  [[nodiscard]] virtual DeviceType device_type() const noexcept = 0;
};

/// The registered allocator for `type`; nullptr if none. CPU and CUDA are registered
/// when libslimcuda.so loads. The returned allocator lives until the process exits.
[[nodiscard]] DeviceAllocator* get_device_allocator(DeviceType type) noexcept;

/// Replaces the allocator for allocator->device_type() (for tests and custom devices);
/// returns the previous one. The caller keeps `allocator` alive while registered.
DeviceAllocator* register_device_allocator(DeviceAllocator* allocator) noexcept;

}  // namespace slimcuda
