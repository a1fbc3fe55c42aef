#include <cstdlib>
#include <cstring>

#include "slimcuda/device_allocator.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr size_t kCpuNaturalAlignment = 64;  // a cache line; enough for any vector type

bool is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Host memory as a "device": index -1 or 0, copies are memcpy.
class CpuAllocator final : public DeviceAllocator {
 public:
  Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) noexcept override {
    if (alignment == 0) alignment = kCpuNaturalAlignment;
    SLIMCUDA_CHECK_OR_RETURN(is_power_of_two(alignment), Error::InvalidArgument,
                             "alignment %zu is not a power of two", alignment);
    SLIMCUDA_RETURN_IF_ERROR(check_index(index));
    if (nbytes == 0) return static_cast<void*>(nullptr);
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = nullptr;
    if (posix_memalign(&p, alignment, nbytes) != 0) {
      return set_last_error(Error::MemoryAllocationFailed, __func__, "%zu bytes aligned to %zu", nbytes, alignment);
    }
    return p;
  }

  void deallocate(void* ptr, DeviceIndex) noexcept override { std::free(ptr); }

  Error copy_host_to_device(void* dst, const void* src, size_t nbytes, DeviceIndex index) noexcept override {
    return copy(dst, src, nbytes, index);
  }
  Error copy_device_to_host(void* dst, const void* src, size_t nbytes, DeviceIndex index) noexcept override {
    return copy(dst, src, nbytes, index);
  }

  DeviceType device_type() const noexcept override { return DeviceType::CPU; }

 private:
  static Error check_index(DeviceIndex index) noexcept {
    SLIMCUDA_CHECK_OR_RETURN(index == -1 || index == 0, Error::InvalidArgument, "CPU device index %d (want -1 or 0)",
                             index);
    return Error::Ok;
  }
  static Error copy(void* dst, const void* src, size_t nbytes, DeviceIndex index) noexcept {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                             dst == nullptr ? "dst" : "src");
    SLIMCUDA_RETURN_IF_ERROR(check_index(index));
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
