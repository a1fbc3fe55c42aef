// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/sort_args.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>

#include "csrc/core/scalar_type.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

const char* device_name(DeviceType t) { return t == DeviceType::CUDA ? "CUDA" : "CPU"; }

// One operand: not null, on the op's device type (and, for CUDA, `*device`'s device once
// the first operand set it).
Error check_operand(DeviceType type, const char* op, const char* what, AtenTensorHandle h, int* device) {
  SLIMCUDA_OP_CHECK(h != nullptr, Error::InvalidArgument, "%s: null %s", op, what);
  const Device d = tensor_of(h)->device();
  SLIMCUDA_OP_CHECK(d.type == type, Error::InvalidArgument, "%s: %s is a %s tensor, not a %s tensor (a %s op)", op,
                    what, device_name(d.type), device_name(type), device_name(type));
  if (type == DeviceType::CUDA) {
    SLIMCUDA_OP_CHECK(*device < 0 || *device == d.index, Error::InvalidArgument,
                      "%s: %s is on cuda:%d, the other operands on cuda:%d", op, what, static_cast<int>(d.index),
                      *device);
    *device = d.index;
  }
  return Error::Ok;
}

Error wrap_dim(const char* op, int64_t dim, int64_t rank, int64_t* out) {
  const int64_t wrap = rank == 0 ? 1 : rank;
  SLIMCUDA_OP_CHECK(dim >= -wrap && dim < wrap, Error::InvalidArgument,
                    "%s: dim %lld is out of range for a %lld-d tensor (expected [%lld, %lld])", op,
                    static_cast<long long>(dim), static_cast<long long>(rank), static_cast<long long>(-wrap),
                    static_cast<long long>(wrap - 1));
  *out = dim < 0 ? dim + wrap : dim;
  return Error::Ok;
}

// The rows along p->dim of self and of outputs with p->out_strides.
void fill_rows(SortProblem* p) {
  const SlimTensor& s = *p->self;
  RowLayout& l = p->layout;
  l = RowLayout{};
  for (int64_t d = 0; d < s.dim(); ++d) {
    if (d == p->dim) {
      l.in_step = s.strides()[d];
      l.out_step = p->out_strides[d];
      continue;
    }
    l.sizes[l.rank] = s.sizes()[d];
    l.in_strides[l.rank] = s.strides()[d];
    l.out_strides[l.rank] = p->out_strides[d];
    ++l.rank;
  }
  const int64_t n = s.numel();
  p->len = s.dim() == 0 ? 1 : s.sizes()[p->dim];
  p->rows = n == 0 ? 0 : n / p->len;
}

Error sort_common(DeviceType type, const char* op, AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
                  AtenTensorHandle* ret1, SortProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", self, &p->device));
  SLIMCUDA_OP_CHECK(ret0 != nullptr && ret1 != nullptr, Error::InvalidArgument, "%s: null %s", op,
                    ret0 == nullptr ? "ret0" : "ret1");
  p->self = tensor_of(self);
  p->dtype = p->self->dtype();
  return wrap_dim(op, dim, p->self->dim(), &p->dim);
}

}  // namespace

StridedWalk walk_of(const SlimTensor& t) noexcept {
  StridedWalk w;
  if (t.is_contiguous()) {
    w.rank = 1;
    w.sizes[0] = t.numel();
    w.strides[0] = 1;
    return w;
  }
  w.rank = static_cast<int>(t.dim());
  for (int d = 0; d < w.rank; ++d) w.sizes[d] = t.sizes()[d], w.strides[d] = t.strides()[d];
  return w;
}

