// SPDX-License-Identifier: Apache-2.0
/* aoti_torch.h — the aoti_torch_* C shims of libslimcuda.so, with the signatures of
 * PyTorch's torch/csrc/inductor/aoti_torch/c/shim.h (and shim_cuda.h), over slimcuda's
 * slim tensor. AOTInductor-compiled model .so files call these; so can any C program.
 *
 * Pure C. Every AOTITorchError is 0 on success, else a slimcuda error code (slimcuda.h),
 * with this thread's message in slimcuda_last_error_message(). Nothing here aborts on bad
 * input. Handles are owned by the caller: every "new reference" is freed with
 * aoti_torch_delete_tensor_object (or the matching delete_* function).
 *
 * Symbol prefix: a library built with a shim prefix (tools/install.sh --shim-prefix P,
 * Bazel --//csrc/shims:prefix=P) exports every shim as P##aoti_torch_* and no plain
 * aoti_torch_* symbol, so it can share a process with libtorch. SLIMCUDA_SHIM(name) gives
 * the exported name; slimcuda/shim_prefix.h records the prefix the library was built with.
 */
#ifndef SLIMCUDA_AOTI_TORCH_H_
#define SLIMCUDA_AOTI_TORCH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slimcuda/export.h"
#include "slimcuda/shim_prefix.h"

#define SLIMCUDA_SHIM_CONCAT_(a, b) a##b
#define SLIMCUDA_SHIM_CONCAT(a, b) SLIMCUDA_SHIM_CONCAT_(a, b)
/* The exported name of shim `name` (an aoti_torch_* identifier). */
#define SLIMCUDA_SHIM(name) SLIMCUDA_SHIM_CONCAT(SLIMCUDA_SHIM_PREFIX, name)

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t AOTITorchError;
struct AtenTensorOpaque;
typedef struct AtenTensorOpaque* AtenTensorHandle;
struct CUDAGuardOpaque;
typedef struct CUDAGuardOpaque* CUDAGuardHandle;
struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque* CUDAStreamGuardHandle;

/* ---- Constants (c10's codes) ---- */
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float16)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float32)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float64)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_uint8)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int8)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int16)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int32)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int64)(void);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_dtype_bool)(void);
/* Bytes per element; 0 for a dtype code this library does not support. */
SLIMCUDA_API size_t SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(int32_t dtype);
SLIMCUDA_API int32_t SLIMCUDA_SHIM(aoti_torch_layout_strided)(void);

/* Grad mode: per thread, enabled by default (as in PyTorch); slimcuda never builds graphs. */
SLIMCUDA_API bool SLIMCUDA_SHIM(aoti_torch_grad_mode_is_enabled)(void);
SLIMCUDA_API void SLIMCUDA_SHIM(aoti_torch_grad_mode_set_enabled)(bool enabled);

/* A warning from generated code, passed to the library's log (stderr unless
 * slimcuda_set_log_callback chose otherwise; slimcuda.h). */
SLIMCUDA_API void SLIMCUDA_SHIM(aoti_torch_warn)(const char* func, const char* file, uint32_t line, const char* msg);

/* A check in generated code (AOTI_TORCH_CHECK: an index in bounds, sizes that agree). cond
 * true: returns. cond false: records msg (with func, file, line) as this thread's last error
 * and throws std::runtime_error, as PyTorch's does: the generated code after a failed check
 * must not run, and the container's Run turns the exception into its failure code. Only
 * generated C++ calls it. */
SLIMCUDA_API void SLIMCUDA_SHIM(aoti_torch_check)(bool cond, const char* func, const char* file, uint32_t line,
                                                  const char* msg);

