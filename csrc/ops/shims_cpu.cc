// SPDX-License-Identifier: Apache-2.0
// aoti_torch_cpu_*: the CPU reference fallback ops (PyTorch 2.11's c_shim_cpu.h signatures).
#include <memory>

#include "csrc/entry/c_entry.h"
#include "csrc/ops/attention/attention_args.h"
#include "csrc/ops/attention/attention_cpu.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/conv/convolution_cpu.h"
#include "csrc/ops/embedding/embedding_bag_args.h"
#include "csrc/ops/embedding/embedding_bag_cpu.h"
#include "csrc/ops/gemm/gemm_cpu.h"
#include "csrc/ops/scan/cumulative_cpu.h"
#include "csrc/ops/scatter/scatter_args.h"
#include "csrc/ops/scatter/scatter_cpu.h"
#include "csrc/ops/select/select_args.h"
#include "csrc/ops/select/select_cpu.h"
#include "csrc/ops/sort/histc_cpu.h"
#include "csrc/ops/sort/searchsorted_cpu.h"
#include "csrc/ops/sort/sort_args.h"
#include "csrc/ops/sort/sort_cpu.h"
#include "csrc/tensor/layout.h"

#include "slimcuda/aoti_torch_ops.h"

namespace slimcuda::ops {
namespace {

Error gemm_out(bool batched, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle a, AtenTensorHandle b,
               double beta, double alpha) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "null out");
  GemmProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_gemm(DeviceType::CPU, batched, out, self, a, b, beta, alpha, &p));
  SLIMCUDA_OP_TRY(gemm_cpu(p));
  return Error::Ok;
}

// A new CPU tensor for _addmm_activation and convolution; *owner keeps it until the op
// succeeds. CPU work needs no stream (nor a GPU).
Error new_cpu(ScalarType dtype, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              std::unique_ptr<SlimTensor>* owner) {
  return new_tensor(dtype, DeviceType::CPU, 0, sizes, strides, StreamContext::unselected(-1), owner);
}

Error cumulative(ScanOp op, AtenTensorHandle self, int64_t dim, int32_t* dtype, AtenTensorHandle* ret0) {
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "null ret0");
  std::unique_ptr<SlimTensor> out;
  SLIMCUDA_RETURN_IF_ERROR(cumulative_cpu(op, self, dim, dtype, &out));
  *ret0 = handle_of(out.release());
  return Error::Ok;
}

// _embedding_bag and _embedding_bag_forward_only (the same op in ATen's CPU kernel): checks,
// then the op; the four outputs handed out only when all are made.
Error embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets, int64_t mode,
                    AtenTensorHandle* per_sample_weights, int32_t include_last_offset, int64_t padding_idx,
                    AtenTensorHandle* const rets[4]) {
  EmbeddingBagProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_embedding_bag(DeviceType::CPU, weight, indices, offsets, mode, per_sample_weights,
                                               include_last_offset, padding_idx, rets, &p));
  std::unique_ptr<SlimTensor> out[4];
  SLIMCUDA_OP_TRY(embedding_bag_cpu(p, out));
  for (int i = 0; i < 4; ++i) *rets[i] = handle_of(out[i].release());
  return Error::Ok;
}

// sort / topk: the two outputs with the problem's layout, handed out once both are written.
Error sorted(const SortProblem& p, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  std::unique_ptr<SlimTensor> values, indices;
  SLIMCUDA_RETURN_IF_ERROR(new_cpu(p.dtype, p.out_sizes, p.out_strides, &values));
  SLIMCUDA_RETURN_IF_ERROR(new_cpu(ScalarType::Long, p.out_sizes, p.out_strides, &indices));
  SLIMCUDA_OP_TRY(sort_cpu(p, *values, *indices));
  *ret0 = handle_of(values.release());
  *ret1 = handle_of(indices.release());
  return Error::Ok;
}

