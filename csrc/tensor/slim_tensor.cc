// SPDX-License-Identifier: Apache-2.0
#include "csrc/tensor/slim_tensor.h"

#include <memory>
#include <new>

#include "csrc/core/device_index.h"
#include "csrc/cuda/device.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// Allocates the SlimTensor object itself without throwing.
Error make(std::shared_ptr<Storage> storage, std::vector<int64_t> sizes, std::vector<int64_t> strides, ScalarType dtype,
           int64_t offset, SlimTensor** out) noexcept {
  *out = new (std::nothrow) SlimTensor(std::move(storage), std::move(sizes), std::move(strides), dtype, offset);
  SLIMCUDA_CHECK_OR_RETURN(*out != nullptr, Error::MemoryAllocationFailed, "out of host memory");
  return Error::Ok;
}

std::vector<int64_t> to_vector(int64_t ndim, const int64_t* p) {
  return ndim == 0 ? std::vector<int64_t>{} : std::vector<int64_t>(p, p + ndim);
}

std::vector<int64_t> strides_or_contiguous(int64_t ndim, const int64_t* sizes, const int64_t* strides) {
  return strides != nullptr ? to_vector(ndim, strides) : contiguous_strides(to_vector(ndim, sizes));
}

}  // namespace

int64_t SlimTensor::numel() const noexcept { return numel_of(sizes_); }

void* SlimTensor::data_ptr() const noexcept {
  char* base = static_cast<char*>(storage_->data());
  return base == nullptr ? nullptr : base + storage_offset_ * static_cast<int64_t>(element_size());
}

bool SlimTensor::is_contiguous() const noexcept { return slimcuda::is_contiguous(sizes_, strides_); }

Error parse_device(int32_t dtype, int32_t device_type, int32_t device_index, ScalarType* out_dtype,
                   Device* out_device) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(dtype), Error::InvalidArgument, "unknown dtype %d", dtype);
  *out_dtype = static_cast<ScalarType>(dtype);
  switch (device_type) {
    case static_cast<int32_t>(DeviceType::CPU):
      SLIMCUDA_CHECK_OR_RETURN(device_index == -1 || device_index == 0, Error::InvalidArgument,
                               "CPU device index %d (want -1 or 0)", device_index);
      *out_device = Device{DeviceType::CPU, static_cast<DeviceIndex>(device_index)};
      return Error::Ok;
    case static_cast<int32_t>(DeviceType::CUDA): {
      SLIMCUDA_RETURN_IF_ERROR(check_device_index(device_index));
      int resolved = 0;
      SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &resolved));
      *out_device = Device{DeviceType::CUDA, static_cast<DeviceIndex>(resolved)};
      return Error::Ok;
    }
  }
  return set_last_error(Error::InvalidArgument, "unknown device type %d", device_type);
}

