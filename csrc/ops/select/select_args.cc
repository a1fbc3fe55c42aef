// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/select/select_args.h"

#include <algorithm>
#include <string>

#include "csrc/core/scalar_type.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

const char* device_name(DeviceType t) { return t == DeviceType::CUDA ? "CUDA" : "CPU"; }

// One operand: not null, on the op's device type (and, for CUDA, `*device`'s device once an
// earlier operand set it), at most kSelectMaxDims dimensions.
Error check_operand(DeviceType type, const char* op, const char* what, const SlimTensor* t, int* device) {
  SLIMCUDA_OP_CHECK(t != nullptr, Error::InvalidArgument, "%s: null %s", op, what);
  const Device d = t->device();
  SLIMCUDA_OP_CHECK(d.type == type, Error::InvalidArgument, "%s: %s is a %s tensor, not a %s tensor (a %s op)", op,
                    what, device_name(d.type), device_name(type), device_name(type));
  if (type == DeviceType::CUDA) {
    SLIMCUDA_OP_CHECK(*device < 0 || *device == d.index, Error::InvalidArgument,
                      "%s: %s is on cuda:%d, the other operands on cuda:%d", op, what, static_cast<int>(d.index),
                      *device);
    *device = d.index;
  }
  SLIMCUDA_OP_CHECK(t->dim() <= kSelectMaxDims, Error::NotSupported,
                    "%s: %s has %lld dimensions; at most %d are supported", op, what, static_cast<long long>(t->dim()),
                    kSelectMaxDims);
  return Error::Ok;
}

std::string shape_text(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

Walk walk_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  Walk w;
  w.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < w.ndim; ++d) {
    w.sizes[d] = sizes[static_cast<size_t>(d)];
    w.strides[d] = strides[static_cast<size_t>(d)];
  }
  return w;
}

NonzeroScan scan_of(const SlimTensor& t, const Walk& w) {
  NonzeroScan s;
  s.data = static_cast<const char*>(t.data_ptr());
  s.walk = w;
  s.es = static_cast<int>(t.element_size());
  s.floating = is_floating(t.dtype());
  s.n = 1;
  for (int d = 0; d < w.ndim; ++d) s.n *= w.sizes[d];
  return s;
}

// t's strides seen over the broadcast shape `to` (right-aligned; 0 where t broadcasts).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                       const std::vector<int64_t>& to) {
  std::vector<int64_t> out(to.size(), 0);
  const size_t lead = to.size() - sizes.size();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 || to[lead + d] == 1) out[lead + d] = strides[d];
  }
  return out;
}

