// SPDX-License-Identifier: Apache-2.0
// Attribute shims: read-only views of a tensor's metadata.
#include "csrc/shims/shim_util.h"

using namespace slimcuda;         // NOLINT: thin C shells over the C++ tensor
using namespace slimcuda::shims;  // NOLINT

namespace {

// Runs `read(tensor)` after checking the handle and the output pointer.
template <typename Out, typename Read>
AOTITorchError attribute(const char* name, AtenTensorHandle t, Out* out, Read&& read) {
  return c_entry(name, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(t);
    SLIMCUDA_SHIM_NOT_NULL(out);
    *out = read(*tensor(t));
    return Error::Ok;
  });
}

// For get_size / get_stride: dimension d, negative counting from the end.
AOTITorchError dimension(const char* name, AtenTensorHandle t, int64_t d, int64_t* out, bool strides) {
  return c_entry(name, [&]() {
    SLIMCUDA_SHIM_NOT_NULL(t);
    SLIMCUDA_SHIM_NOT_NULL(out);
    const SlimTensor& s = *tensor(t);
    const int64_t n = s.dim();
    SLIMCUDA_CHECK_OR_RETURN(d >= -n && d < n, Error::InvalidArgument,
                             "dimension %lld out of range for a %lld-d tensor", static_cast<long long>(d),
                             static_cast<long long>(n));
    const int64_t i = d < 0 ? d + n : d;
    *out = strides ? s.strides()[i] : s.sizes()[i];
    return Error::Ok;
  });
}

}  // namespace

extern "C" {

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(AtenTensorHandle tensor, void** ret_data_ptr) {
  return attribute(__func__, tensor, ret_data_ptr, [](const SlimTensor& s) { return s.data_ptr(); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_sizes)(AtenTensorHandle tensor, int64_t** ret_sizes) {
  // Borrowed: points into the tensor, valid while it lives (AOTI reads, never writes, it).
  return attribute(__func__, tensor, ret_sizes,
                   [](const SlimTensor& s) { return const_cast<int64_t*>(s.sizes().data()); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_size)(AtenTensorHandle tensor, int64_t d, int64_t* ret_size) {
  return dimension(__func__, tensor, d, ret_size, false);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_strides)(AtenTensorHandle tensor, int64_t** ret_strides) {
  return attribute(__func__, tensor, ret_strides,
                   [](const SlimTensor& s) { return const_cast<int64_t*>(s.strides().data()); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_stride)(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride) {
  return dimension(__func__, tensor, d, ret_stride, true);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_dtype)(AtenTensorHandle tensor, int32_t* ret_dtype) {
  return attribute(__func__, tensor, ret_dtype, [](const SlimTensor& s) { return static_cast<int32_t>(s.dtype()); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_dim)(AtenTensorHandle tensor, int64_t* ret_dim) {
  return attribute(__func__, tensor, ret_dim, [](const SlimTensor& s) { return s.dim(); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_numel)(AtenTensorHandle tensor, int64_t* ret_numel) {
  return attribute(__func__, tensor, ret_numel, [](const SlimTensor& s) { return s.numel(); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_storage_offset)(AtenTensorHandle tensor, int64_t* ret_storage_offset) {
  return attribute(__func__, tensor, ret_storage_offset, [](const SlimTensor& s) { return s.storage_offset(); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_storage_size)(AtenTensorHandle tensor, int64_t* ret_size) {
  return attribute(__func__, tensor, ret_size,
                   [](const SlimTensor& s) { return static_cast<int64_t>(s.storage()->nbytes()); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_device_type)(AtenTensorHandle tensor, int32_t* ret_device_type) {
  return attribute(__func__, tensor, ret_device_type,
                   [](const SlimTensor& s) { return static_cast<int32_t>(s.device().type); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_device_index)(AtenTensorHandle tensor, int32_t* ret_device_index) {
  return attribute(__func__, tensor, ret_device_index,
                   [](const SlimTensor& s) { return static_cast<int32_t>(s.device().index); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_is_contiguous)(AtenTensorHandle tensor, bool* ret_is_contiguous) {
  return attribute(__func__, tensor, ret_is_contiguous, [](const SlimTensor& s) { return s.is_contiguous(); });
}

}  // extern "C"