Error check_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype, int32_t device_type,
                  int32_t device_index, bool pinned, EmptySpec* out) noexcept {
  SLIMCUDA_RETURN_IF_ERROR(check_shape(ndim, sizes, strides));
  SLIMCUDA_RETURN_IF_ERROR(parse_device(dtype, device_type, device_index, &out->dtype, &out->device));
  SLIMCUDA_CHECK_OR_RETURN(!pinned || out->device.type == DeviceType::CPU, Error::InvalidArgument,
                           "pinned memory is host memory: device type must be CPU");
  if (pinned && cuda::device_count() == 0) {
    return set_last_error(Error::NotSupported, "pinned memory needs a CUDA driver and device: %s",
                          last_error_message());
  }
  SLIMCUDA_RETURN_IF_ERROR(required_bytes(ndim, sizes, strides, 0, element_size(out->dtype), &out->nbytes));
  try {
    out->sizes = to_vector(ndim, sizes);
    out->strides = strides_or_contiguous(ndim, sizes, strides);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
  out->pinned = pinned;
  return Error::Ok;
}

Error empty_strided(const EmptySpec& spec, const StreamContext& ctx, SlimTensor** out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null ret_new_tensor");
  *out = nullptr;
  std::shared_ptr<Storage> storage;
  const size_t nbytes = static_cast<size_t>(spec.nbytes);
  SLIMCUDA_RETURN_IF_ERROR(spec.pinned ? Storage::allocate_pinned(nbytes, ctx, &storage)
                                       : Storage::allocate(nbytes, spec.device, ctx, &storage));
  try {
    return make(std::move(storage), spec.sizes, spec.strides, spec.dtype, 0, out);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error from_blob(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides, int64_t storage_offset,
                int32_t dtype, int32_t device_type, int32_t device_index, SlimTensor** out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null ret");
  *out = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(check_shape(ndim, sizes, strides));
  ScalarType type{};
  Device device{};
  SLIMCUDA_RETURN_IF_ERROR(parse_device(dtype, device_type, device_index, &type, &device));
  int64_t nbytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_bytes(ndim, sizes, strides, storage_offset, element_size(type), &nbytes));
  SLIMCUDA_CHECK_OR_RETURN(data != nullptr || nbytes == 0, Error::InvalidArgument, "null data for a %lld-byte tensor",
                           static_cast<long long>(nbytes));
  return make(Storage::borrow(data, static_cast<size_t>(nbytes), device), to_vector(ndim, sizes),
              strides_or_contiguous(ndim, sizes, strides), type, storage_offset, out);
}

Error reinterpret(const SlimTensor& self, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                  int64_t storage_offset, SlimTensor** out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null ret_new_tensor");
  *out = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(check_shape(ndim, sizes, strides));
  int64_t nbytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_bytes(ndim, sizes, strides, storage_offset, self.element_size(), &nbytes));
  SLIMCUDA_CHECK_OR_RETURN(static_cast<uint64_t>(nbytes) <= self.storage()->nbytes(), Error::InvalidArgument,
                           "view needs %lld bytes, beyond the %zu-byte storage", static_cast<long long>(nbytes),
                           self.storage()->nbytes());
  return make(self.storage(), to_vector(ndim, sizes), strides_or_contiguous(ndim, sizes, strides), self.dtype(),
              storage_offset, out);
}

Error clone(const SlimTensor& self, bool preserve_strides, const StreamContext& ctx, SlimTensor** out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null ret");
  *out = nullptr;
  const Device device = self.device();
  const bool pinned = self.storage()->kind() == Storage::Kind::Pinned;
  const int32_t dtype = static_cast<int32_t>(self.dtype()), type = static_cast<int32_t>(device.type);
  SlimTensor* result = nullptr;
  if (!preserve_strides) {
    EmptySpec spec;
    SLIMCUDA_RETURN_IF_ERROR(
        check_empty(self.dim(), self.sizes().data(), nullptr, dtype, type, device.index, pinned, &spec));
    SLIMCUDA_RETURN_IF_ERROR(empty_strided(spec, ctx, &result));
    const Error e = copy_tensor(*result, self, ctx);
    if (e != Error::Ok) {
      delete result;
      return e;
    }
    *out = result;
    return Error::Ok;
  }
  // As PyTorch's clone_preserve_strides: copy the storage span self's strides reach (from
  // its first element) as one contiguous run, then view it with self's strides. The work
  // is O(span), not O(numel): a [2^40] view with stride 0 copies one element.
  int64_t elements = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_elements(self.dim(), self.sizes().data(), self.strides().data(), 0, &elements));
  SlimTensor* flat = nullptr;
  EmptySpec spec;
  SLIMCUDA_RETURN_IF_ERROR(check_empty(1, &elements, nullptr, dtype, type, device.index, pinned, &spec));
  SLIMCUDA_RETURN_IF_ERROR(empty_strided(spec, ctx, &flat));
  const std::unique_ptr<SlimTensor> flat_owner(flat);
  SlimTensor* span = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(reinterpret(self, 1, &elements, nullptr, self.storage_offset(), &span));
  const std::unique_ptr<SlimTensor> span_owner(span);
  SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*flat, *span, ctx));
  SLIMCUDA_RETURN_IF_ERROR(reinterpret(*flat, self.dim(), self.sizes().data(), self.strides().data(), 0, out));
  return Error::Ok;
}

}  // namespace slimcuda
