// SPDX-License-Identifier: Apache-2.0
// Memory shims: creating, viewing, copying and deleting tensors.
#include <new>

#include "csrc/entry/caller_context.h"
#include "csrc/shims/shim_util.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/handle_adoption.h"

using namespace slimcuda;         // NOLINT: thin C shells over the C++ tensor
using namespace slimcuda::shims;  // NOLINT

extern "C" {

// empty_strided and empty_strided_pinned differ only in the memory they ask for.
static AOTITorchError empty_shim(const char* name, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                 int32_t dtype, int32_t device_type, int32_t device_index, bool pinned,
                                 AtenTensorHandle* ret_new_tensor) {
  return c_entry(name, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret_new_tensor);
    *ret_new_tensor = nullptr;  // a failed call leaves no stale handle behind
    EmptySpec spec;
    SLIMCUDA_RETURN_IF_ERROR(
        check_empty(ndim, sizes_ptr, strides_ptr, dtype, device_type, device_index, pinned, &spec));
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(spec.needs_stream(), &ctx));
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(empty_strided(spec, ctx, &t));
    *ret_new_tensor = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_empty_strided)(int64_t ndim, const int64_t* sizes_ptr,
                                                       const int64_t* strides_ptr, int32_t dtype, int32_t device_type,
                                                       int32_t device_index, AtenTensorHandle* ret_new_tensor) {
  return empty_shim(__func__, ndim, sizes_ptr, strides_ptr, dtype, device_type, device_index, false, ret_new_tensor);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(int64_t ndim, const int64_t* sizes_ptr,
                                                              const int64_t* strides_ptr, int32_t dtype,
                                                              int32_t device_type, int32_t device_index,
                                                              AtenTensorHandle* ret_new_tensor) {
  return empty_shim(__func__, ndim, sizes_ptr, strides_ptr, dtype, device_type, device_index, true, ret_new_tensor);
}

// ATen's undefined tensor has no sizes at all; ours is a 0-element 1-d CPU tensor, so
// generated code that reads it before the proxy executor fills it reads nothing.
AOTITorchError SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(AtenTensorHandle* ret) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret);
    *ret = handle(
        new SlimTensor(Storage::borrow(nullptr, 0, Device{DeviceType::CPU, -1}), {0}, {1}, ScalarType::Float, 0));
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                                 const int64_t* strides_ptr, int64_t storage_offset,
                                                                 int32_t dtype, int32_t device_type,
                                                                 int32_t device_index, AtenTensorHandle* ret) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret);
    *ret = nullptr;  // a failed call leaves no stale handle behind
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(
        from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type, device_index, &t));
    *ret = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob_v2)(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                                    const int64_t* strides_ptr, int64_t storage_offset,
                                                                    int32_t dtype, int32_t device_type,
                                                                    int32_t device_index, AtenTensorHandle* ret,
                                                                    int32_t layout, const uint8_t* opaque_metadata,
                                                                    int64_t opaque_metadata_size) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(ret);
    *ret = nullptr;  // a failed call leaves no stale handle behind
    SLIMCUDA_CHECK_OR_RETURN(layout == 0, Error::NotSupported,
                             "layout %d: only strided tensors (layout 0) are supported", layout);
    SLIMCUDA_CHECK_OR_RETURN(opaque_metadata_size == 0 || opaque_metadata == nullptr, Error::NotSupported,
                             "opaque (MKL-DNN) tensor metadata is not supported");
    SLIMCUDA_CHECK_OR_RETURN(opaque_metadata_size >= 0, Error::InvalidArgument, "negative opaque_metadata_size");
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(
        from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type, device_index, &t));
    *ret = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(AtenTensorHandle tensor) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(tensor);
    SlimTensor* t = shims::tensor(tensor);
    // A handle slimcuda adopted is deleted by slimcuda once the container is gone (PyTorch
    // 2.15's containers delete theirs too: deleting it here as well would free it twice).
    if (t->adopted()) return Error::Ok;
    delete t;
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(orig_handle);
    SLIMCUDA_SHIM_NOT_NULL(new_handle);
    *new_handle = nullptr;  // a failed call leaves no stale handle behind
    SlimTensor* t = new (std::nothrow) SlimTensor(*tensor(orig_handle));
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr, Error::MemoryAllocationFailed, "out of host memory");
    HandleAdoption::note(tensor(orig_handle), t);  // a constant's copy: its lifetime is ours
    *new_handle = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(AtenTensorHandle self, int64_t ndim,
                                                             const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                                             int64_t storage_offset, AtenTensorHandle* ret_new_tensor) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(self);
    SLIMCUDA_SHIM_NOT_NULL(ret_new_tensor);
    *ret_new_tensor = nullptr;  // a failed call leaves no stale handle behind
    // PyTorch's torch::inductor::_reinterpret_tensor adds the offset to self's own
    // (Inductor reinterprets views of views: a buffer slice at an offset, re-viewed).
    const SlimTensor& src = *tensor(self);
    int64_t offset = 0;
    SLIMCUDA_CHECK_OR_RETURN(!__builtin_add_overflow(src.storage_offset(), storage_offset, &offset),
                             Error::InvalidArgument, "storage offset %lld + %lld overflows",
                             static_cast<long long>(src.storage_offset()), static_cast<long long>(storage_offset));
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(reinterpret(src, ndim, sizes_ptr, strides_ptr, offset, &t));
    *ret_new_tensor = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_as_strided)(AtenTensorHandle self, const int64_t* sizes_ptr,
                                                    const int64_t* strides_ptr, AtenTensorHandle* ret) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(self);
    SLIMCUDA_SHIM_NOT_NULL(ret);
    *ret = nullptr;  // a failed call leaves no stale handle behind
    const SlimTensor& s = *tensor(self);
    SLIMCUDA_CHECK_OR_RETURN(s.dim() == 0 || strides_ptr != nullptr, Error::InvalidArgument, "null strides_ptr");
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(reinterpret(s, s.dim(), sizes_ptr, strides_ptr, s.storage_offset(), &t));
    *ret = handle(t);
    return Error::Ok;
  });
}

