// SPDX-License-Identifier: Apache-2.0
// aoti_torch_cuda_*: the CUDA fallback ops (PyTorch 2.11's c_shim_cuda.h signatures), on
// the current stream: checks first (shared with the CPU ops), then the stream is resolved
// once and passed down, then the op enqueues its work.
#include <memory>

#include "csrc/cuda/device.h"
#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/ops/attention/attention_args.h"
#include "csrc/ops/attention/attention_cuda.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/conv/convolution_cuda.h"
#include "csrc/ops/embedding/embedding_bag_args.h"
#include "csrc/ops/embedding/embedding_bag_cuda.h"
#include "csrc/ops/gemm/gemm_cuda.h"
#include "csrc/ops/scatter/scatter_args.h"
#include "csrc/ops/scatter/scatter_cuda.h"
#include "csrc/ops/select/select_args.h"
#include "csrc/ops/select/select_cuda.h"
#include "csrc/ops/sort/histc_cuda.h"
#include "csrc/ops/sort/searchsorted_cuda.h"
#include "csrc/ops/sort/sort_args.h"
#include "csrc/ops/sort/sort_cuda.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/aoti_torch_ops.h"

namespace slimcuda::ops {
namespace {

// The entry's one read of the caller stream (caller_context: the selected stream, checked
// against the operands' device, or that device's legacy default stream), and the device made
// current for the op's scope (library handles and launches use the current device).
class CudaScope {
 public:
  CudaScope(int device) : guard_(device) {
    error_ = guard_.error() != Error::Ok ? guard_.error() : caller_context(device, &ctx_);
  }
  [[nodiscard]] Error error() const noexcept { return error_; }
  [[nodiscard]] const StreamContext& ctx() const noexcept { return ctx_; }

 private:
  cuda::DeviceGuard guard_;
  StreamContext ctx_ = StreamContext::unselected(-1);
  Error error_ = Error::Ok;
};

Error gemm_out(bool batched, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle a, AtenTensorHandle b,
               double beta, double alpha) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "null out");
  GemmProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_gemm(DeviceType::CUDA, batched, out, self, a, b, beta, alpha, &p));
  CudaScope scope(p.device);
  SLIMCUDA_OP_TRY(scope.error());
  SLIMCUDA_OP_TRY(gemm_cuda(p, scope.ctx()));
  return Error::Ok;
}

Error new_cuda(ScalarType dtype, const StreamContext& ctx, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides, std::unique_ptr<SlimTensor>* owner) {
  return new_tensor(dtype, DeviceType::CUDA, ctx.device(), sizes, strides, ctx, owner);
}

// Where an attention shim's outputs go (null: not wanted), in PyTorch's return order.
struct AttentionRets {
  AtenTensorHandle* out = nullptr;
  AtenTensorHandle* lse = nullptr;
  AtenTensorHandle* cum_seq_q = nullptr;
  AtenTensorHandle* cum_seq_k = nullptr;
  int64_t* max_q = nullptr;
  int64_t* max_k = nullptr;
  AtenTensorHandle* seed = nullptr;
  AtenTensorHandle* offset = nullptr;
  AtenTensorHandle* debug_mask = nullptr;
};

// The three CUDA attention shims: checks, outputs allocated on the stream with the op's
// layouts, the attention enqueued, then every output handed out (nothing is handed out on
// failure, and what was allocated is freed).
Error attention(AttentionOp op, AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                const AttentionOptions& options, const AttentionRets& r) {
  AttentionProblem p;
  AttentionLayout layout;
  SLIMCUDA_RETURN_IF_ERROR(check_attention(DeviceType::CUDA, op, query, key, value, options, r.out, &p, &layout));
  CudaScope scope(p.device);
  SLIMCUDA_OP_TRY(scope.error());
  std::unique_ptr<SlimTensor> out, lse, seed, offset, debug_mask;
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.dtype, scope.ctx(), layout.out_sizes, layout.out_strides, &out));
  if (r.lse != nullptr) {
    SLIMCUDA_RETURN_IF_ERROR(new_cuda(ScalarType::Float, scope.ctx(), layout.lse_sizes, layout.lse_strides, &lse));
  }
  // Philox state placeholders (no dropout): flash's rng_state is [2], the others' seeds scalars.
  if (r.seed != nullptr) {
    SLIMCUDA_RETURN_IF_ERROR(
        new_rng_placeholder(op == AttentionOp::Flash ? std::vector<int64_t>{2} : std::vector<int64_t>{}, &seed));
  }
  if (r.offset != nullptr) SLIMCUDA_RETURN_IF_ERROR(new_rng_placeholder({}, &offset));
  if (r.debug_mask != nullptr && op == AttentionOp::Flash) {
    SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.dtype, scope.ctx(), {0}, {1}, &debug_mask));
  }
  set_attention_outputs(out.get(), lse.get(), &p);
  SLIMCUDA_OP_TRY(attention_cuda(p, scope.ctx()));
  *r.out = handle_of(out.release());
  if (r.lse != nullptr) *r.lse = handle_of(lse.release());
  if (r.cum_seq_q != nullptr) *r.cum_seq_q = nullptr;
  if (r.cum_seq_k != nullptr) *r.cum_seq_k = nullptr;
  if (r.max_q != nullptr) *r.max_q = p.seq_q;
  if (r.max_k != nullptr) *r.max_k = p.seq_kv;
  if (r.seed != nullptr) *r.seed = handle_of(seed.release());
  if (r.offset != nullptr) *r.offset = handle_of(offset.release());
  if (r.debug_mask != nullptr) *r.debug_mask = handle_of(debug_mask.release());
  return Error::Ok;
}