// c10's contiguity (size-1 dimensions ignored; fewer than two elements always contiguous).
bool dense_row_major(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (numel_of(sizes) < 2) return true;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// Channels-last contiguity of a 4-d (NHWC) or 5-d (NDHWC) layout.
bool dense_channels_last(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  static const int kOrder4[] = {1, 3, 2, 0}, kOrder5[] = {1, 4, 3, 2, 0};
  const int* order = sizes.size() == 4 ? kOrder4 : sizes.size() == 5 ? kOrder5 : nullptr;
  if (order == nullptr) return false;
  int64_t expected = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t d = static_cast<size_t>(order[i]);
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// PyTorch's compute_elementwise_output_logical_to_physical_perm for one tensor (what
// meta_index_Tensor uses): the output's dimensions from outermost to innermost.
std::vector<size_t> physical_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const size_t n = sizes.size();
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = i;
  if (n < 2) return perm;
  const bool contiguous = dense_row_major(sizes, strides), channels_last = dense_channels_last(sizes, strides);
  if (contiguous && !channels_last) return perm;
  if (channels_last && !contiguous) {
    perm.assign(1, 0);
    for (size_t d = 2; d < n; ++d) perm.push_back(d);
    perm.push_back(1);
    return perm;
  }
  const auto ge = [](int64_t a, int64_t b) { return b == 0 || (a != 0 && (a >= b || a % b == 0)); };
  // 1: a should come after b (inner), -1: before, 0: no opinion.
  const auto should_swap = [&](size_t a, size_t b) {
    const int64_t sa = strides[a], sb = strides[b];
    if (sa == 0 || sb == 0) return 0;
    if (sa == sb) return ge(sizes[b], sizes[a]) ? 0 : 1;
    if (ge(sb, sa)) return -1;
    if (ge(sa, sb)) return 1;
    return 0;
  };
  // Back to front (innermost first), as PyTorch sorts, then reversed.
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  for (size_t i = 1; i < n; ++i) {
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
  std::reverse(perm.begin(), perm.end());
  return perm;
}

// Dense strides for `sizes` laid out in `order` (outermost first).
std::vector<int64_t> strides_in_order(const std::vector<int64_t>& sizes, const std::vector<size_t>& order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t m = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = m;
    m *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return strides;
}

// Expands one bool / uint8 index into the dimensions it covers.
Error add_mask(const char* op, const SlimTensor& self, const SlimTensor& mask, int64_t i, IndexProblem* p) {
  const int64_t k = static_cast<int64_t>(p->dim_tensor.size());
  const int64_t nd = self.dim();
  SLIMCUDA_OP_CHECK(mask.dim() > 0, Error::NotSupported, "%s: indices[%lld] is a 0-d bool or uint8 index", op,
                    static_cast<long long>(i));
  SLIMCUDA_OP_CHECK(k + mask.dim() <= nd, Error::InvalidArgument, "%s: too many indices for tensor of dimension %lld",
                    op, static_cast<long long>(nd));
  for (int64_t j = 0; j < mask.dim(); ++j) {
    SLIMCUDA_OP_CHECK(mask.sizes()[static_cast<size_t>(j)] == self.sizes()[static_cast<size_t>(k + j)],
                      Error::InvalidArgument,
                      "%s: The shape of the mask %s at index %lld does not match the shape of the indexed tensor %s "
                      "at index %lld",
                      op, shape_text(mask.sizes()).c_str(), static_cast<long long>(i), shape_text(self.sizes()).c_str(),
                      static_cast<long long>(k + j));
  }
  p->masks.push_back(scan_of(mask, walk_of(mask.sizes(), mask.strides())));
  for (int64_t j = 0; j < mask.dim(); ++j) {
    p->dim_tensor.push_back(nullptr);
    p->dim_mask.push_back(static_cast<int>(p->masks.size() - 1));
    p->dim_column.push_back(static_cast<int>(j));
  }
  return Error::Ok;
}

// The indexed dimensions' index shapes (by self dimension) and which dimensions they are.
struct IndexShapes {
  std::vector<std::vector<int64_t>> sizes, strides;
  std::vector<size_t> indexed;
};

// The index tensors broadcast together (right-aligned), or ATen's "shape mismatch".
Error broadcast_indices(const IndexShapes& is, std::vector<int64_t>* b) {
  size_t bnd = 0;
  for (size_t d : is.indexed) bnd = std::max(bnd, is.sizes[d].size());
  b->assign(bnd, 1);
  for (size_t d : is.indexed) {
    const size_t lead = bnd - is.sizes[d].size();
    for (size_t j = 0; j < is.sizes[d].size(); ++j) {
      const int64_t v = is.sizes[d][j];
      int64_t& to = (*b)[lead + j];
      if (v == to || v == 1) continue;
      if (to == 1) {
        to = v;
        continue;
      }
      std::string shapes;
      for (size_t e : is.indexed) shapes += (shapes.empty() ? "" : ", ") + shape_text(is.sizes[e]);
      SLIMCUDA_OP_CHECK(false, Error::InvalidArgument,
                        "index: shape mismatch: indexing tensors could not be broadcast together with shapes %s",
                        shapes.c_str());
    }
  }
  return Error::Ok;
}

// The gather of a laid-out index (its out pointer left to the caller).
void fill_gather(const IndexProblem& p, const IndexShapes& is, const std::vector<int64_t>& b,
                 const std::vector<int64_t>& counts, const std::vector<const int64_t*>& coords,
                 const std::vector<int>& source, const std::vector<int64_t>& out_sizes,
                 const std::vector<int64_t>& out_strides, IndexGather* g) {
  const SlimTensor& self = *p.self;
  *g = IndexGather{};
  g->self = static_cast<const char*>(self.data_ptr());
  g->es = static_cast<int>(self.element_size());
  g->self_ndim = static_cast<int>(self.sizes().size());
  for (size_t d = 0; d < self.sizes().size(); ++d) {
    g->self_sizes[d] = self.sizes()[d];
    g->self_strides[d] = self.strides()[d];
  }
  for (size_t d : is.indexed) {
    const std::vector<int64_t> bs = broadcast_strides(is.sizes[d], is.strides[d], b);
    for (size_t j = 0; j < b.size(); ++j) g->index_strides[d][j] = bs[j];
    if (p.dim_tensor[d] != nullptr) {
      g->index[d] = p.dim_tensor[d]->data_ptr();
      g->index_is32[d] = p.dim_tensor[d]->dtype() == ScalarType::Int;
    } else {
      const size_t m = static_cast<size_t>(p.dim_mask[d]);
      g->index[d] = coords[m] + static_cast<int64_t>(p.dim_column[d]) * counts[m];
    }
  }
  g->out_ndim = static_cast<int>(source.size());
  g->numel = 1;
  for (size_t i = 0; i < source.size(); ++i) {
    g->out_sizes[i] = out_sizes[i];
    g->out_strides[i] = out_strides[i];
    g->out_source[i] = static_cast<int8_t>(source[i]);
    g->numel *= out_sizes[i];
  }
}

}  // namespace

Error check_nonzero(DeviceType type, const char* op, AtenTensorHandle self, int64_t static_size, int64_t fill_value,
                    AtenTensorHandle* ret0, NonzeroProblem* p) {
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "%s: null ret0", op);
  const SlimTensor* t = tensor_of(self);
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", t, &p->device));
  if (static_size != kNoStaticSize) {
    SLIMCUDA_OP_CHECK(static_size >= 0, Error::InvalidArgument, "%s: 'size' must be an non-negative integer", op);
    p->size = static_size;
    p->fill = fill_value;
  }
  p->self = t;
  p->scan = scan_of(*t, walk_of(t->sizes(), t->strides()));
  return Error::Ok;
}

