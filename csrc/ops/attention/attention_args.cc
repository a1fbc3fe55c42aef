// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/attention/attention_args.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "csrc/tensor/layout.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda::ops {
namespace {

const char* device_name(DeviceType t) noexcept { return t == DeviceType::CUDA ? "CUDA" : "CPU"; }

bool is_float_type(ScalarType t) noexcept {
  return t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16;
}

// Device checks of one tensor: the op's device type, and one CUDA device for all.
Error check_device(const char* what, const SlimTensor* t, DeviceType device_type, int* device) noexcept {
  SLIMCUDA_OP_CHECK(t->device().type == device_type, Error::InvalidArgument, "%s is a %s tensor; expected %s", what,
                    device_name(t->device().type), device_name(device_type));
  if (device_type == DeviceType::CUDA) {
    if (*device < 0) *device = t->device().index;
    SLIMCUDA_OP_CHECK(t->device().index == *device, Error::InvalidArgument,
                      "%s is on cuda:%d, the other operands on cuda:%d", what, t->device().index, *device);
  }
  return Error::Ok;
}

// PyTorch's meta for the cudnn op (alloc_with_matching_layout): the query's layout when the
// output has its shape, else dense strides ordered as the query's (largest stride first,
// ties in dimension order).
std::vector<int64_t> matching_layout_strides(const SlimTensor& q, const std::vector<int64_t>& res) {
  if (q.sizes() == res) return empty_like_strides(q.sizes(), q.strides());
  std::vector<size_t> order(4);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return q.strides()[a] > q.strides()[b]; });
  std::vector<int64_t> strides(4, 1);
  int64_t s = 1;
  for (size_t i = 4; i-- > 0;) {
    strides[order[i]] = s;
    s *= std::max<int64_t>(res[order[i]], 1);
  }
  return strides;
}

}  // namespace

std::vector<int64_t> empty_like_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  // PyTorch's Python reference (torch._refs.empty_like: what meta and fake tensors, and so
  // Inductor, compute): a contiguous input gives contiguous strides, a channels-last one
  // channels-last strides; otherwise the dimensions are ordered by stride and laid out
  // densely in that order (compute_elementwise_output_logical_to_physical_perm).
  const size_t nd = sizes.size();
  auto dense_in = [&](const std::vector<size_t>& inner_first) {
    std::vector<int64_t> out(nd, 1);
    int64_t s = 1;
    for (size_t d : inner_first) {
      out[d] = s;
      s *= std::max<int64_t>(sizes[d], 1);
    }
    return out;
  };
  auto nested = [&](const std::vector<size_t>& inner_first) {  // size-1 dimensions do not count
    int64_t expected = 1;
    for (size_t d : inner_first) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  };
  std::vector<size_t> row_major(nd);
  for (size_t i = 0; i < nd; ++i) row_major[i] = nd - 1 - i;
  if (nd <= 1) return dense_in(row_major);
  int64_t numel = 1;
  for (int64_t x : sizes) numel *= x;
  const bool contiguous = numel < 2 || nested(row_major);
  const bool channels_last = nd == 4 && nested({1, 3, 2, 0});
  if (contiguous && !channels_last) return dense_in(row_major);
  if (channels_last && !contiguous) return dense_in({1, 3, 2, 0});
  // Insertion sort of the dimensions, innermost first: a smaller stride goes inside; equal
  // strides order by size (the larger outside); a zero stride leaves the order undecided.
  auto should_swap = [&](size_t a, size_t b) {
    const int64_t sa = strides[a], sb = strides[b];
    if (sa == 0 || sb == 0) return 0;
    if (sa == sb) return sizes[b] >= sizes[a] ? 0 : 1;
    return sb > sa ? -1 : 1;
  };
  std::vector<size_t> perm = row_major;
  for (size_t i = 1; i < nd; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return dense_in(perm);
}