// _embedding_bag and _embedding_bag_forward_only on CUDA (one op in ATen's CUDA kernel):
// checks, the caller's stream, then the kernel enqueued; no synchronization.
Error embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int64_t mode,
                    AtenTensorHandle* per_sample_weights, int32_t include_last_offset, int64_t padding_idx,
                    AtenTensorHandle* const rets[4]) {
  EmbeddingBagProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_embedding_bag(DeviceType::CUDA, weight, indices, offsets, mode, per_sample_weights,
                                               include_last_offset, padding_idx, rets, &p));
  CudaScope scope(p.device);
  SLIMCUDA_OP_TRY(scope.error());
  std::unique_ptr<SlimTensor> out[4];
  SLIMCUDA_OP_TRY(embedding_bag_cuda(p, scope.ctx(), out));
  for (int i = 0; i < 4; ++i) *rets[i] = handle_of(out[i].release());
  return Error::Ok;
}

// sort / topk on the stream: both outputs with the problem's layout, handed out once the
// sort is enqueued.
Error sorted(const SortProblem& p, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  CudaScope scope(p.device);
  SLIMCUDA_OP_TRY(scope.error());
  std::unique_ptr<SlimTensor> values, indices;
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.dtype, scope.ctx(), p.out_sizes, p.out_strides, &values));
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(ScalarType::Long, scope.ctx(), p.out_sizes, p.out_strides, &indices));
  SLIMCUDA_OP_TRY(sort_cuda(p, *values, *indices, scope.ctx()));
  *ret0 = handle_of(values.release());
  *ret1 = handle_of(indices.release());
  return Error::Ok;
}

Error search(const char* name, AtenTensorHandle seq, AtenTensorHandle self, double scalar, int32_t out_int32,
             int32_t right, const char** side, AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  SearchProblem p;
  SLIMCUDA_RETURN_IF_ERROR(
      check_searchsorted(DeviceType::CUDA, name, seq, self, scalar, out_int32, right, side, sorter, ret0, &p));
  CudaScope scope(p.device);
  SLIMCUDA_OP_TRY(scope.error());
  std::unique_ptr<SlimTensor> out;
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.out_int32 ? ScalarType::Int : ScalarType::Long, scope.ctx(), p.out_sizes,
                                    contiguous_strides(p.out_sizes), &out));
  SLIMCUDA_OP_TRY(searchsorted_cuda(p, *out, scope.ctx()));
  *ret0 = handle_of(out.release());
  return Error::Ok;
}

}  // namespace
}  // namespace slimcuda::ops

using slimcuda::c_entry;
using slimcuda::DeviceType;
using slimcuda::Error;
using slimcuda::SlimTensor;
namespace ops = slimcuda::ops;