/* ---- Memory ---- */
/* New tensor with fresh memory. strides_ptr NULL = contiguous. Returns a new reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_empty_strided)(int64_t ndim, const int64_t* sizes_ptr,
                                                                    const int64_t* strides_ptr, int32_t dtype,
                                                                    int32_t device_type, int32_t device_index,
                                                                    AtenTensorHandle* ret_new_tensor);
/* The same in page-locked host memory (device_type must be CPU); no pageable fallback:
 * without a CUDA driver it fails with NotSupported. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(int64_t ndim, const int64_t* sizes_ptr,
                                                                           const int64_t* strides_ptr, int32_t dtype,
                                                                           int32_t device_type, int32_t device_index,
                                                                           AtenTensorHandle* ret_new_tensor);
/* A tensor over caller-owned memory (borrowed: never freed here). New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset,
    int32_t dtype, int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
/* layout must be strided; opaque metadata (MKL-DNN) is NotSupported. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob_v2)(
    void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset,
    int32_t dtype, int32_t device_type, int32_t device_index, AtenTensorHandle* ret, int32_t layout,
    const uint8_t* opaque_metadata, int64_t opaque_metadata_size);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(AtenTensorHandle tensor);
/* An empty handle for an op to fill (the proxy executor assigns its result to it): a 1-d CPU
 * tensor of 0 elements until then, so reading it before is harmless. New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(AtenTensorHandle* ret);
/* A new handle to the same view (shares storage). New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(AtenTensorHandle orig_handle,
                                                                        AtenTensorHandle* new_handle);
/* A new view of self's storage at self's storage offset + storage_offset (PyTorch's
 * torch::inductor::_reinterpret_tensor: the offset is an increment); it must fit inside the
 * storage. New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(AtenTensorHandle self, int64_t ndim,
                                                                          const int64_t* sizes_ptr,
                                                                          const int64_t* strides_ptr,
                                                                          int64_t storage_offset,
                                                                          AtenTensorHandle* ret_new_tensor);
/* A view with self's dim and storage offset and the given sizes and strides. New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_as_strided)(AtenTensorHandle self, const int64_t* sizes_ptr,
                                                                 const int64_t* strides_ptr, AtenTensorHandle* ret);
/* Contiguous copy / copy keeping self's strides, same device. New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_clone)(AtenTensorHandle self, AtenTensorHandle* ret);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_clone_preserve_strides)(AtenTensorHandle self,
                                                                             AtenTensorHandle* ret);
/* self <- src: equal sizes, any strides, any dtype pair, CPU/CUDA either side; CUDA work on
 * the current stream. Returns when host memory involved is done; non_blocking is accepted
 * and ignored. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_copy_)(AtenTensorHandle self, AtenTensorHandle src,
                                                            int32_t non_blocking);
/* dst becomes the same view as src (both handles still deleted separately). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_assign_tensors)(AtenTensorHandle src, AtenTensorHandle dst);
/* *ret_dst = a new handle to src's view. New reference. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_assign_tensors_out)(AtenTensorHandle src,
                                                                         AtenTensorHandle* ret_dst);

/* ---- The proxy executor (csrc/proxy/): ops without a C shim ---- */
/* What a model's run passes its library for the ops AOTInductor calls through the proxy
 * executor; opaque. */
typedef struct AOTIProxyExecutorOpaque* AOTIProxyExecutorHandle;
/* Runs extern-kernel node `extern_node_index` (the .pt2's `<so stem>.json`) with the
 * generated code's flattened ints and tensors (inputs, then the output handles made with
 * aoti_torch_new_uninitialized_tensor). Generated code ignores the returned code, so a
 * failure, after being recorded, also throws, as aoti_torch_check does, and fails the run. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(
    AOTIProxyExecutorHandle proxy_executor, int extern_node_index, int num_ints, int64_t* flatten_int_args,
    int num_tensors, AtenTensorHandle* flatten_tensor_args);

/* ---- Attributes (borrowed pointers stay valid while the tensor lives) ---- */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(AtenTensorHandle tensor, void** ret_data_ptr);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_sizes)(AtenTensorHandle tensor, int64_t** ret_sizes);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_size)(AtenTensorHandle tensor, int64_t d, int64_t* ret_size);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_strides)(AtenTensorHandle tensor, int64_t** ret_strides);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_stride)(AtenTensorHandle tensor, int64_t d,
                                                                 int64_t* ret_stride);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_dtype)(AtenTensorHandle tensor, int32_t* ret_dtype);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_dim)(AtenTensorHandle tensor, int64_t* ret_dim);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_numel)(AtenTensorHandle tensor, int64_t* ret_numel);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_storage_offset)(AtenTensorHandle tensor,
                                                                         int64_t* ret_storage_offset);
/* Bytes of the underlying storage. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_storage_size)(AtenTensorHandle tensor, int64_t* ret_size);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_device_type)(AtenTensorHandle tensor,
                                                                      int32_t* ret_device_type);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_device_index)(AtenTensorHandle tensor,
                                                                       int32_t* ret_device_index);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_is_contiguous)(AtenTensorHandle tensor, bool* ret_is_contiguous);

/* ---- CUDA device and stream guards ---- */
/* Makes device_index current until the guard is deleted (then the previous device). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(int32_t device_index,
                                                                        CUDAGuardHandle* ret_guard);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_cuda_guard)(CUDAGuardHandle guard);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_guard_set_index)(CUDAGuardHandle guard, int32_t device_index);
/* Selects `stream` (a cudaStream_t; NULL = legacy default) as this thread's current stream —
 * the slimcuda caller stream — and device_index as current device, until deleted. Delete
 * stream guards in reverse order of creation, on the creating thread. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(void* stream, int32_t device_index,
                                                                               CUDAStreamGuardHandle* ret_guard);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(CUDAStreamGuardHandle guard);
/* The current stream: the caller stream when one is selected (an explicitly selected NULL
 * gives NULL), else the legacy default stream (NULL). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(int32_t device_index, void** ret_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIMCUDA_AOTI_TORCH_H_ */
