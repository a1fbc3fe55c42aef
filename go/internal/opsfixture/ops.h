// SPDX-License-Identifier: Apache-2.0
// ops.h: the cgo side of package opsfixture: the fallback op shims (aoti_torch_ops.h) and
// the tensor shims the cases need, each returning its code and, on failure, this thread's
// error message read inside the same C call (the next cgo call may run on another thread).
#ifndef SLIMCUDA_GO_OPSFIXTURE_OPS_H_
#define SLIMCUDA_GO_OPSFIXTURE_OPS_H_

#include <stdlib.h>
#include <string.h>

#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/slimcuda.h"

typedef struct {
  int32_t code;
  char* msg; /* malloc'ed on failure; Go frees it */
} of_result;

static inline of_result of_wrap(int32_t code) {
  of_result r = {code, NULL};
  if (code != 0) r.msg = strdup(slimcuda_last_error_message());
  return r;
}

enum { OF_MM = 0, OF_ADDMM = 1, OF_BMM = 2, OF_BADDBMM = 3, OF_ADDMM_ACTIVATION = 4 };

static inline int32_t of_dtype(int which) {
  switch (which) {
    case 0:
      return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
    case 1:
      return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
    case 2:
      return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
    case 4:
      return SLIMCUDA_SHIM(aoti_torch_dtype_bool)();
    case 5:
      return SLIMCUDA_SHIM(aoti_torch_dtype_int64)();
    case 6:
      return SLIMCUDA_SHIM(aoti_torch_dtype_int32)();
    case 7:
      return SLIMCUDA_SHIM(aoti_torch_dtype_int16)();
    case 8:
      return SLIMCUDA_SHIM(aoti_torch_dtype_int8)();
    case 9:
      return SLIMCUDA_SHIM(aoti_torch_dtype_uint8)();
    default:
      return SLIMCUDA_SHIM(aoti_torch_dtype_float64)();
  }
}

/* A tensor with these sizes/strides on the CPU (cuda 0) or cuda:0; *data (CPU only) and
 * *storage_bytes say where to write its elements. */
static inline of_result of_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype, int cuda,
                                 AtenTensorHandle* out, void** data, int64_t* storage_bytes) {
  int32_t dev = cuda ? SLIMCUDA_SHIM(aoti_torch_device_type_cuda)() : SLIMCUDA_SHIM(aoti_torch_device_type_cpu)();
  int32_t c = SLIMCUDA_SHIM(aoti_torch_empty_strided)(ndim, sizes, strides, dtype, dev, 0, out);
  if (c == 0 && !cuda) c = SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(*out, data);
  if (c == 0 && !cuda) c = SLIMCUDA_SHIM(aoti_torch_get_storage_size)(*out, storage_bytes);
  return of_wrap(c);
}

/* A new view of t's storage (new reference). */
static inline of_result of_reinterpret(AtenTensorHandle t, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                       AtenTensorHandle* out) {
  return of_wrap(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(t, ndim, sizes, strides, 0, out));
}

/* The same at a storage offset (elements). */
static inline of_result of_reinterpret_at(AtenTensorHandle t, int64_t ndim, const int64_t* sizes,
                                          const int64_t* strides, int64_t offset, AtenTensorHandle* out) {
  return of_wrap(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(t, ndim, sizes, strides, offset, out));
}

static inline of_result of_copy(AtenTensorHandle dst, AtenTensorHandle src) {
  return of_wrap(SLIMCUDA_SHIM(aoti_torch_copy_)(dst, src, 0));
}

static inline void of_delete(AtenTensorHandle t) { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }

static inline of_result of_meta(AtenTensorHandle t, int64_t* ndim, int64_t** sizes, int64_t** strides, int32_t* dtype,
                                int32_t* device_type) {
  int32_t c = SLIMCUDA_SHIM(aoti_torch_get_dim)(t, ndim);
  if (c == 0) c = SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, sizes);
  if (c == 0) c = SLIMCUDA_SHIM(aoti_torch_get_strides)(t, strides);
  if (c == 0) c = SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, dtype);
  if (c == 0) c = SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, device_type);
  return of_wrap(c);
}

static inline of_result of_data(AtenTensorHandle t, void** data) {
  return of_wrap(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, data));
}

static inline int32_t of_is_cuda(void) { return SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(); }