extern "C" {

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_mm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                     AtenTensorHandle mat2) {
  return c_entry(__func__, [&]() { return ops::gemm_out(false, out, nullptr, self, mat2, 0.0, 1.0); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_addmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                        AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                        double alpha) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    return ops::gemm_out(false, out, self, mat1, mat2, beta, alpha);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_bmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                      AtenTensorHandle mat2) {
  return c_entry(__func__, [&]() { return ops::gemm_out(true, out, nullptr, self, mat2, 0.0, 1.0); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_baddbmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                          AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                                          double alpha) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    return ops::gemm_out(true, out, self, batch1, batch2, beta, alpha);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__addmm_activation)(AtenTensorHandle self, AtenTensorHandle mat1,
                                                                AtenTensorHandle mat2, double beta, double alpha,
                                                                int32_t use_gelu, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "null ret0");
    ops::GemmProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_gemm(DeviceType::CUDA, false, nullptr, self, mat1, mat2, beta, alpha, &p));
    p.act = use_gelu != 0 ? ops::Activation::Gelu : ops::Activation::Relu;
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cuda(p.dtype, scope.ctx(), {p.m, p.n}, {p.n, 1}, &out));
    ops::set_gemm_out(out.get(), false, &p);
    SLIMCUDA_OP_TRY(ops::gemm_cuda(p, scope.ctx()));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_convolution)(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::ConvProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_convolution(DeviceType::CUDA, input, weight, bias, stride, stride_len_, padding,
                                                    padding_len_, dilation, dilation_len_, transposed, output_padding,
                                                    output_padding_len_, groups, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cuda(p.dtype, scope.ctx(), p.out_sizes, p.out_strides, &out));
    SLIMCUDA_OP_TRY(ops::convolution_cuda(p, *out, scope.ctx()));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  return c_entry(__func__, [&]() {
    ops::AttentionOptions o;
    o.bias = attn_bias, o.compute_log_sumexp = compute_log_sumexp != 0, o.dropout_p = dropout_p;
    o.is_causal = is_causal != 0, o.scale = scale;
    ops::AttentionRets r;
    r.out = ret0, r.lse = ret1, r.seed = ret2, r.offset = ret3;
    return ops::attention(ops::AttentionOp::Efficient, query, key, value, o, r);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_flash_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) {
  return c_entry(__func__, [&]() {
    ops::AttentionOptions o;
    o.dropout_p = dropout_p, o.is_causal = is_causal != 0, o.return_debug_mask = return_debug_mask != 0;
    o.scale = scale;
    ops::AttentionRets r;
    r.out = ret0, r.lse = ret1, r.cum_seq_q = ret2, r.cum_seq_k = ret3, r.max_q = ret4, r.max_k = ret5;
    r.seed = ret6, r.offset = ret7, r.debug_mask = ret8;
    return ops::attention(ops::AttentionOp::Flash, query, key, value, o, r);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_cudnn_attention)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4,
    int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) {
  return c_entry(__func__, [&]() {
    ops::AttentionOptions o;
    o.bias = attn_bias, o.compute_log_sumexp = compute_log_sumexp != 0, o.dropout_p = dropout_p;
    o.is_causal = is_causal != 0, o.return_debug_mask = return_debug_mask != 0, o.scale = scale;
    ops::AttentionRets r;
    r.out = ret0, r.lse = ret1, r.cum_seq_q = ret2, r.cum_seq_k = ret3, r.max_q = ret4, r.max_k = ret5;
    r.seed = ret6, r.offset = ret7, r.debug_mask = ret8;
    return ops::attention(ops::AttentionOp::Cudnn, query, key, value, o, r);
  });
}

// scale_grad_by_freq and sparse concern the backward pass only: ignored, as ATen's CUDA forward does.
AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag)(AtenTensorHandle weight, AtenTensorHandle indices,
                                                             AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                             int64_t mode, int32_t sparse,
                                                             AtenTensorHandle* per_sample_weights,
                                                             int32_t include_last_offset, int64_t padding_idx,
                                                             AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                             AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  (void)scale_grad_by_freq, (void)sparse;
  return c_entry(__func__, [&]() {
    AtenTensorHandle* const rets[4] = {ret0, ret1, ret2, ret3};
    return ops::embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                              rets);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag_forward_only)(
    AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int32_t scale_grad_by_freq,
    int64_t mode, int32_t sparse, AtenTensorHandle* per_sample_weights, int32_t include_last_offset,
    int64_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3) {
  (void)scale_grad_by_freq, (void)sparse;
  return c_entry(__func__, [&]() {
    AtenTensorHandle* const rets[4] = {ret0, ret1, ret2, ret3};
    return ops::embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                              rets);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_sort)(AtenTensorHandle self, int64_t dim, int32_t descending,
                                                   AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return c_entry(__func__, [&]() {
    ops::SortProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_sort(DeviceType::CUDA, self, dim, descending != 0, ret0, ret1, &p));
    return ops::sorted(p, ret0, ret1);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_sort_stable)(AtenTensorHandle self, int32_t* stable, int64_t dim,
                                                          int32_t descending, AtenTensorHandle* ret0,
                                                          AtenTensorHandle* ret1) {
  (void)stable;  // every sort here is stable, which an unstable one may be
  return SLIMCUDA_SHIM(aoti_torch_cuda_sort)(self, dim, descending, ret0, ret1);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_topk)(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
                                                   int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  (void)sorted;  // always sorted (ATen leaves the order of an unsorted topk open)
  return c_entry(__func__, [&]() {
    ops::SortProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_topk(DeviceType::CUDA, self, k, dim, largest != 0, ret0, ret1, &p));
    return ops::sorted(p, ret0, ret1);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_histc)(AtenTensorHandle self, int64_t bins, double min, double max,
                                                    AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::HistcProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_histc(DeviceType::CUDA, self, bins, min, max, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cuda(p.dtype, scope.ctx(), {p.bins}, {1}, &out));
    SLIMCUDA_OP_TRY(ops::histc_cuda(p, *out, scope.ctx()));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Tensor)(AtenTensorHandle sorted_sequence,
                                                                  AtenTensorHandle self, int32_t out_int32,
                                                                  int32_t right, const char** side,
                                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "searchsorted: null self");
    return ops::search("searchsorted", sorted_sequence, self, 0.0, out_int32, right, side, sorter, ret0);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Scalar)(AtenTensorHandle sorted_sequence, double self,
                                                                  int32_t out_int32, int32_t right, const char** side,
                                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    return ops::search("searchsorted", sorted_sequence, nullptr, self, out_int32, right, side, sorter, ret0);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_bucketize_Tensor)(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                               int32_t out_int32, int32_t right,
                                                               AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_RETURN_IF_ERROR(ops::check_bucketize(self, boundaries));
    return ops::search("bucketize", boundaries, self, 0.0, out_int32, right, nullptr, nullptr, ret0);
  });
}

// ---- scatter family ----

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_src_out)(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                              AtenTensorHandle index, AtenTensorHandle src) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_scatter_src(DeviceType::CUDA, out, self, dim, index, src, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    SLIMCUDA_OP_TRY(ops::scatter_cuda(p, scope.ctx()));
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_value_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                int64_t dim, AtenTensorHandle index, double value) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_scatter_value(DeviceType::CUDA, out, self, dim, index, value, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    SLIMCUDA_OP_TRY(ops::scatter_cuda(p, scope.ctx()));
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_scatter_reduce_two_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                     int64_t dim, AtenTensorHandle index,
                                                                     AtenTensorHandle src, const char* reduce,
                                                                     int32_t include_self) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::check_scatter_reduce(DeviceType::CUDA, out, self, dim, index, src, reduce, include_self, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    SLIMCUDA_OP_TRY(ops::scatter_cuda(p, scope.ctx()));
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_index_put)(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                        int64_t indices_len_, AtenTensorHandle values,
                                                        int32_t accumulate, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::IndexPutProblem p;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::check_index_put(DeviceType::CUDA, self, indices, indices_len_, values, accumulate, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cuda(p.dtype, scope.ctx(), p.out_sizes, p.out_strides, &out));
    SLIMCUDA_OP_TRY(ops::index_put_cuda(p, *out, scope.ctx()));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_masked_scatter)(AtenTensorHandle self, AtenTensorHandle mask,
                                                             AtenTensorHandle source, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::MaskedScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_masked_scatter(DeviceType::CUDA, self, mask, source, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::new_cuda(p.dtype, scope.ctx(), p.out_sizes, slimcuda::contiguous_strides(p.out_sizes), &out));
    SLIMCUDA_OP_TRY(ops::masked_scatter_cuda(p, *out, scope.ctx()));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

// ---- data-dependent selection: checks shared with the CPU, the caller's stream, then the
// count, its one read-back and the fill (select_cuda.h) ----

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::NonzeroProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_nonzero(DeviceType::CUDA, "nonzero", self, ops::kNoStaticSize, 0, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::nonzero_cuda(p, scope.ctx(), &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                                             AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::NonzeroProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_nonzero(DeviceType::CUDA, "nonzero_static", self, size, fill_value, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::nonzero_cuda(p, scope.ctx(), &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_masked_select)(AtenTensorHandle self, AtenTensorHandle mask,
                                                            AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::MaskedSelectProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_masked_select(DeviceType::CUDA, self, mask, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::masked_select_cuda(p, scope.ctx(), &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                           int64_t indices_len_, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::IndexProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_index(DeviceType::CUDA, self, indices, indices_len_, ret0, &p));
    ops::CudaScope scope(p.device);
    SLIMCUDA_OP_TRY(scope.error());
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::index_cuda(p, scope.ctx(), &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

}  // extern "C"