namespace {

// query, key and value: one device, one float dtype, 4-D [batch, heads, seq, head_dim] with
// matching sizes (grouped-query heads allowed); the problem's shape and operands from them.
Error check_qkv(DeviceType device_type, AttentionOp op, const SlimTensor* q, const SlimTensor* k, const SlimTensor* v,
                AttentionProblem* p) {
  p->device = -1;
  const struct {
    const char* name;
    const SlimTensor* t;
  } qkv[3] = {{"query", q}, {"key", k}, {"value", v}};
  for (const auto& x : qkv) SLIMCUDA_RETURN_IF_ERROR(check_device(x.name, x.t, device_type, &p->device));
  p->dtype = q->dtype();
  for (const auto& x : qkv) {
    const ScalarType d = x.t->dtype();
    SLIMCUDA_OP_CHECK(is_float_type(d), Error::NotSupported, "%s has dtype %s; supported: float32, float16, bfloat16",
                      x.name, scalar_type_name(d));
    SLIMCUDA_OP_CHECK(d == p->dtype, Error::InvalidArgument, "%s has dtype %s, query %s (all alike)", x.name,
                      scalar_type_name(d), scalar_type_name(p->dtype));
  }
  for (const auto& x : qkv) {
    SLIMCUDA_OP_CHECK(x.t->dim() == 4, Error::InvalidArgument,
                      "%s must be 4-D [batch, heads, seq, head_dim], got %lld-D", x.name,
                      static_cast<long long>(x.t->dim()));
  }
  const auto& qs = q->sizes();
  const auto& ks = k->sizes();
  const auto& vs = v->sizes();
  SLIMCUDA_OP_CHECK(ks[0] == qs[0] && vs[0] == qs[0], Error::InvalidArgument,
                    "batch sizes differ: query %lld, key %lld, value %lld", static_cast<long long>(qs[0]),
                    static_cast<long long>(ks[0]), static_cast<long long>(vs[0]));
  SLIMCUDA_OP_CHECK(ks[1] == vs[1], Error::InvalidArgument, "key has %lld heads, value %lld",
                    static_cast<long long>(ks[1]), static_cast<long long>(vs[1]));
  SLIMCUDA_OP_CHECK(ks[1] > 0 ? qs[1] % ks[1] == 0 : qs[1] == 0, Error::InvalidArgument,
                    "query's %lld heads are not a multiple of key/value's %lld (grouped-query attention)",
                    static_cast<long long>(qs[1]), static_cast<long long>(ks[1]));
  SLIMCUDA_OP_CHECK(ks[2] == vs[2], Error::InvalidArgument, "key has sequence length %lld, value %lld",
                    static_cast<long long>(ks[2]), static_cast<long long>(vs[2]));
  SLIMCUDA_OP_CHECK(ks[3] == qs[3], Error::InvalidArgument, "query's head dim is %lld, key's %lld",
                    static_cast<long long>(qs[3]), static_cast<long long>(ks[3]));
  if (op == AttentionOp::Flash || op == AttentionOp::FlashForCpu) {
    SLIMCUDA_OP_CHECK(vs[3] == qs[3], Error::InvalidArgument,
                      "value's head dim %lld differs from query's %lld (this op needs them equal)",
                      static_cast<long long>(vs[3]), static_cast<long long>(qs[3]));
  }
  p->batch = qs[0], p->heads_q = qs[1], p->heads_kv = ks[1], p->seq_q = qs[2], p->seq_kv = ks[2];
  p->head_dim = qs[3], p->head_dim_v = vs[3];
  p->q = q, p->k = k, p->v = v;
  for (int i = 0; i < 4; ++i) {
    p->q_strides[i] = q->strides()[i], p->k_strides[i] = k->strides()[i], p->v_strides[i] = v->strides()[i];
  }
  return Error::Ok;
}

// The optional bias (attn_bias, or attn_mask for the CPU flash op): the query's device, a
// dtype it can be added in, right-aligned broadcastable to [batch, heads_q, seq_q, seq_kv].
Error check_bias(DeviceType device_type, AttentionOp op, const AttentionOptions& o, AttentionProblem* p) {
  p->bias = nullptr;
  if (o.bias != nullptr && *o.bias != nullptr) {
    const char* what = op == AttentionOp::FlashForCpu ? "attn_mask" : "attn_bias";
    const SlimTensor* b = tensor_of(*o.bias);
    SLIMCUDA_RETURN_IF_ERROR(check_device(what, b, device_type, &p->device));
    const ScalarType bd = b->dtype();
    SLIMCUDA_OP_CHECK(bd == p->dtype || bd == ScalarType::Float || bd == ScalarType::Bool, Error::InvalidArgument,
                      "%s has dtype %s; expected the query's (%s), float32 or bool", what, scalar_type_name(bd),
                      scalar_type_name(p->dtype));
    SLIMCUDA_OP_CHECK(b->dim() >= 1 && b->dim() <= 4, Error::InvalidArgument,
                      "%s has %lld dimensions; expected 1 to 4, broadcastable to [batch, heads, seq_q, seq_kv]", what,
                      static_cast<long long>(b->dim()));
    // Right-aligned broadcasting to [B, Hq, Sq, Skv], a broadcast dimension read with stride 0.
    const int64_t want[4] = {p->batch, p->heads_q, p->seq_q, p->seq_kv};
    const int64_t offset = 4 - b->dim();
    for (int i = 0; i < 4; ++i) p->bias_strides[i] = 0;
    for (int64_t d = 0; d < b->dim(); ++d) {
      const int64_t size = b->sizes()[d], target = want[d + offset];
      SLIMCUDA_OP_CHECK(size == target || size == 1, Error::InvalidArgument,
                        "%s's dimension %lld has size %lld, which does not broadcast to %lld (of [%lld, %lld, %lld, "
                        "%lld])",
                        what, static_cast<long long>(d), static_cast<long long>(size), static_cast<long long>(target),
                        static_cast<long long>(want[0]), static_cast<long long>(want[1]),
                        static_cast<long long>(want[2]), static_cast<long long>(want[3]));
      p->bias_strides[d + offset] = size == 1 ? 0 : b->strides()[d];
    }
    p->bias = b;
    p->bias_dtype = bd;
  }

  return Error::Ok;
}

// The outputs' layouts, as the meta functions give them (torch.empty strides: a size-0
// dimension counts as 1 in the strides outside it).
void output_layout(AttentionOp op, const AttentionOptions& o, const SlimTensor& query, const AttentionProblem& pr,
                   AttentionLayout* layout) {
  const int64_t B = pr.batch, H = pr.heads_q, Sq = pr.seq_q, Dv = pr.head_dim_v;
  layout->out_sizes = {B, H, Sq, Dv};
  switch (op) {
    case AttentionOp::Efficient: {
      // [B, Sq, H, Dv] contiguous, transposed to [B, H, Sq, Dv]; logsumexp padded to 32 rows.
      const std::vector<int64_t> bshd = contiguous_strides({B, Sq, H, Dv});
      layout->out_strides = {bshd[0], bshd[2], bshd[1], bshd[3]};
      const int64_t padded = o.compute_log_sumexp ? (Sq + 31) / 32 * 32 : 0;
      layout->lse_sizes = {B, H, padded};
      layout->lse_strides = contiguous_strides(layout->lse_sizes);
      break;
    }
    case AttentionOp::Flash:
      layout->out_strides = empty_like_strides(query.sizes(), query.strides());
      layout->lse_sizes = {B, H, Sq};
      layout->lse_strides = contiguous_strides(layout->lse_sizes);
      break;
    case AttentionOp::Cudnn:
      layout->out_strides = matching_layout_strides(query, layout->out_sizes);
      layout->lse_sizes = {B, H, Sq, 1};
      layout->lse_strides = contiguous_strides(layout->lse_sizes);
      break;
    case AttentionOp::FlashForCpu: {
      layout->out_strides = empty_like_strides(query.sizes(), query.strides());
      // [B, Sq, H] contiguous, transposed to [B, H, Sq].
      const std::vector<int64_t> bsh = contiguous_strides({B, Sq, H});
      layout->lse_sizes = {B, H, Sq};
      layout->lse_strides = {bsh[0], bsh[2], bsh[1]};
      break;
    }
  }
}

}  // namespace

