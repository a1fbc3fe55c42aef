// SPDX-License-Identifier: Apache-2.0
/* aoti_torch_ops.h — the ATen fallback ops of libslimcuda.so that AOTInductor exports call
 * (GEMMs, convolution, attention, cumulative sums, embedding bags, sorting, scatters,
 * data-dependent selection), with exactly the signatures of PyTorch 2.11's generated
 * torch/csrc/inductor/aoti_torch/generated/c_shim_cuda.h and c_shim_cpu.h.
 *
 * aoti_torch_cuda_*: on the current stream (the caller stream, or a model's stream guard),
 * never synchronizing (except the data-dependent selection ops below: one synchronization for
 * the output's size); cuBLASLt and cuDNN are opened on first use (a missing library is
 * NotSupported, with what to install in slimcuda_last_error_message()).
 * aoti_torch_cpu_*: plain C++ references of the same ops, on host tensors.
 *
 * Semantics as ATen's: out = beta * self + alpha * (mat1 @ mat2), beta == 0 ignoring self
 * (NaN included); self broadcast to out's shape; any operand strides; `out` written with
 * its own strides. Dtypes float32 (TF32 off for GEMMs, allowed for cuDNN convolutions, as
 * PyTorch's defaults), float16, bfloat16 (float accumulation). Bad input (null handles,
 * shape/dtype/device mismatches) -> a non-zero code, the reason in
 * slimcuda_last_error_message() and through aoti_torch_warn. Symbol prefix: as
 * aoti_torch.h (SLIMCUDA_SHIM). "new reference" outputs are freed with
 * aoti_torch_delete_tensor_object.
 */
#ifndef SLIMCUDA_AOTI_TORCH_OPS_H_
#define SLIMCUDA_AOTI_TORCH_OPS_H_

#include <stdint.h>

