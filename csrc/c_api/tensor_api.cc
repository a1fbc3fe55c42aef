// SPDX-License-Identifier: Apache-2.0
// The tensor part of the C ABI (slimcuda_tensor_*): the slim tensor under names that do
// not depend on the shim prefix, for Go and C callers.
#include <new>

#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/slimcuda.h"

using namespace slimcuda;  // NOLINT: thin C shells over the C++ tensor

namespace {

SlimTensor* cast(slimcuda_tensor* t) { return reinterpret_cast<SlimTensor*>(t); }
const SlimTensor* cast(const slimcuda_tensor* t) { return reinterpret_cast<const SlimTensor*>(t); }
slimcuda_tensor* cast(SlimTensor* t) { return reinterpret_cast<slimcuda_tensor*>(t); }

// A borrowed, contiguous CPU tensor over host memory shaped like `like`, holding `dtype`.
Error host_tensor(const SlimTensor& like, void* data, size_t nbytes, int32_t dtype, SlimTensor** out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(data != nullptr || nbytes == 0, Error::InvalidArgument, "null data");
  SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(dtype), Error::InvalidArgument, "unknown dtype %d", dtype);
  const size_t want = static_cast<size_t>(like.numel()) * element_size(static_cast<ScalarType>(dtype));
  SLIMCUDA_CHECK_OR_RETURN(
      nbytes == want, Error::InvalidArgument, "%zu bytes of host data for a tensor of %lld %s elements (%zu bytes)",
      nbytes, static_cast<long long>(like.numel()), scalar_type_name(static_cast<ScalarType>(dtype)), want);
  return from_blob(data, like.dim(), like.sizes().data(), nullptr, 0, dtype, static_cast<int32_t>(DeviceType::CPU), -1,
                   out);
}

}  // namespace

extern "C" {

int32_t slimcuda_tensor_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                              int32_t device_type, int32_t device_index, int32_t pinned, slimcuda_tensor** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
    EmptySpec spec;
    SLIMCUDA_RETURN_IF_ERROR(check_empty(ndim, sizes, strides, dtype, device_type, device_index, pinned != 0, &spec));
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(spec.needs_stream(), &ctx));
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(empty_strided(spec, ctx, &t));
    *out = cast(t);
    return Error::Ok;
  });
}

int32_t slimcuda_tensor_view(const slimcuda_tensor* t, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                             int64_t storage_offset, slimcuda_tensor** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr && out != nullptr, Error::InvalidArgument, "null %s",
                             t == nullptr ? "t" : "out");
    SlimTensor* v = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(reinterpret(*cast(t), ndim, sizes, strides, storage_offset, &v));
    *out = cast(v);
    return Error::Ok;
  });
}

int32_t slimcuda_tensor_clone(const slimcuda_tensor* t, int32_t preserve_strides, slimcuda_tensor** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr && out != nullptr, Error::InvalidArgument, "null %s",
                             t == nullptr ? "t" : "out");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(clone_needs_stream(*cast(t)), &ctx));
    SlimTensor* c = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(clone(*cast(t), preserve_strides != 0, ctx, &c));
    *out = cast(c);
    return Error::Ok;
  });
}

int32_t slimcuda_tensor_delete(slimcuda_tensor* t) {
  delete cast(t);
  return SLIMCUDA_OK;
}

int32_t slimcuda_tensor_get_info(const slimcuda_tensor* t, slimcuda_tensor_info* info) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr && info != nullptr, Error::InvalidArgument, "null %s",
                             t == nullptr ? "t" : "info");
    const SlimTensor& s = *cast(t);
    info->ndim = s.dim();
    info->sizes = s.sizes().data();
    info->strides = s.strides().data();
    info->numel = s.numel();
    info->storage_offset = s.storage_offset();
    info->storage_bytes = static_cast<int64_t>(s.storage()->nbytes());
    info->data = s.data_ptr();
    info->dtype = static_cast<int32_t>(s.dtype());
    info->device_type = static_cast<int32_t>(s.device().type);
    info->device_index = s.device().index;
    info->pinned = s.storage()->kind() == Storage::Kind::Pinned;
    info->contiguous = s.is_contiguous();
    return Error::Ok;
  });
}

int32_t slimcuda_tensor_copy(slimcuda_tensor* dst, const slimcuda_tensor* src) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                             dst == nullptr ? "dst" : "src");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(copy_needs_stream(*cast(dst), *cast(src)), &ctx));
    return copy_tensor(*cast(dst), *cast(src), ctx);
  });
}

int32_t slimcuda_tensor_copy_from_host(slimcuda_tensor* dst, const void* data, size_t nbytes, int32_t dtype) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr, Error::InvalidArgument, "null dst");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(cast(dst)->device().is_cuda(), &ctx));
    SlimTensor* host = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(host_tensor(*cast(dst), const_cast<void*>(data), nbytes, dtype, &host));
    const Error e = copy_tensor(*cast(dst), *host, ctx);
    delete host;
    return e;
  });
}

int32_t slimcuda_tensor_copy_to_host(const slimcuda_tensor* src, void* data, size_t nbytes, int32_t dtype) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(src != nullptr, Error::InvalidArgument, "null src");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context_if(cast(src)->device().is_cuda(), &ctx));
    SlimTensor* host = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(host_tensor(*cast(src), data, nbytes, dtype, &host));
    const Error e = copy_tensor(*host, *cast(src), ctx);
    delete host;
    return e;
  });
}

int32_t slimcuda_tensor_copy_on(slimcuda_tensor* dst, const slimcuda_tensor* src, void* stream) {
  return with_stream(stream, [&] { return slimcuda_tensor_copy(dst, src); });
}

int32_t slimcuda_tensor_copy_from_host_on(slimcuda_tensor* dst, const void* data, size_t nbytes, int32_t dtype,
                                          void* stream) {
  return with_stream(stream, [&] { return slimcuda_tensor_copy_from_host(dst, data, nbytes, dtype); });
}

int32_t slimcuda_tensor_copy_to_host_on(const slimcuda_tensor* src, void* data, size_t nbytes, int32_t dtype,
                                        void* stream) {
  return with_stream(stream, [&] { return slimcuda_tensor_copy_to_host(src, data, nbytes, dtype); });
}

}  // extern "C"