void nonzero_layout(DeviceType type, const NonzeroProblem& p, int64_t rows, std::vector<int64_t>* sizes,
                    std::vector<int64_t>* strides) {
  const int64_t nd = p.self->dim();
  *sizes = {rows, nd};
  if (type == DeviceType::CPU && p.size >= 0) {
    *strides = contiguous_strides(*sizes);
  } else {
    *strides = {1, rows};
  }
}

CoordsWrite coords_write(const NonzeroProblem& p, int64_t rows, const std::vector<int64_t>& strides, int64_t* out) {
  CoordsWrite w;
  w.ndim = p.scan.walk.ndim;
  for (int d = 0; d < w.ndim; ++d) w.sizes[d] = p.scan.walk.sizes[d];
  w.rows = rows;
  w.row_stride = strides[0];
  w.col_stride = strides[1];
  w.fill = p.fill;
  w.out = out;
  return w;
}

Error check_masked_select(DeviceType type, AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle* ret0,
                          MaskedSelectProblem* p) {
  const char* op = "masked_select";
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "%s: null ret0", op);
  const SlimTensor* s = tensor_of(self);
  const SlimTensor* m = tensor_of(mask);
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", s, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "mask", m, &p->device));
  SLIMCUDA_OP_CHECK(m->dtype() == ScalarType::Bool, Error::InvalidArgument, "%s: expected BoolTensor for mask (got %s)",
                    op, scalar_type_name(m->dtype()));
  // Broadcast (right-aligned): ATen's message names the tensors a (mask) and b (self).
  const size_t nd = std::max(s->sizes().size(), m->sizes().size());
  std::vector<int64_t> shape(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t a = i < m->sizes().size() ? m->sizes()[m->sizes().size() - 1 - i] : 1;
    const int64_t b = i < s->sizes().size() ? s->sizes()[s->sizes().size() - 1 - i] : 1;
    SLIMCUDA_OP_CHECK(a == b || a == 1 || b == 1, Error::InvalidArgument,
                      "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                      "dimension %zu",
                      op, static_cast<long long>(a), static_cast<long long>(b), nd - 1 - i);
    shape[nd - 1 - i] = a == 1 ? b : a;
  }
  p->self = s;
  p->es = static_cast<int>(s->element_size());
  p->self_walk = walk_of(shape, broadcast_strides(s->sizes(), s->strides(), shape));
  p->mask = scan_of(*m, walk_of(shape, broadcast_strides(m->sizes(), m->strides(), shape)));
  return Error::Ok;
}