Error check_sort(DeviceType type, AtenTensorHandle self, int64_t dim, bool descending, AtenTensorHandle* ret0,
                 AtenTensorHandle* ret1, SortProblem* p) {
  SLIMCUDA_RETURN_IF_ERROR(sort_common(type, "sort", self, dim, ret0, ret1, p));
  const SlimTensor& s = *p->self;
  p->descending = descending;
  p->out_sizes = s.sizes();
  p->out_strides =
      is_non_overlapping_and_dense(s.sizes(), s.strides()) ? s.strides() : dense_strides_like(s.sizes(), s.strides());
  fill_rows(p);
  p->k = p->len;
  return Error::Ok;
}

Error check_topk(DeviceType type, AtenTensorHandle self, int64_t k, int64_t dim, bool largest, AtenTensorHandle* ret0,
                 AtenTensorHandle* ret1, SortProblem* p) {
  SLIMCUDA_RETURN_IF_ERROR(sort_common(type, "topk", self, dim, ret0, ret1, p));
  const SlimTensor& s = *p->self;
  SLIMCUDA_OP_CHECK(p->dtype != ScalarType::Bool, Error::NotSupported,
                    "topk: bool tensors are not supported (as ATen)");
  const int64_t len = s.dim() == 0 ? 1 : s.sizes()[p->dim];
  SLIMCUDA_OP_CHECK(k >= 0 && k <= len, Error::InvalidArgument,
                    "topk: selected index k out of range (k %lld, %lld elements along dim %lld)",
                    static_cast<long long>(k), static_cast<long long>(len), static_cast<long long>(p->dim));
  p->descending = largest;
  p->out_sizes = s.sizes();
  if (s.dim() > 0) p->out_sizes[p->dim] = k;
  p->out_strides = contiguous_strides(p->out_sizes);
  fill_rows(p);
  p->k = k;
  return Error::Ok;
}

Error check_histc(DeviceType type, AtenTensorHandle self, int64_t bins, double min, double max, AtenTensorHandle* ret0,
                  HistcProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "histc", "self", self, &p->device));
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "histc: null ret0");
  p->self = tensor_of(self);
  p->dtype = p->self->dtype();
  // ATen's CUDA histc takes integer tensors too (its CPU histc does not); bool neither.
  SLIMCUDA_OP_CHECK(is_floating(p->dtype) || (type == DeviceType::CUDA && p->dtype != ScalarType::Bool),
                    Error::NotSupported, "histc: %s tensors are not supported (%s, as ATen's %s histc)",
                    scalar_type_name(p->dtype),
                    type == DeviceType::CUDA ? "integer and floating dtypes" : "floating dtypes only",
                    type == DeviceType::CUDA ? "CUDA" : "CPU");
  SLIMCUDA_OP_CHECK(bins > 0, Error::InvalidArgument, "histc: bins must be > 0, got %lld",
                    static_cast<long long>(bins));
  SLIMCUDA_OP_CHECK(std::isfinite(min) && std::isfinite(max), Error::InvalidArgument,
                    "histc: range of [%g, %g] is not finite", min, max);
  SLIMCUDA_OP_CHECK(min <= max, Error::InvalidArgument, "histc: max must be larger than min (min %g, max %g)", min,
                    max);
  p->bins = bins;
  p->lo = min, p->hi = max;
  p->from_data = min == max && p->self->numel() > 0;
  p->walk = walk_of(*p->self);
  return Error::Ok;
}

namespace {

int kind_rank(ScalarType t) {  // bool < integral < floating
  return t == ScalarType::Bool ? 0 : (is_floating(t) ? 2 : 1);
}

int int_width(ScalarType t) { return static_cast<int>(element_size(t)); }

// c10's promoteTypes over slimcuda's dtypes.
ScalarType promote(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (kind_rank(a) != kind_rank(b)) return kind_rank(a) > kind_rank(b) ? a : b;
  if (is_floating(a)) {
    if (a == ScalarType::Double || b == ScalarType::Double) return ScalarType::Double;
    return ScalarType::Float;  // float with a 16-bit type, or half with bfloat16
  }
  const bool au = a == ScalarType::Byte, bu = b == ScalarType::Byte;
  if (au || bu) {  // uint8 with a signed type: the next signed type holding both
    const ScalarType s = au ? b : a;
    return s == ScalarType::Char ? ScalarType::Short : s;
  }
  return int_width(a) >= int_width(b) ? a : b;
}

constexpr ScalarType kUndefined = static_cast<ScalarType>(-1);

ScalarType promote_defined(ScalarType a, ScalarType b) {
  if (a == kUndefined) return b;
  if (b == kUndefined) return a;
  return promote(a, b);
}

// ATen's combine_categories: a lower-priority category only raises the kind.
ScalarType combine(ScalarType higher, ScalarType lower) {
  if (higher == kUndefined) return lower;
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || (lower != kUndefined && is_floating(lower))) return promote_defined(higher, lower);
  return higher;
}

}  // namespace

