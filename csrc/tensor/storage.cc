// SPDX-License-Identifier: Apache-2.0
#include "csrc/tensor/storage.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <new>

#include "csrc/cuda/device.h"
#include "csrc/memory/device_allocator.h"
#include "csrc/memory/pinned_pool.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

Error Storage::allocate(size_t nbytes, Device device, const StreamContext& ctx,
                        std::shared_ptr<Storage>* out) noexcept {
  DeviceAllocator* allocator = get_device_allocator(device.type);
  SLIMCUDA_CHECK_OR_RETURN(allocator != nullptr, Error::NotSupported, "no allocator for device type %d",
                           static_cast<int>(device.type));
  SLIMCUDA_CHECK_OR_RETURN(!device.is_cuda() || device.index >= 0, Error::Internal, "unresolved CUDA device index %d",
                           device.index);
  Result<void*> r = allocator->allocate(nbytes, 0, ctx.for_allocation(device.index));
  if (!r.ok()) return r.error();
  Storage* s = new (std::nothrow) Storage(r.value(), nbytes, device, Kind::Device);
  if (s == nullptr) {
    (void)allocator->deallocate(r.value(), device.index);
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
  out->reset(s);
  return Error::Ok;
}

Error Storage::allocate_pinned(size_t nbytes, const StreamContext& ctx, std::shared_ptr<Storage>* out) noexcept {
  void* p = nullptr;
  if (nbytes > 0) {
    if (cuda::device_count() == 0) {
      return set_last_error(Error::NotSupported, "pinned memory needs a CUDA driver and device: %s",
                            last_error_message());
    }
    const Error e = pinned_allocate(nbytes, ctx, &p);  // the cached pinned pool (pinned_pool.h)
    if (e != Error::Ok) {
      return set_last_error(e, "pinned allocation of %zu bytes: %s", nbytes, last_error_message());
    }
  }
  Storage* s = new (std::nothrow) Storage(p, nbytes, Device{DeviceType::CPU, -1}, Kind::Pinned);
  if (s == nullptr) {
    pinned_free(p);
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
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
      // The memory is this storage's own, freed on its own device: the free cannot be refused
      // (a failed cudaFree at exit has nowhere to go).
      (void)get_device_allocator(device_.type)->deallocate(data_, device_.index);
      break;
    case Kind::Pinned:
      pinned_free(data_);
      break;
  }
}

}  // namespace slimcuda
