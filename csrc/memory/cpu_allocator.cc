// SPDX-License-Identifier: Apache-2.0
// Host memory as a "device": the heap, copies are memmove.
#include <cstdlib>
#include <cstring>

#include "csrc/memory/device_allocator.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr size_t kCpuNaturalAlignment = 64;  // a cache line; enough for any vector type

bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

class CpuAllocator final : public DeviceAllocator {
 public:
  Result<void*> allocate(size_t nbytes, size_t alignment, [[maybe_unused]] const StreamContext& ctx) noexcept override {
    if (alignment == 0) alignment = kCpuNaturalAlignment;
    SLIMCUDA_CHECK_OR_RETURN(is_power_of_two(alignment), Error::InvalidArgument, "alignment %zu is not a power of two",
                             alignment);
    if (nbytes == 0) return static_cast<void*>(nullptr);
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = nullptr;
    if (posix_memalign(&p, alignment, nbytes) != 0) {
      return set_last_error(Error::MemoryAllocationFailed, "%zu bytes aligned to %zu", nbytes, alignment);
    }
    return p;
  }
  Error deallocate(void* ptr, [[maybe_unused]] int device) noexcept override {
    std::free(ptr);
    return Error::Ok;
  }
  Error copy_host_to_device(void* dst, const void* src, size_t nbytes, const StreamContext&) noexcept override {
    return copy(dst, src, nbytes);
  }
  Error copy_device_to_host(void* dst, const void* src, size_t nbytes, const StreamContext&) noexcept override {
    return copy(dst, src, nbytes);
  }
  DeviceType device_type() const noexcept override { return DeviceType::CPU; }

 private:
  static Error copy(void* dst, const void* src, size_t nbytes) noexcept {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                             dst == nullptr ? "dst" : "src");
    if (nbytes != 0) std::memmove(dst, src, nbytes);
    return Error::Ok;
  }
};

}  // namespace

DeviceAllocator* cpu_allocator() noexcept {
  static CpuAllocator instance;
  return &instance;
}

}  // namespace slimcuda