ScalarType search_common_type(ScalarType a, int64_t a_dims, ScalarType b, int64_t b_dims) noexcept {
  ScalarType dim_result = kUndefined, zero_result = kUndefined;
  (a_dims > 0 ? dim_result : zero_result) = a;
  ScalarType& slot = b_dims > 0 ? dim_result : zero_result;
  slot = promote_defined(slot, b);
  return combine(dim_result, zero_result);
}

namespace {

Error check_side(const char* op, int32_t right, const char** side, bool* is_right) {
  *is_right = right != 0;
  if (side == nullptr || *side == nullptr) return Error::Ok;
  const bool r = std::strcmp(*side, "right") == 0;
  SLIMCUDA_OP_CHECK(r || std::strcmp(*side, "left") == 0, Error::InvalidArgument,
                    "%s: side can only be 'left' or 'right' but got %s", op, *side);
  SLIMCUDA_OP_CHECK(!(right != 0 && !r), Error::InvalidArgument,
                    "%s: side and right can't be set to opposites, got side of left while right was True", op);
  *is_right = r;
  return Error::Ok;
}

Error check_sorter(DeviceType type, const char* op, AtenTensorHandle h, const SlimTensor& seq, SearchProblem* p) {
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "sorter", h, &p->device));
  const SlimTensor& s = *tensor_of(h);
  SLIMCUDA_OP_CHECK(s.dtype() == ScalarType::Long, Error::InvalidArgument,
                    "%s: sorter must be a tensor of long dtype but got dtype %s", op, scalar_type_name(s.dtype()));
  SLIMCUDA_OP_CHECK(s.sizes() == seq.sizes(), Error::InvalidArgument, "%s: boundary and sorter must have the same size",
                    op);
  p->sorter = &s;
  if (type != DeviceType::CPU) return Error::Ok;  // a CUDA check would need a synchronization
  const StridedWalk w = walk_of(s);
  const auto* data = static_cast<const int64_t*>(s.data_ptr());
  const int64_t len = seq.sizes().back();
  for (int64_t i = 0; i < s.numel(); ++i) {
    const int64_t v = data[walk_offset(w, i)];
    SLIMCUDA_OP_CHECK(v >= 0 && v < len, Error::InvalidArgument, "%s: sorter index out of range (%lld)", op,
                      static_cast<long long>(v));
  }
  return Error::Ok;
}

// Boundaries 1-d, or of the values' sizes in all but the last dimension.
bool leading_dims_match(const SlimTensor& seq, const SlimTensor* self) {
  if (seq.dim() == 1) return true;
  if (self == nullptr || self->dim() != seq.dim()) return false;
  for (int64_t d = 0; d + 1 < seq.dim(); ++d) {
    if (seq.sizes()[d] != self->sizes()[d]) return false;
  }
  return true;
}

}  // namespace

