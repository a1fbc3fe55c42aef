#include "csrc/tensor/storage.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <new>

#include "csrc/allocator/pinned_pool.h"
#include "csrc/cuda/device.h"
#include "slimcuda/device_allocator.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

Error Storage::allocate(size_t nbytes, Device device, std::shared_ptr<Storage>* out, const char* function) noexcept {
  DeviceAllocator* allocator = get_device_allocator(device.type);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, allocator != nullptr, Error::NotSupported, "no allocator for device type %d",
                              static_cast<int>(device.type));
  if (device.is_cuda() && device.index == kCurrentDevice) {
    int current = 0;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(kCurrentDevice, &current));
    device.index = static_cast<DeviceIndex>(current);
  }
  Result<void*> r = allocator->allocate(nbytes, device.index, 0);
  if (!r.ok()) return r.error();
  Storage* s = new (std::nothrow) Storage(r.value(), nbytes, device, Kind::Device);
  if (s == nullptr) {
    allocator->deallocate(r.value(), device.index);
    return set_last_error(Error::MemoryAllocationFailed, function, "out of host memory");
  }
  out->reset(s);
  return Error::Ok;
}

Error Storage::allocate_pinned(size_t nbytes, std::shared_ptr<Storage>* out, const char* function) noexcept {
  void* p = nullptr;
  if (nbytes > 0) {
    if (cuda::device_count() == 0) {
      return set_last_error(Error::NotSupported, function,
                            "pinned memory needs a CUDA driver and device: %s", last_error_message());
    }
    const Error e = pinned_allocate(nbytes, &p);  // the cached pinned pool (pinned_pool.h)
    if (e != Error::Ok) {
      return set_last_error(e, function, "pinned allocation of %zu bytes: %s", nbytes, last_error_message());
    }
  }
  Storage* s = new (std::nothrow) Storage(p, nbytes, Device{DeviceType::CPU, -1}, Kind::Pinned);
  if (s == nullptr) {
    pinned_free(p);
    return set_last_error(Error::MemoryAllocationFailed, function, "out of host memory");
  }
  out->reset(s);
  return Error::Ok;
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes, Device device) {
  return std::shared_ptr<Storage>(new Storage(data, nbytes, device, Kind::Borrowed));
}

void Storage::retain_owner(std::shared_ptr<const void> owner) noexcept {
  static std::mutex* mu = new std::mutex();  // rare (a model output that borrows), never destroyed
  std::lock_guard<std::mutex> lock(*mu);
  if (owner_ == nullptr) owner_ = std::move(owner);
}

Storage::~Storage() {
  if (data_ == nullptr) return;
  switch (kind_) {
    case Kind::Borrowed:
      break;
    case Kind::Device:
      get_device_allocator(device_.type)->deallocate(data_, device_.index);
      break;
    case Kind::Pinned:
      pinned_free(data_);
      break;
  }
}

}  // namespace slimcuda