Error check_attention(DeviceType device_type, AttentionOp op, AtenTensorHandle query, AtenTensorHandle key,
                      AtenTensorHandle value, const AttentionOptions& o, AtenTensorHandle* ret0, AttentionProblem* p,
                      AttentionLayout* layout) {
  SLIMCUDA_OP_CHECK(query != nullptr, Error::InvalidArgument, "null query");
  SLIMCUDA_OP_CHECK(key != nullptr, Error::InvalidArgument, "null key");
  SLIMCUDA_OP_CHECK(value != nullptr, Error::InvalidArgument, "null value");
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "null ret0 (the attention output)");
  // Inference only: dropout needs PyTorch's philox stream, and the debug mask exists for
  // its tests; neither has a use in a deployed model.
  SLIMCUDA_OP_CHECK(!std::isnan(o.dropout_p) && o.dropout_p >= 0.0 && o.dropout_p <= 1.0, Error::InvalidArgument,
                    "dropout_p = %g, must be in [0, 1]", o.dropout_p);
  SLIMCUDA_OP_CHECK(o.dropout_p == 0.0, Error::NotSupported,
                    "dropout_p = %g: attention with dropout is not supported (inference only; export in eval mode)",
                    o.dropout_p);
  SLIMCUDA_OP_CHECK(!o.return_debug_mask, Error::NotSupported,
                    "return_debug_mask is not supported (a debugging output of PyTorch's flash kernel)");
  const SlimTensor* q = tensor_of(query);
  SLIMCUDA_RETURN_IF_ERROR(check_qkv(device_type, op, q, tensor_of(key), tensor_of(value), p));
  p->causal = o.is_causal;
  p->scale =
      o.scale != nullptr ? *o.scale : (p->head_dim > 0 ? 1.0 / std::sqrt(static_cast<double>(p->head_dim)) : 1.0);

  SLIMCUDA_RETURN_IF_ERROR(check_bias(device_type, op, o, p));
  output_layout(op, o, *q, *p, layout);
  p->out = nullptr;
  p->logsumexp = nullptr;
  return Error::Ok;
}

void set_attention_outputs(SlimTensor* out, SlimTensor* lse, AttentionProblem* p) noexcept {
  p->out = out;
  for (int i = 0; i < 4; ++i) p->out_strides[i] = out->strides()[i];
  p->logsumexp = nullptr;
  if (lse != nullptr && lse->dim() >= 3 && lse->sizes()[2] >= p->seq_q) {
    p->logsumexp = lse;
    for (int i = 0; i < 3; ++i) p->lse_strides[i] = lse->strides()[i];
  }
}

Error new_rng_placeholder(const std::vector<int64_t>& sizes, std::unique_ptr<SlimTensor>* owner) {
  SLIMCUDA_RETURN_IF_ERROR(new_tensor(ScalarType::Long, DeviceType::CPU, 0, sizes, contiguous_strides(sizes),
                                      StreamContext::unselected(-1), owner));
  void* data = (*owner)->data_ptr();
  if (data != nullptr) std::memset(data, 0, static_cast<size_t>(numel_of(sizes)) * sizeof(int64_t));
  return Error::Ok;
}

}  // namespace slimcuda::ops