Error check_bucketize(AtenTensorHandle self, AtenTensorHandle boundaries) {
  SLIMCUDA_OP_CHECK(self != nullptr, Error::InvalidArgument, "bucketize: null self");
  SLIMCUDA_OP_CHECK(boundaries != nullptr, Error::InvalidArgument, "bucketize: null boundaries");
  const int64_t d = tensor_of(boundaries)->dim();
  SLIMCUDA_OP_CHECK(d == 1, Error::InvalidArgument,
                    "bucketize: boundaries tensor must be 1 dimension, but got dim(%lld)", static_cast<long long>(d));
  return Error::Ok;
}

Error check_searchsorted(DeviceType type, const char* op, AtenTensorHandle seq_h, AtenTensorHandle self_h,
                         double scalar, int32_t out_int32, int32_t right, const char** side, AtenTensorHandle* sorter,
                         AtenTensorHandle* ret0, SearchProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "sorted_sequence", seq_h, &p->device));
  const bool scalar_input = self_h == nullptr;
  if (!scalar_input) SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", self_h, &p->device));
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "%s: null ret0", op);
  const SlimTensor& seq = *tensor_of(seq_h);
  p->seq = &seq;
  p->self = scalar_input ? nullptr : tensor_of(self_h);
  p->scalar = scalar;
  p->out_int32 = out_int32 != 0;
  bool is_right = false;
  SLIMCUDA_RETURN_IF_ERROR(check_side(op, right, side, &is_right));
  SLIMCUDA_OP_CHECK(seq.dim() > 0, Error::InvalidArgument,
                    "%s: boundaries tensor should have positive dimension, but got 0 dimension", op);
  const int64_t in_dim = scalar_input ? 0 : p->self->dim();
  SLIMCUDA_OP_CHECK(in_dim > 0 || seq.dim() == 1, Error::InvalidArgument,
                    "%s: input value can be a scalar only when boundaries tensor dimension is 1, but we got "
                    "boundaries tensor dim(%lld)",
                    op, static_cast<long long>(seq.dim()));
  SLIMCUDA_OP_CHECK(leading_dims_match(seq, p->self), Error::InvalidArgument,
                    "%s: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and "
                    "input value tensor must match",
                    op);
  const ScalarType in_t = scalar_input ? ScalarType::Double : p->self->dtype();
  SLIMCUDA_OP_CHECK(seq.dtype() != ScalarType::Bool && in_t != ScalarType::Bool, Error::NotSupported,
                    "%s: bool tensors are not supported (as ATen)", op);
  const int64_t seq_len = seq.sizes().back();
  SLIMCUDA_OP_CHECK(!p->out_int32 || seq_len < INT_MAX, Error::InvalidArgument,
                    "%s: the size of boundaries' last dimension should be less than %d with out_int32", op, INT_MAX);
  p->sorter = nullptr;
  if (sorter != nullptr && *sorter != nullptr) SLIMCUDA_RETURN_IF_ERROR(check_sorter(type, op, *sorter, seq, p));
  // A scalar is a wrapped number: float32 against integral boundaries, else theirs.
  const ScalarType common = scalar_input ? (is_floating(seq.dtype()) ? seq.dtype() : ScalarType::Float)
                                         : search_common_type(seq.dtype(), seq.dim(), in_t, in_dim);
  SearchArgs& a = p->args;
  a = SearchArgs{};
  a.seq_dtype = static_cast<int>(seq.dtype());
  a.seq_es = static_cast<int>(seq.element_size());
  a.seq_walk = walk_of(seq);
  if (p->sorter != nullptr) a.sorter_walk = walk_of(*p->sorter);
  a.seq_len = seq_len;
  a.seq_one_row = seq.dim() == 1;
  a.in_row_len = in_dim == 0 ? 1 : p->self->sizes().back();
  a.common = static_cast<int>(common);
  a.common_floating = is_floating(common);
  a.right = is_right;
  p->out_sizes = scalar_input ? std::vector<int64_t>{} : p->self->sizes();
  p->numel = scalar_input ? 1 : p->self->numel();
  if (!scalar_input) p->in_walk = walk_of(*p->self);
  return Error::Ok;
}

}  // namespace slimcuda::ops