Error search(const char* name, AtenTensorHandle seq, AtenTensorHandle self, double scalar, int32_t out_int32,
             int32_t right, const char** side, AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  SearchProblem p;
  SLIMCUDA_RETURN_IF_ERROR(
      check_searchsorted(DeviceType::CPU, name, seq, self, scalar, out_int32, right, side, sorter, ret0, &p));
  std::unique_ptr<SlimTensor> out;
  SLIMCUDA_RETURN_IF_ERROR(
      new_cpu(p.out_int32 ? ScalarType::Int : ScalarType::Long, p.out_sizes, contiguous_strides(p.out_sizes), &out));
  SLIMCUDA_OP_TRY(searchsorted_cpu(p, *out));
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

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_mm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                    AtenTensorHandle mat2) {
  return c_entry(__func__, [&]() { return ops::gemm_out(false, out, nullptr, self, mat2, 0.0, 1.0); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_addmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                       AtenTensorHandle mat1, AtenTensorHandle mat2, double beta,
                                                       double alpha) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    return ops::gemm_out(false, out, self, mat1, mat2, beta, alpha);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_bmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                     AtenTensorHandle mat2) {
  return c_entry(__func__, [&]() { return ops::gemm_out(true, out, nullptr, self, mat2, 0.0, 1.0); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_baddbmm_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                         AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                                         double alpha) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    return ops::gemm_out(true, out, self, batch1, batch2, beta, alpha);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__addmm_activation)(AtenTensorHandle self, AtenTensorHandle mat1,
                                                               AtenTensorHandle mat2, double beta, double alpha,
                                                               int32_t use_gelu, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "null self");
    SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "null ret0");
    ops::GemmProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_gemm(DeviceType::CPU, false, nullptr, self, mat1, mat2, beta, alpha, &p));
    p.act = use_gelu != 0 ? ops::Activation::Gelu : ops::Activation::Relu;
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, {p.m, p.n}, {p.n, 1}, &out));
    ops::set_gemm_out(out.get(), false, &p);
    SLIMCUDA_OP_TRY(ops::gemm_cpu(p));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_convolution)(
    AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
    const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::ConvProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_convolution(DeviceType::CPU, input, weight, bias, stride, stride_len_, padding,
                                                    padding_len_, dilation, dilation_len_, transposed, output_padding,
                                                    output_padding_len_, groups, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, p.out_sizes, p.out_strides, &out));
    SLIMCUDA_OP_TRY(ops::convolution_cpu(p, *out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu)(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return c_entry(__func__, [&]() {
    ops::AttentionOptions o;
    o.bias = attn_mask, o.dropout_p = dropout_p, o.is_causal = is_causal != 0, o.scale = scale;
    ops::AttentionProblem p;
    ops::AttentionLayout layout;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::check_attention(DeviceType::CPU, ops::AttentionOp::FlashForCpu, query, key, value, o, ret0, &p, &layout));
    std::unique_ptr<SlimTensor> out, lse;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, layout.out_sizes, layout.out_strides, &out));
    if (ret1 != nullptr) {
      SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(slimcuda::ScalarType::Float, layout.lse_sizes, layout.lse_strides, &lse));
    }
    ops::set_attention_outputs(out.get(), lse.get(), &p);
    SLIMCUDA_OP_TRY(ops::attention_cpu(p));
    *ret0 = ops::handle_of(out.release());
    if (ret1 != nullptr) *ret1 = ops::handle_of(lse.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_cumsum)(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                    AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() { return ops::cumulative(ops::ScanOp::Sum, self, dim, dtype, ret0); });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_cumprod)(AtenTensorHandle self, int64_t dim, int32_t* dtype,
                                                     AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() { return ops::cumulative(ops::ScanOp::Prod, self, dim, dtype, ret0); });
}