#include "slimcuda/aoti_torch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = self @ mat2 ([M,K] @ [K,N] -> [M,N]). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_mm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                  AtenTensorHandle mat2);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_mm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                 AtenTensorHandle mat2);
/* out = beta * self + alpha * (mat1 @ mat2); self broadcast to [M,N]. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_addmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                     AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                                     double beta, double alpha);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_addmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                    AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                                    double beta, double alpha);
/* out = self @ mat2, batched ([B,M,K] @ [B,K,N] -> [B,M,N]). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_bmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                   AtenTensorHandle mat2);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_bmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                  AtenTensorHandle mat2);
/* out = beta * self + alpha * (batch1 @ batch2); self broadcast to [B,M,N]. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_baddbmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                       AtenTensorHandle batch1, AtenTensorHandle batch2,
                                                                       double beta, double alpha);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_baddbmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                      AtenTensorHandle batch1, AtenTensorHandle batch2,
                                                                      double beta, double alpha);
/* *ret0 = act(beta * self + alpha * (mat1 @ mat2)), act = GELU (use_gelu != 0) or ReLU; a new
 * contiguous tensor (new reference). GELU: CUDA uses the tanh approximation (cuBLASLt's
 * epilogue, as ATen's CUDA kernel), CPU the exact erf form (as ATen's CPU kernel). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__addmm_activation)(AtenTensorHandle self,
                                                                             AtenTensorHandle mat1,
                                                                             AtenTensorHandle mat2, double beta,
                                                                             double alpha, int32_t use_gelu,
                                                                             AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__addmm_activation)(AtenTensorHandle self,
                                                                            AtenTensorHandle mat1,
                                                                            AtenTensorHandle mat2, double beta,
                                                                            double alpha, int32_t use_gelu,
                                                                            AtenTensorHandle* ret0);
/* *ret0 = convolution (1-D/2-D/3-D: input [N,C,*], weight [Cout,C/groups,*] or, transposed,
 * [C,Cout/groups,*]); bias NULL or a pointer to a [Cout] handle; each list has one entry
 * per spatial dimension (or one, used for all). A new tensor (new reference), channels-last
 * when the input is. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_convolution)(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_convolution)(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0);

/* Scaled-dot-product attention (inference): query [B,Hq,Sq,D], key [B,Hkv,Skv,D], value
 * [B,Hkv,Skv,Dv] (Hq a multiple of Hkv: grouped-query), any strides; attn_bias/attn_mask NULL,
 * a pointer to NULL, or a pointer to an additive bias (the query's dtype or float32) or a bool
 * mask (true = attend) broadcastable to [B,Hq,Sq,Skv]; is_causal masks keys j > i (upper-left);
 * scale NULL = 1/sqrt(D). Outputs (new references) with the sizes and strides of PyTorch's
 * meta functions: ret0 the attention [B,Hq,Sq,Dv], ret1 the float32 logsumexp (natural log).
 * Any output pointer but ret0 may be NULL (not returned). dropout_p > 0 and return_debug_mask
 * are NotSupported. See docs/fallback-ops.md.
 * efficient: ret0 laid out [B,Sq,Hq,Dv]; ret1 [B,Hq,ceil(Sq/32)*32] (only the first Sq of each
 * row written), or [B,Hq,0] when compute_log_sumexp is 0; ret2/ret3 (philox seed, offset) CPU
 * int64 scalars 0. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3);
/* flash: ret0 laid out as torch.empty_like(query); ret1 [B,Hq,Sq]; ret2/ret3 (cum_seq_q/k)
 * NULL (PyTorch's are undefined); ret4/ret5 Sq and Skv; ret6 ([2]) / ret7 ([]) CPU int64 zeros
 * (the philox state); ret8 an empty [0] tensor of the query's dtype and device. Dv == D. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_flash_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8);
/* cudnn: ret0 laid out as the query (matching layout); ret1 [B,Hq,Sq,1] (always computed);
 * ret2/ret3 NULL; ret4/ret5 Sq and Skv; ret6/ret7 CPU int64 scalars 0; ret8 NULL. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_cudnn_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4,
    int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8);
/* CPU: ret0 laid out as torch.empty_like(query); ret1 [B,Hq,Sq] laid out [B,Sq,Hq]. Dv == D. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1);

/* ---- Cumulative ops (CPU) ---- */
/* ret0 (new reference, contiguous) = the running sum / product of self along dim (negative
 * from the end); dtype NULL: int64 for integral and bool self, else self's; else self is
 * converted to *dtype first. Any dtype of slimcuda's, any strides. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_cumsum)(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                                 AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_cumprod)(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                                  AtenTensorHandle* ret0);

/* ---- Embedding bags (ATen's _embedding_bag; _embedding_bag_forward_only is the same op) ----
 * weight [num_weights, D] (float32, float16, bfloat16, float64; any strides), indices [n] and
 * offsets (int32 or int64, 1-D; bag b = indices[offsets[b], offsets[b+1])), mode 0 sum /
 * 1 mean / 2 max, per_sample_weights NULL, a pointer to NULL, or a pointer to a [n] tensor of
 * weight's dtype (sum only), include_last_offset (offsets' last entry ends the last bag, not
 * a bag of its own), padding_idx (indices equal to it are skipped; negative: none);
 * scale_grad_by_freq and sparse are ignored (backward only). ret0..ret3 (new references):
 * output, offset2bag, bag_size, max_indices, with the shapes and values each device's ATen
 * kernel returns (they differ: docs/fallback-ops.md). CPU: bad offsets or an index outside
 * [0, num_weights) -> InvalidArgument. CUDA: on the current stream, no synchronization; bad
 * offsets and indices are clamped on the device (an out-of-range index reads nothing and is
 * marked -1 in offset2bag). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag)(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag_forward_only)(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag)(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag_forward_only)(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3);

/* ---- Sorting and searching (CPU and CUDA) ---- */
/* ret0/ret1 (new references) = self sorted along dim (negative from the end; a 0-d tensor
 * takes 0 or -1), ascending or descending, and the int64 positions the values came from.
 * Always stable (ties keep input order; stable is ignored); NaN sorts as the largest value,
 * -0.0 equal to 0.0. Outputs have self's strides when those are non-overlapping and dense,
 * else dense strides in self's order (as ATen). Any dtype of slimcuda's, any strides. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_sort)(AtenTensorHandle self, int64_t dim, int32_t descending,
                                                                AtenTensorHandle* ret0, AtenTensorHandle* ret1);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_sort)(AtenTensorHandle self, int64_t dim, int32_t descending,
                                                               AtenTensorHandle* ret0, AtenTensorHandle* ret1);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_sort_stable)(AtenTensorHandle self, int32_t* stable,
                                                                       int64_t dim, int32_t descending,
                                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_sort_stable)(AtenTensorHandle self, int32_t* stable,
                                                                      int64_t dim, int32_t descending,
                                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1);
/* The k largest (largest != 0) or smallest along dim, in order (sorted is ignored: always
 * sorted), ties in input order, NaN largest; contiguous outputs with dim's size k. k outside
 * [0, size] -> InvalidArgument; bool -> NotSupported (as ATen). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_topk)(AtenTensorHandle self, int64_t k, int64_t dim,
                                                                int32_t largest, int32_t sorted, AtenTensorHandle* ret0,
                                                                AtenTensorHandle* ret1);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_topk)(AtenTensorHandle self, int64_t k, int64_t dim,
                                                               int32_t largest, int32_t sorted, AtenTensorHandle* ret0,
                                                               AtenTensorHandle* ret1);
/* ret0 = a [bins] histogram of self (float32/float16/bfloat16/float64, its dtype) over
 * [min, max]; min == max: the data's min and max (CUDA: computed on the device, no
 * synchronization; a NaN or infinite element there counts nothing, where the CPU and ATen
 * refuse the range); outside values and NaN ignored, max in the last bin. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_histc)(AtenTensorHandle self, int64_t bins, double min,
                                                                 double max, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_histc)(AtenTensorHandle self, int64_t bins, double min,
                                                                double max, AtenTensorHandle* ret0);
/* ret0 (int64, or int32 with out_int32; contiguous, self's shape) = where each value of self
 * would be inserted in its row of sorted_sequence (1-d, or matching self in all but the last
 * dimension): the first position whose element is not below it, or (right, or *side
 * "right"; side wins, right with "left" is InvalidArgument) above it; sorter NULL, a pointer
 * to NULL, or to int64 positions sorting each row. Values compare in ATen's common dtype. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Tensor)(AtenTensorHandle sorted_sequence,
                                                                               AtenTensorHandle self, int32_t out_int32,
                                                                               int32_t right, const char** side,
                                                                               AtenTensorHandle* sorter,
                                                                               AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Tensor)(AtenTensorHandle sorted_sequence,
                                                                              AtenTensorHandle self, int32_t out_int32,
                                                                              int32_t right, const char** side,
                                                                              AtenTensorHandle* sorter,
                                                                              AtenTensorHandle* ret0);
/* The same for one value (1-d sorted_sequence; a 0-d result). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Scalar)(AtenTensorHandle sorted_sequence,
                                                                               double self, int32_t out_int32,
                                                                               int32_t right, const char** side,
                                                                               AtenTensorHandle* sorter,
                                                                               AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Scalar)(AtenTensorHandle sorted_sequence,
                                                                              double self, int32_t out_int32,
                                                                              int32_t right, const char** side,
                                                                              AtenTensorHandle* sorter,
                                                                              AtenTensorHandle* ret0);
/* searchsorted(boundaries, self, out_int32, right) with 1-d boundaries. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_bucketize_Tensor)(AtenTensorHandle self,
                                                                            AtenTensorHandle boundaries,
                                                                            int32_t out_int32, int32_t right,
                                                                            AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_bucketize_Tensor)(AtenTensorHandle self,
                                                                           AtenTensorHandle boundaries,
                                                                           int32_t out_int32, int32_t right,
                                                                           AtenTensorHandle* ret0);

/* ---- Scatter family (CPU and CUDA) ---- */
/* out = self with src's elements written along dim where index (int64 or int32, of self's
 * rank, no larger than src, nor than self but along dim) says: out[..., index[i...], ...] =
 * src[i...]. out has self's sizes and dtype; out == self (the same view) scatters in place.
 * An index outside [0, size along dim): CPU InvalidArgument, nothing written; CUDA writes
 * nothing for it (no synchronization to report it; ATen's kernel asserts on the device).
 * Duplicate indices: one of the writes wins (CPU: the last in index order). Any dtype of
 * slimcuda's, any strides, empty tensors, negative dim. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_src_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                           int64_t dim, AtenTensorHandle index,
                                                                           AtenTensorHandle src);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                          int64_t dim, AtenTensorHandle index,
                                                                          AtenTensorHandle src);
/* The same with one value (converted to self's dtype; a finite value it cannot hold is
 * InvalidArgument, as ATen). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_value_out)(AtenTensorHandle out,
                                                                             AtenTensorHandle self, int64_t dim,
                                                                             AtenTensorHandle index, double value);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                            int64_t dim, AtenTensorHandle index,
                                                                            double value);
/* out = self, src's elements reduced into it where index says: reduce "sum", "prod",
 * "mean" (integers rounded down), "amax", "amin" (NaN propagates); include_self 0 starts
 * every element that receives one from the reduction's identity instead of self. CUDA:
 * atomics, so floating sums of duplicates add in an unspecified order (as ATen's). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_reduce_two_out)(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim, AtenTensorHandle index, AtenTensorHandle src,
    const char* reduce, int32_t include_self);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_reduce_two_out)(
    AtenTensorHandle out, AtenTensorHandle self, int64_t dim, AtenTensorHandle index, AtenTensorHandle src,
    const char* reduce, int32_t include_self);
/* ret0 (new reference; self's strides when they are non-overlapping and dense, else dense in
 * self's order) = self with values written (accumulate: added) at self[indices]: indices[i]
 * NULL (None) or a pointer to an int64/int32/bool/uint8 tensor, broadcast together as
 * ATen's advanced indexing, negative indices from the end; values broadcast to the indexing
 * result. Out-of-range indices as scatter. CUDA takes a bool index only as the one index
 * with values that do not vary along its true elements (x[mask] = v); other bool indices
 * need the count of true elements on the host: NotSupported there (the CPU takes them). */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_index_put)(AtenTensorHandle self,
                                                                     const AtenTensorHandle** indices,
                                                                     int64_t indices_len_, AtenTensorHandle values,
                                                                     int32_t accumulate, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_index_put)(AtenTensorHandle self,
                                                                    const AtenTensorHandle** indices,
                                                                    int64_t indices_len_, AtenTensorHandle values,
                                                                    int32_t accumulate, AtenTensorHandle* ret0);