Error check_index(DeviceType type, AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len,
                  AtenTensorHandle* ret0, IndexProblem* p) {
  const char* op = "index";
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "%s: null ret0", op);
  const SlimTensor* s = tensor_of(self);
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", s, &p->device));
  SLIMCUDA_OP_CHECK(indices_len >= 0 && (indices != nullptr || indices_len == 0), Error::InvalidArgument,
                    "%s: null indices list of length %lld", op, static_cast<long long>(indices_len));
  SLIMCUDA_OP_CHECK(indices_len > 0, Error::InvalidArgument, "%s: at least one index must be provided", op);
  p->self = s;
  bool any = false;
  for (int64_t i = 0; i < indices_len; ++i) {
    const AtenTensorHandle* h = indices[i];
    if (h == nullptr) {  // None: the dimension is a slice
      p->dim_tensor.push_back(nullptr);
      p->dim_mask.push_back(-1);
      p->dim_column.push_back(0);
      continue;
    }
    any = true;
    const std::string what = "indices[" + std::to_string(i) + "]";
    const SlimTensor* t = tensor_of(*h);
    SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, what.c_str(), t, &p->device));
    const ScalarType dt = t->dtype();
    SLIMCUDA_OP_CHECK(
        dt == ScalarType::Long || dt == ScalarType::Int || dt == ScalarType::Byte || dt == ScalarType::Bool,
        Error::InvalidArgument,
        "%s: tensors used as indices must be long, int, byte or bool tensors "
        "(%s is %s)",
        op, what.c_str(), scalar_type_name(dt));
    if (dt == ScalarType::Byte || dt == ScalarType::Bool) {
      SLIMCUDA_RETURN_IF_ERROR(add_mask(op, *s, *t, i, p));
    } else {
      p->dim_tensor.push_back(t);
      p->dim_mask.push_back(-1);
      p->dim_column.push_back(0);
    }
  }
  SLIMCUDA_OP_CHECK(any, Error::InvalidArgument, "%s: every index is None; at least one index must be provided", op);
  SLIMCUDA_OP_CHECK(static_cast<int64_t>(p->dim_tensor.size()) <= s->dim(), Error::InvalidArgument,
                    "%s: too many indices for tensor of dimension %lld (got %zu)", op, static_cast<long long>(s->dim()),
                    p->dim_tensor.size());
  while (static_cast<int64_t>(p->dim_tensor.size()) < s->dim()) {
    p->dim_tensor.push_back(nullptr);
    p->dim_mask.push_back(-1);
    p->dim_column.push_back(0);
  }
  return Error::Ok;
}

Error index_layout(const IndexProblem& p, const std::vector<int64_t>& counts, const std::vector<const int64_t*>& coords,
                   IndexGather* g, std::vector<int64_t>* out_sizes, std::vector<int64_t>* out_strides) {
  const SlimTensor& self = *p.self;
  const size_t nd = self.sizes().size();
  // Each indexed dimension's index: sizes and strides (a mask's column: [count], stride 1).
  IndexShapes is;
  is.sizes.resize(nd);
  is.strides.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    if (p.dim_tensor[d] != nullptr) {
      is.sizes[d] = p.dim_tensor[d]->sizes();
      is.strides[d] = p.dim_tensor[d]->strides();
    } else if (p.dim_mask[d] >= 0) {
      is.sizes[d] = {counts[static_cast<size_t>(p.dim_mask[d])]};
      is.strides[d] = {1};
    } else {
      continue;
    }
    is.indexed.push_back(d);
  }
  std::vector<int64_t> b;
  SLIMCUDA_RETURN_IF_ERROR(broadcast_indices(is, &b));
  // Output dimensions: the broadcast ones where the indexed dimensions were when those are
  // adjacent, else first (as NumPy and ATen).
  const std::vector<size_t>& indexed = is.indexed;
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  std::vector<int> source;  // b >= 0: self dimension b; -1 - j: broadcast dimension j
  const size_t first = adjacent ? indexed.front() : 0;
  for (size_t d = 0; d < first; ++d) source.push_back(static_cast<int>(d));
  for (size_t j = 0; j < b.size(); ++j) source.push_back(-1 - static_cast<int>(j));
  for (size_t d = 0; d < nd; ++d) {
    const bool is_indexed = p.dim_tensor[d] != nullptr || p.dim_mask[d] >= 0;
    if (!is_indexed && (!adjacent || d > indexed.back())) source.push_back(static_cast<int>(d));
  }
  SLIMCUDA_OP_CHECK(source.size() <= static_cast<size_t>(kSelectMaxDims), Error::NotSupported,
                    "index: the result would have %zu dimensions; at most %d are supported", source.size(),
                    kSelectMaxDims);
  out_sizes->clear();
  std::vector<int64_t> restrided;  // self's strides over the output (0 on broadcast dims)
  for (int s : source) {
    out_sizes->push_back(s >= 0 ? self.sizes()[static_cast<size_t>(s)] : b[static_cast<size_t>(-1 - s)]);
    restrided.push_back(s >= 0 ? self.strides()[static_cast<size_t>(s)] : 0);
  }
  // PyTorch's meta_index_Tensor: contiguous for an empty self, else self's stride order.
  *out_strides = self.numel() == 0 ? contiguous_strides(*out_sizes)
                                   : strides_in_order(*out_sizes, physical_order(*out_sizes, restrided));
  fill_gather(p, is, b, counts, coords, source, *out_sizes, *out_strides, g);
  return Error::Ok;
}