/* in: [self,] mat1, mat2 in shim order (mm/bmm: self is the first factor). */
static inline of_result of_gemm(int fn, int cuda, AtenTensorHandle out, AtenTensorHandle in0, AtenTensorHandle in1,
                                AtenTensorHandle in2, double beta, double alpha, int32_t use_gelu,
                                AtenTensorHandle* ret0) {
  int32_t c = -1;
  switch (fn) {
    case OF_MM:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_mm_out)(out, in0, in1)
               : SLIMCUDA_SHIM(aoti_torch_cpu_mm_out)(out, in0, in1);
      break;
    case OF_BMM:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_bmm_out)(out, in0, in1)
               : SLIMCUDA_SHIM(aoti_torch_cpu_bmm_out)(out, in0, in1);
      break;
    case OF_ADDMM:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_addmm_out)(out, in0, in1, in2, beta, alpha)
               : SLIMCUDA_SHIM(aoti_torch_cpu_addmm_out)(out, in0, in1, in2, beta, alpha);
      break;
    case OF_BADDBMM:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_baddbmm_out)(out, in0, in1, in2, beta, alpha)
               : SLIMCUDA_SHIM(aoti_torch_cpu_baddbmm_out)(out, in0, in1, in2, beta, alpha);
      break;
    case OF_ADDMM_ACTIVATION:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda__addmm_activation)(in0, in1, in2, beta, alpha, use_gelu, ret0)
               : SLIMCUDA_SHIM(aoti_torch_cpu__addmm_activation)(in0, in1, in2, beta, alpha, use_gelu, ret0);
      break;
  }
  return of_wrap(c);
}

/* aoti_torch_cpu_cumsum (prod 0) or _cumprod (prod 1); has_dtype 0 passes NULL. */
static inline of_result of_cumulative(int prod, AtenTensorHandle self, int64_t dim, int has_dtype, int32_t dtype,
                                      AtenTensorHandle* ret0) {
  int32_t* d = has_dtype ? &dtype : NULL;
  return of_wrap(prod ? SLIMCUDA_SHIM(aoti_torch_cpu_cumprod)(self, dim, d, ret0)
                      : SLIMCUDA_SHIM(aoti_torch_cpu_cumsum)(self, dim, d, ret0));
}

static inline of_result of_conv(int cuda, AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle bias,
                                const int64_t* lists, int64_t n, int32_t transposed, int64_t groups,
                                AtenTensorHandle* ret0) {
  /* lists: stride, padding, dilation, output_padding, n entries each */
  AtenTensorHandle* b = bias != NULL ? &bias : NULL;
  int32_t c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_convolution)(input, weight, b, lists, n, lists + n, n, lists + 2 * n,
                                                                n, transposed, lists + 3 * n, n, groups, ret0)
                   : SLIMCUDA_SHIM(aoti_torch_cpu_convolution)(input, weight, b, lists, n, lists + n, n, lists + 2 * n,
                                                               n, transposed, lists + 3 * n, n, groups, ret0);
  return of_wrap(c);
}

enum { OF_SDPA_EFFICIENT = 0, OF_SDPA_FLASH = 1, OF_SDPA_CUDNN = 2, OF_SDPA_FLASH_FOR_CPU = 3 };

/* One attention call's options and what came back (h: ret0..ret8 in PyTorch's order, the
 * int outputs in max_q/max_k). */
typedef struct {
  int32_t compute_log_sumexp, is_causal, return_debug_mask, has_scale, null_ret0;
  double dropout_p, scale;
  AtenTensorHandle h[9];
  int64_t max_q, max_k;
} of_sdpa;

/* bias may be NULL (no attn_bias / attn_mask). Outputs PyTorch's meta functions return as None
 * are passed as NULL, as Inductor's generated code does; cudnn's ret8 comes back NULL. */
static inline of_result of_attention(int fn, AtenTensorHandle q, AtenTensorHandle k, AtenTensorHandle v,
                                     AtenTensorHandle bias, of_sdpa* a) {
  AtenTensorHandle* bp = bias != NULL ? &bias : NULL;
  double* sp = a->has_scale ? &a->scale : NULL;
  AtenTensorHandle* ret0 = a->null_ret0 ? NULL : &a->h[0];
  AtenTensorHandle* h = a->h;
  int32_t c = -1;
  switch (fn) {
    case OF_SDPA_EFFICIENT:
      c = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
          q, k, v, bp, a->compute_log_sumexp, a->dropout_p, a->is_causal, sp, ret0, &h[1], &h[6], &h[7]);
      break;
    case OF_SDPA_FLASH:
      c = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_flash_attention)(
          q, k, v, a->dropout_p, a->is_causal, a->return_debug_mask, sp, ret0, &h[1], &h[2], &h[3], &a->max_q,
          &a->max_k, &h[6], &h[7], &h[8]);
      break;
    case OF_SDPA_CUDNN:
      c = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_cudnn_attention)(
          q, k, v, bp, a->compute_log_sumexp, a->dropout_p, a->is_causal, a->return_debug_mask, sp, ret0, &h[1], &h[2],
          &h[3], &a->max_q, &a->max_k, &h[6], &h[7], &h[8]);
      break;
    case OF_SDPA_FLASH_FOR_CPU:
      c = SLIMCUDA_SHIM(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu)(q, k, v, a->dropout_p, a->is_causal,
                                                                                    bp, sp, ret0, &h[1]);
      break;
  }
  return of_wrap(c);
}