/* ret0 (new reference, contiguous, the broadcast shape of self and mask) = self where the
 * bool mask is false, else source's elements in row-major order. Too few source elements:
 * CPU InvalidArgument; CUDA leaves the positions past source's end as self. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_masked_scatter)(AtenTensorHandle self, AtenTensorHandle mask,
                                                                          AtenTensorHandle source,
                                                                          AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_masked_scatter)(AtenTensorHandle self, AtenTensorHandle mask,
                                                                         AtenTensorHandle source,
                                                                         AtenTensorHandle* ret0);

/* ---- Data-dependent selection (CPU and CUDA) ----
 * The output's size depends on the data: CUDA counts on the device, reads the count back with
 * one synchronization of the current stream (as ATen), then allocates and fills on the stream;
 * while the stream is being captured into a CUDA graph such a call is NotSupported ("... has a
 * data-dependent output size (one stream synchronization reads it back), which a CUDA graph
 * cannot capture"), refused before anything is enqueued. Any dtype, any strides, 0-d and empty tensors; outputs are new
 * references. */
/* ret0 = int64 [n, self.dim()]: the coordinates of self's nonzero elements (NaN is nonzero,
 * -0.0 is not) in row-major order, laid out column-major (strides (1, n)) as PyTorch's. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(AtenTensorHandle self, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_nonzero)(AtenTensorHandle self, AtenTensorHandle* ret0);
/* nonzero's first `size` rows, the rest filled with fill_value: int64 [size, self.dim()]
 * (CUDA column-major, CPU row-major, as PyTorch's meta); no synchronization, capturable.
 * size < 0 -> InvalidArgument. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(AtenTensorHandle self, int64_t size,
                                                                          int64_t fill_value, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_nonzero_static)(AtenTensorHandle self, int64_t size,
                                                                         int64_t fill_value, AtenTensorHandle* ret0);
/* ret0 = 1-D, self's dtype: self's elements where mask (bool) is true, self and mask
 * broadcast together, row-major over the broadcast shape. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_masked_select)(AtenTensorHandle self, AtenTensorHandle mask,
                                                                         AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_masked_select)(AtenTensorHandle self, AtenTensorHandle mask,
                                                                        AtenTensorHandle* ret0);
/* Advanced indexing, self[indices]: indices[i] NULL is None (a whole dimension), else a
 * pointer to an int64 / int32 index tensor or a bool / uint8 mask (its nonzero coordinates
 * index the dimensions it covers). Index tensors broadcast together; their shape replaces the
 * indexed dimensions where those are adjacent, else leads. Negative indices count from the
 * end. Output strides as PyTorch's meta (self's stride order). CPU: an index out of range ->
 * InvalidArgument; CUDA: its element is 0 (no synchronization can report it). Only a mask
 * needs the synchronization; int indices alone are capturable. */
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(AtenTensorHandle self,
                                                                        const AtenTensorHandle** indices,
                                                                        int64_t indices_len_, AtenTensorHandle* ret0);
SLIMCUDA_API AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_index_Tensor)(AtenTensorHandle self,
                                                                       const AtenTensorHandle** indices,
                                                                       int64_t indices_len_, AtenTensorHandle* ret0);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIMCUDA_AOTI_TORCH_OPS_H_ */
