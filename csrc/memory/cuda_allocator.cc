// SPDX-License-Identifier: Apache-2.0
// The CUDA DeviceAllocator: the caching device allocator and the transfer engine behind the
// registry's interface.
#include "csrc/memory/device_allocator.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/transfer.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

class CudaAllocator final : public DeviceAllocator {
 public:
  Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept override {
    return device_memory::allocate(nbytes, alignment, ctx);
  }
  Error deallocate(void* ptr, int device) noexcept override { return device_memory::free(ptr, device); }
  Error copy_host_to_device(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept override {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                             dst == nullptr ? "dst" : "src");
    return transfer::host_to_device(dst, src, nbytes, ctx);
  }
  Error copy_device_to_host(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept override {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                             dst == nullptr ? "dst" : "src");
    return transfer::device_to_host(dst, src, nbytes, ctx);
  }
  DeviceType device_type() const noexcept override { return DeviceType::CUDA; }
};

}  // namespace

DeviceAllocator* cuda_allocator() noexcept {
  static CudaAllocator* instance = new CudaAllocator();  // never destroyed: frees may come at exit
  return instance;
}

}  // namespace slimcuda