// scale_grad_by_freq and sparse concern the backward pass only: ignored, as ATen's forward does.
AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag)(AtenTensorHandle weight, AtenTensorHandle indices,
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

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag_forward_only)(
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

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_sort)(AtenTensorHandle self, int64_t dim, int32_t descending,
                                                  AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  return c_entry(__func__, [&]() {
    ops::SortProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_sort(DeviceType::CPU, self, dim, descending != 0, ret0, ret1, &p));
    return ops::sorted(p, ret0, ret1);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_sort_stable)(AtenTensorHandle self, int32_t* stable, int64_t dim,
                                                         int32_t descending, AtenTensorHandle* ret0,
                                                         AtenTensorHandle* ret1) {
  (void)stable;  // every sort here is stable, which an unstable one may be
  return SLIMCUDA_SHIM(aoti_torch_cpu_sort)(self, dim, descending, ret0, ret1);
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_topk)(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
                                                  int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  (void)sorted;  // always sorted (ATen leaves the order of an unsorted topk open)
  return c_entry(__func__, [&]() {
    ops::SortProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_topk(DeviceType::CPU, self, k, dim, largest != 0, ret0, ret1, &p));
    return ops::sorted(p, ret0, ret1);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_histc)(AtenTensorHandle self, int64_t bins, double min, double max,
                                                   AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::HistcProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_histc(DeviceType::CPU, self, bins, min, max, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, {p.bins}, {1}, &out));
    SLIMCUDA_OP_TRY(ops::histc_cpu(p, *out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Tensor)(AtenTensorHandle sorted_sequence,
                                                                 AtenTensorHandle self, int32_t out_int32,
                                                                 int32_t right, const char** side,
                                                                 AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "searchsorted: null self");
    return ops::search("searchsorted", sorted_sequence, self, 0.0, out_int32, right, side, sorter, ret0);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Scalar)(AtenTensorHandle sorted_sequence, double self,
                                                                 int32_t out_int32, int32_t right, const char** side,
                                                                 AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    return ops::search("searchsorted", sorted_sequence, nullptr, self, out_int32, right, side, sorter, ret0);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_bucketize_Tensor)(AtenTensorHandle self, AtenTensorHandle boundaries,
                                                              int32_t out_int32, int32_t right,
                                                              AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_RETURN_IF_ERROR(ops::check_bucketize(self, boundaries));
    return ops::search("bucketize", boundaries, self, 0.0, out_int32, right, nullptr, nullptr, ret0);
  });
}

// ---- scatter family ----

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                             AtenTensorHandle index, AtenTensorHandle src) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_scatter_src(DeviceType::CPU, out, self, dim, index, src, &p));
    return ops::scatter_cpu(p);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                               AtenTensorHandle index, double value) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_scatter_value(DeviceType::CPU, out, self, dim, index, value, &p));
    return ops::scatter_cpu(p);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_scatter_reduce_two_out)(AtenTensorHandle out, AtenTensorHandle self,
                                                                    int64_t dim, AtenTensorHandle index,
                                                                    AtenTensorHandle src, const char* reduce,
                                                                    int32_t include_self) {
  return c_entry(__func__, [&]() {
    ops::ScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::check_scatter_reduce(DeviceType::CPU, out, self, dim, index, src, reduce, include_self, &p));
    return ops::scatter_cpu(p);
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_index_put)(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                       int64_t indices_len_, AtenTensorHandle values,
                                                       int32_t accumulate, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::IndexPutProblem p;
    SLIMCUDA_RETURN_IF_ERROR(
        ops::check_index_put(DeviceType::CPU, self, indices, indices_len_, values, accumulate, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, p.out_sizes, p.out_strides, &out));
    SLIMCUDA_OP_TRY(ops::index_put_cpu(p, *out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_masked_scatter)(AtenTensorHandle self, AtenTensorHandle mask,
                                                            AtenTensorHandle source, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::MaskedScatterProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_masked_scatter(DeviceType::CPU, self, mask, source, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::new_cpu(p.dtype, p.out_sizes, slimcuda::contiguous_strides(p.out_sizes), &out));
    SLIMCUDA_OP_TRY(ops::masked_scatter_cpu(p, *out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

// ---- data-dependent selection: checks shared with CUDA, then the CPU loops ----

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_nonzero)(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::NonzeroProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_nonzero(DeviceType::CPU, "nonzero", self, ops::kNoStaticSize, 0, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::nonzero_cpu(p, &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_nonzero_static)(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                                            AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::NonzeroProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_nonzero(DeviceType::CPU, "nonzero_static", self, size, fill_value, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::nonzero_cpu(p, &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_masked_select)(AtenTensorHandle self, AtenTensorHandle mask,
                                                           AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::MaskedSelectProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_masked_select(DeviceType::CPU, self, mask, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::masked_select_cpu(p, &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

AOTITorchError SLIMCUDA_SHIM(aoti_torch_cpu_index_Tensor)(AtenTensorHandle self, const AtenTensorHandle** indices,
                                                          int64_t indices_len_, AtenTensorHandle* ret0) {
  return c_entry(__func__, [&]() {
    ops::IndexProblem p;
    SLIMCUDA_RETURN_IF_ERROR(ops::check_index(DeviceType::CPU, self, indices, indices_len_, ret0, &p));
    std::unique_ptr<SlimTensor> out;
    SLIMCUDA_RETURN_IF_ERROR(ops::index_cpu(p, &out));
    *ret0 = ops::handle_of(out.release());
    return Error::Ok;
  });
}

}  // extern "C"