Error check_unique(const char* op, const SlimTensor& self, bool consecutive, bool return_inverse, bool return_counts,
                   UniqueProblem* p) {
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(self.device().type, op, "self", &self, &device));
  p->self = &self;
  p->device = device;
  p->op = op;
  p->walk = walk_of(self.sizes(), self.strides());
  p->n = self.numel();
  p->es = static_cast<int>(self.element_size());
  p->dtype = static_cast<int>(self.dtype());
  p->floating = is_floating(self.dtype());
  p->consecutive = consecutive;
  p->return_inverse = return_inverse;
  p->return_counts = return_counts;
  return Error::Ok;
}

Error check_unique_dim(const char* op, const SlimTensor& self, int64_t dim, bool consecutive, bool return_inverse,
                       bool return_counts, UniqueDimProblem* p) {
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(self.device().type, op, "self", &self, &device));
  const int64_t nd = self.dim();
  SLIMCUDA_OP_CHECK(nd > 0, Error::InvalidArgument, "%s: Dimension specified as %lld but tensor has no dimensions", op,
                    static_cast<long long>(dim));
  SLIMCUDA_OP_CHECK(dim >= -nd && dim < nd, Error::InvalidArgument,
                    "%s: Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)", op,
                    static_cast<long long>(-nd), static_cast<long long>(nd - 1), static_cast<long long>(dim));
  const int64_t d = dim < 0 ? dim + nd : dim;
  const auto& sizes = self.sizes();
  const auto& strides = self.strides();
  p->self = &self;
  p->device = device;
  p->op = op;
  p->dim = d;
  p->return_inverse = return_inverse;
  p->return_counts = return_counts;
  SliceScan& s = p->scan;
  s.in = static_cast<const char*>(self.data_ptr());
  s.slices = sizes[static_cast<size_t>(d)];
  s.slice_stride = strides[static_cast<size_t>(d)];
  s.slice_len = 1;
  for (int64_t i = 0; i < nd; ++i) {
    if (i == d) continue;
    SLIMCUDA_OP_CHECK(sizes[static_cast<size_t>(i)] > 0 || s.slices == 0, Error::InvalidArgument,
                      "%s: There are 0 sized dimensions, and they aren't selected, so unique cannot be applied", op);
    s.rest.sizes[s.rest.ndim] = sizes[static_cast<size_t>(i)];
    s.rest.strides[s.rest.ndim] = strides[static_cast<size_t>(i)];
    ++s.rest.ndim;
    s.slice_len *= sizes[static_cast<size_t>(i)];
  }
  s.es = static_cast<int>(self.element_size());
  s.dtype = static_cast<int>(self.dtype());
  s.floating = is_floating(self.dtype());
  s.consecutive = consecutive;
  return Error::Ok;
}

void unique_dim_layout(const UniqueDimProblem& p, int64_t groups, std::vector<int64_t>* sizes,
                       std::vector<int64_t>* strides, Walk* rest) {
  *sizes = p.self->sizes();
  (*sizes)[static_cast<size_t>(p.dim)] = groups;
  *strides = contiguous_strides(*sizes);
  *rest = Walk{};
  for (size_t i = 0; i < sizes->size(); ++i) {
    if (static_cast<int64_t>(i) == p.dim) continue;
    rest->sizes[rest->ndim] = (*sizes)[i];
    rest->strides[rest->ndim] = (*strides)[i];
    ++rest->ndim;
  }
}

}  // namespace slimcuda::ops