/* aoti_torch_<cpu|cuda>__embedding_bag (forward_only 0) or _forward_only (1); psw NULL passes
 * no per_sample_weights; ret[i] NULL where null_ret bit i is set. */
static inline of_result of_embedding_bag(int cuda, int forward_only, AtenTensorHandle weight, AtenTensorHandle indices,
                                         AtenTensorHandle offsets, int64_t mode, AtenTensorHandle psw,
                                         int32_t include_last_offset, int64_t padding_idx, int null_ret,
                                         AtenTensorHandle* ret) {
  AtenTensorHandle* p = psw != NULL ? &psw : NULL;
  AtenTensorHandle* r[4];
  for (int i = 0; i < 4; ++i) r[i] = (null_ret >> i) & 1 ? NULL : &ret[i];
  int32_t c;
  if (forward_only) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag_forward_only)(
                   weight, indices, offsets, 0, mode, 0, p, include_last_offset, padding_idx, r[0], r[1], r[2], r[3])
             : SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag_forward_only)(
                   weight, indices, offsets, 0, mode, 0, p, include_last_offset, padding_idx, r[0], r[1], r[2], r[3]);
  } else {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag)(weight, indices, offsets, 0, mode, 0, p,
                                                             include_last_offset, padding_idx, r[0], r[1], r[2], r[3])
             : SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag)(weight, indices, offsets, 0, mode, 0, p,
                                                            include_last_offset, padding_idx, r[0], r[1], r[2], r[3]);
  }
  return of_wrap(c);
}

/* ---- sorting and searching ---- */
enum { OF_SORT = 0, OF_SORT_STABLE = 1, OF_TOPK = 2 };

/* aoti_torch_<cpu|cuda>_sort / _sort_stable (stable 1) / _topk; no_ret0/no_ret1 pass NULL. */
static inline of_result of_sort(int fn, int cuda, AtenTensorHandle self, int64_t dim, int32_t descending, int64_t k,
                                int32_t largest, int32_t sorted, int no_ret0, int no_ret1, AtenTensorHandle* ret0,
                                AtenTensorHandle* ret1) {
  AtenTensorHandle* r0 = no_ret0 ? NULL : ret0;
  AtenTensorHandle* r1 = no_ret1 ? NULL : ret1;
  int32_t stable = 1;
  int32_t c;
  if (fn == OF_SORT) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_sort)(self, dim, descending, r0, r1)
             : SLIMCUDA_SHIM(aoti_torch_cpu_sort)(self, dim, descending, r0, r1);
  } else if (fn == OF_SORT_STABLE) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_sort_stable)(self, &stable, dim, descending, r0, r1)
             : SLIMCUDA_SHIM(aoti_torch_cpu_sort_stable)(self, &stable, dim, descending, r0, r1);
  } else {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_topk)(self, k, dim, largest, sorted, r0, r1)
             : SLIMCUDA_SHIM(aoti_torch_cpu_topk)(self, k, dim, largest, sorted, r0, r1);
  }
  return of_wrap(c);
}

static inline of_result of_histc(int cuda, AtenTensorHandle self, int64_t bins, double min, double max, int no_ret,
                                 AtenTensorHandle* ret0) {
  AtenTensorHandle* r = no_ret ? NULL : ret0;
  return of_wrap(cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_histc)(self, bins, min, max, r)
                      : SLIMCUDA_SHIM(aoti_torch_cpu_histc)(self, bins, min, max, r));
}

enum { OF_SEARCH_TENSOR = 0, OF_SEARCH_SCALAR = 1, OF_BUCKETIZE = 2 };

/* searchsorted_Tensor / _Scalar / bucketize_Tensor; side NULL passes no side, sorter NULL
 * no sorter. */
static inline of_result of_search(int fn, int cuda, AtenTensorHandle seq, AtenTensorHandle self, double scalar,
                                  int32_t out_int32, int32_t right, const char* side, AtenTensorHandle sorter,
                                  AtenTensorHandle* ret0) {
  const char** sp = side != NULL ? &side : NULL;
  AtenTensorHandle* so = sorter != NULL ? &sorter : NULL;
  int32_t c;
  if (fn == OF_SEARCH_TENSOR) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Tensor)(seq, self, out_int32, right, sp, so, ret0)
             : SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Tensor)(seq, self, out_int32, right, sp, so, ret0);
  } else if (fn == OF_SEARCH_SCALAR) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Scalar)(seq, scalar, out_int32, right, sp, so, ret0)
             : SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Scalar)(seq, scalar, out_int32, right, sp, so, ret0);
  } else {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_bucketize_Tensor)(self, seq, out_int32, right, ret0)
             : SLIMCUDA_SHIM(aoti_torch_cpu_bucketize_Tensor)(self, seq, out_int32, right, ret0);
  }
  return of_wrap(c);
}

#endif