// The two clone shims differ only in the strides the copy gets.
static AOTITorchError clone_shim(const char* name, AtenTensorHandle self, bool preserve_strides,
                                 AtenTensorHandle* ret) {
  return c_entry(name, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(self);
    SLIMCUDA_SHIM_NOT_NULL(ret);
    *ret = nullptr;  // a failed call leaves no stale handle behind
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(clone_needs_stream(*tensor(self)), &ctx));
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(clone(*tensor(self), preserve_strides, ctx, &t));
    *ret = handle(t);
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_clone)(AtenTensorHandle self, AtenTensorHandle* ret) {
  return clone_shim(__func__, self, false, ret);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_clone_preserve_strides)(AtenTensorHandle self, AtenTensorHandle* ret) {
  return clone_shim(__func__, self, true, ret);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_copy_)(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) {
  (void)non_blocking;  // copies that touch host memory always complete before returning
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(self);
    SLIMCUDA_SHIM_NOT_NULL(src);
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(copy_needs_stream(*tensor(self), *tensor(src)), &ctx));
    return copy_tensor(*tensor(self), *tensor(src), ctx);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_assign_tensors)(AtenTensorHandle src, AtenTensorHandle dst) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(src);
    SLIMCUDA_SHIM_NOT_NULL(dst);
    tensor(dst)->assign(*tensor(src));
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_assign_tensors_out)(AtenTensorHandle src, AtenTensorHandle* ret_dst) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(src);
    SLIMCUDA_SHIM_NOT_NULL(ret_dst);
    *ret_dst = nullptr;  // a failed call leaves no stale handle behind
    SlimTensor* t = new (std::nothrow) SlimTensor(*tensor(src));
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr, Error::MemoryAllocationFailed, "out of host memory");
    *ret_dst = handle(t);
    return Error::Ok;
  });
}

}  // extern "C"
