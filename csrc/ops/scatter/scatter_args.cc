// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/scatter/scatter_args.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "csrc/core/scalar_type.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

const char* device_name(DeviceType t) { return t == DeviceType::CUDA ? "CUDA" : "CPU"; }

// One operand: not null, on the op's device type (and, for CUDA, on the device of the
// operands checked before it).
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

// Bytes [lo, hi) a tensor's elements reach (empty: lo == hi).
void byte_range(const SlimTensor& t, uintptr_t* lo, uintptr_t* hi) {
  *lo = *hi = reinterpret_cast<uintptr_t>(t.data_ptr());
  if (t.numel() == 0) return;
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.sizes()[d] - 1) * t.strides()[d];
  *hi = *lo + static_cast<uintptr_t>(span) * t.element_size();
}

// Whether the memory of a and b may overlap (the bytes their elements reach intersect).
bool overlaps(const SlimTensor& a, const SlimTensor& b) {
  if (a.device() != b.device()) return false;
  uintptr_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

// A stride-0 dimension of size > 1, or more elements than the strides reach.
bool internal_overlap(const SlimTensor& t) {
  const int64_t n = t.numel();
  if (n <= 1) return false;
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] > 1 && t.strides()[d] == 0) return true;
    span += (t.sizes()[d] - 1) * t.strides()[d];
  }
  return span < n;
}

bool same_view(const SlimTensor& a, const SlimTensor& b) {
  return a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.device() == b.device();
}

// c10's checked conversion of a Scalar to the dtype: a finite value outside its range is
// an overflow (infinities and NaN pass for floating dtypes).
bool value_fits(ScalarType t, double v) {
  switch (t) {
    case ScalarType::Double:
    case ScalarType::Bool:
      return true;
    case ScalarType::Float:
      return !std::isfinite(v) || std::fabs(v) <= FLT_MAX;
    case ScalarType::Half:
      return !std::isfinite(v) || std::fabs(v) <= 65504.0;
    case ScalarType::BFloat16:
      return !std::isfinite(v) || std::fabs(v) <= 3.3895313892515355e38;
    case ScalarType::Long:
      return v >= -9.2233720368547758e18 && v < 9.2233720368547758e18;
    case ScalarType::Int:
      return v > -2147483649.0 && v < 2147483648.0;
    case ScalarType::Short:
      return v > -32769.0 && v < 32768.0;
    case ScalarType::Char:
      return v > -129.0 && v < 128.0;
    case ScalarType::Byte:
      return v > -129.0 && v < 256.0;  // c10 lets negative values wrap into uint8
  }
  return false;
}

// v as one element of dtype t (converted as a C cast: floating to integer truncates).
void element_bytes(ScalarType t, double v, uint8_t out[8]) {
  std::memset(out, 0, 8);
  convert::Wide w{v, convert::float_to_int64(v), true};
  convert::store(reinterpret_cast<char*>(out), static_cast<int>(t), w);
}

// The reduction's identity as an element of t: what include_self=false starts from.
void identity_bytes(ScalarType t, ScatterReduce r, uint8_t out[8]) {
  std::memset(out, 0, 8);
  convert::Wide w{0.0, 0, is_floating(t)};
  if (r == ScatterReduce::Prod) {
    w.f = 1.0, w.i = 1;
  } else if (r == ScatterReduce::Amax || r == ScatterReduce::Amin) {
    const bool max = r == ScatterReduce::Amin;  // amin starts from the largest value
    w.f = max ? HUGE_VAL : -HUGE_VAL;
    switch (t) {
      case ScalarType::Long:
        w.i = max ? INT64_MAX : INT64_MIN;
        break;
      case ScalarType::Int:
        w.i = max ? INT32_MAX : INT32_MIN;
        break;
      case ScalarType::Short:
        w.i = max ? INT16_MAX : INT16_MIN;
        break;
      case ScalarType::Char:
        w.i = max ? INT8_MAX : INT8_MIN;
        break;
      case ScalarType::Byte:
        w.i = max ? 255 : 0;
        break;
      case ScalarType::Bool:
        w.i = max ? 1 : 0;
        break;
      default:
        break;
    }
  }
  convert::store(reinterpret_cast<char*>(out), static_cast<int>(t), w);
}

// Size and stride of t along d, a 0-d tensor seen as one dimension of size 1.
int64_t size_at(const SlimTensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[d]; }
int64_t stride_at(const SlimTensor& t, int64_t d) { return t.dim() == 0 ? 0 : t.strides()[d]; }

// The layout scatter_offsets walks: index's elements, with src's and out's strides.
void fill_scatter_layout(int64_t d, int64_t rank, ScatterProblem* p) {
  const SlimTensor &o = *p->out, &ix = *p->index;
  const bool has_src = p->src != nullptr;
  ScatterLayout& l = p->layout;
  l = ScatterLayout{};
  if (ix.numel() == 0) return;  // nothing to scatter: out = self
  l.rank = static_cast<int>(rank);
  l.dim = static_cast<int>(d);
  l.dim_size = size_at(o, d);
  l.dim_stride = stride_at(o, d);
  l.index_64 = ix.dtype() == ScalarType::Long;
  l.numel = ix.numel();
  std::vector<int64_t> out_sizes(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) out_sizes[static_cast<size_t>(k)] = size_at(o, k);
  const std::vector<int64_t> row_major = contiguous_strides(out_sizes);
  for (int64_t k = 0; k < rank; ++k) {
    l.sizes[k] = size_at(ix, k);
    l.index_strides[k] = stride_at(ix, k);
    l.src_strides[k] = has_src ? stride_at(*p->src, k) : 0;
    l.out_strides[k] = k == d ? 0 : stride_at(o, k);
    l.count_strides[k] = k == d ? 0 : row_major[static_cast<size_t>(k)];
  }
  l.count_step = row_major[static_cast<size_t>(d)];
}

Error scatter_common(DeviceType type, const char* op, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                     AtenTensorHandle index, AtenTensorHandle src, bool has_src, ScatterProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "out", out, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "self", self, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "index", index, &p->device));
  if (has_src) SLIMCUDA_RETURN_IF_ERROR(check_operand(type, op, "src", src, &p->device));
  p->out = tensor_of(out);
  p->self = tensor_of(self);
  p->index = tensor_of(index);
  p->src = has_src ? tensor_of(src) : nullptr;
  const SlimTensor &o = *p->out, &s = *p->self, &ix = *p->index;
  p->dtype = s.dtype();
  SLIMCUDA_OP_CHECK(ix.dtype() == ScalarType::Long || ix.dtype() == ScalarType::Int, Error::InvalidArgument,
                    "%s(): Expected dtype int32/int64 for index, got %s", op, scalar_type_name(ix.dtype()));
  SLIMCUDA_OP_CHECK(!has_src || p->src->dtype() == s.dtype(), Error::InvalidArgument,
                    "%s(): Expected self.dtype to be equal to src.dtype (self %s, src %s)", op,
                    scalar_type_name(s.dtype()), scalar_type_name(p->src->dtype()));
  SLIMCUDA_OP_CHECK(o.dtype() == s.dtype(), Error::InvalidArgument,
                    "%s: out is %s, self is %s (out takes self's dtype)", op, scalar_type_name(o.dtype()),
                    scalar_type_name(s.dtype()));
  SLIMCUDA_OP_CHECK(o.sizes() == s.sizes(), Error::InvalidArgument,
                    "%s: out has sizes %s, self %s (out takes self's sizes)", op, shape_text(o.sizes()).c_str(),
                    shape_text(s.sizes()).c_str());
  int64_t d = 0;
  SLIMCUDA_RETURN_IF_ERROR(wrap_dim(op, dim, s.dim(), &d));
  const int64_t rank = ix.dim() == 0 ? 1 : ix.dim();
  if (ix.numel() > 0) {
    SLIMCUDA_OP_CHECK((s.dim() == 0 ? 1 : s.dim()) == rank, Error::InvalidArgument,
                      "%s: Index tensor must have the same number of dimensions as self tensor (index %s, self %s)", op,
                      shape_text(ix.sizes()).c_str(), shape_text(s.sizes()).c_str());
    SLIMCUDA_OP_CHECK(!has_src || (p->src->dim() == 0 ? 1 : p->src->dim()) == rank, Error::InvalidArgument,
                      "%s: Index tensor must have the same number of dimensions as src tensor (index %s, src %s)", op,
                      shape_text(ix.sizes()).c_str(), shape_text(p->src->sizes()).c_str());
    bool fits = true;
    for (int64_t k = 0; k < rank; ++k) {
      if (k != d && size_at(ix, k) > size_at(s, k)) fits = false;
      if (has_src && size_at(ix, k) > size_at(*p->src, k)) fits = false;
    }
    if (has_src) {
      SLIMCUDA_OP_CHECK(fits, Error::InvalidArgument,
                        "%s: Expected index %s to be no larger than self %s apart from dimension %lld and to be no "
                        "larger size than src %s",
                        op, shape_text(ix.sizes()).c_str(), shape_text(s.sizes()).c_str(), static_cast<long long>(d),
                        shape_text(p->src->sizes()).c_str());
    } else {
      SLIMCUDA_OP_CHECK(fits, Error::InvalidArgument,
                        "%s: Expected index %s to be no larger than self %s apart from dimension %lld", op,
                        shape_text(ix.sizes()).c_str(), shape_text(s.sizes()).c_str(), static_cast<long long>(d));
    }
  }
  SLIMCUDA_OP_CHECK(!internal_overlap(o), Error::InvalidArgument,
                    "%s: out has overlapping elements (a written element would be written twice)", op);
  p->copy_self = !same_view(o, s);
  SLIMCUDA_OP_CHECK(!p->copy_self || !overlaps(o, s), Error::InvalidArgument,
                    "%s: out partly overlaps self (only out == self, the same view, may share memory)", op);
  SLIMCUDA_OP_CHECK(!overlaps(o, ix), Error::InvalidArgument, "%s: out and index share memory", op);
  SLIMCUDA_OP_CHECK(!has_src || !overlaps(o, *p->src), Error::InvalidArgument, "%s: out and src share memory", op);

  fill_scatter_layout(d, rank, p);
  return Error::Ok;
}

// Right-aligned broadcast of two shapes; false when a pair of sizes differs and neither is 1
// (*bad_a, *bad_b, *bad_dim: the pair and the dimension, counted from the result's start).
bool broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out, int64_t* bad_a,
               int64_t* bad_b, int64_t* bad_dim) {
  const size_t n = std::max(a.size(), b.size());
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t y = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (x != y && x != 1 && y != 1) {
      *bad_a = x, *bad_b = y, *bad_dim = static_cast<int64_t>(i);
      return false;
    }
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

// Strides of t (sizes `sizes`) broadcast right-aligned to `to`: 0 where t has size 1 or no
// dimension.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                       const std::vector<int64_t>& to) {
  std::vector<int64_t> out(to.size(), 0);
  const size_t lead = to.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) out[lead + i] = sizes[i] == 1 ? 0 : strides[i];
  return out;
}

// values' strides broadcast to the indexing result `result` (right-aligned, leading size-1
// dimensions of values ignored); false when they do not broadcast.
bool value_strides(const SlimTensor& v, const std::vector<int64_t>& result, std::vector<int64_t>* out) {
  std::vector<int64_t> sizes = v.sizes(), strides = v.strides();
  while (sizes.size() > result.size()) {
    if (sizes.front() != 1) return false;
    sizes.erase(sizes.begin());
    strides.erase(strides.begin());
  }
  const size_t lead = result.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] != 1 && sizes[i] != result[lead + i]) return false;
  }
  *out = broadcast_strides(sizes, strides, result);
  return true;
}

Error value_mismatch(const SlimTensor& v, const std::string& result) {
  SLIMCUDA_OP_CHECK(false, Error::InvalidArgument,
                    "index_put: shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of "
                    "shape %s",
                    shape_text(v.sizes()).c_str(), result.c_str());
  return Error::Ok;
}

// One entry of index_put's list: a tensor (mask or integer positions) or None.
struct IndexEntry {
  const SlimTensor* t = nullptr;
  bool mask = false;
  int self_dim = 0;  ///< the first dimension of self it covers
};

// The mask form: the lone index is a mask covering self's dimensions [pos, pos + m) and values
// do not vary along the count of its true elements, so every element of self is visited once
// and written where the mask is true. *ok false: not this form (the caller takes the general
// path); an error: values do not broadcast in the other dimensions.
Error mask_form(const IndexEntry& e, IndexPutProblem* p, bool* ok) {
  const SlimTensor& s = *p->self;
  const SlimTensor& v = *p->values;
  const int64_t pos = e.self_dim, m = e.t->dim(), rank = s.dim();
  // The result is self[:pos] + [K] + self[pos + m:]; K is the mask's count.
  std::vector<int64_t> result;
  for (int64_t d = 0; d < pos; ++d) result.push_back(s.sizes()[d]);
  result.push_back(1);  // K, which values must not vary along
  for (int64_t d = pos + m; d < rank; ++d) result.push_back(s.sizes()[d]);
  std::string text = "[";
  for (size_t i = 0; i < result.size(); ++i) {
    if (i > 0) text += ", ";
    text += static_cast<int64_t>(i) == pos ? std::string("<true elements of the mask>") : std::to_string(result[i]);
  }
  text += "]";
  // values along K: size 1 or no such dimension, else the count matters.
  std::vector<int64_t> vs = v.sizes();
  while (vs.size() > result.size() && vs.front() == 1) vs.erase(vs.begin());
  const int64_t k_dim = pos - static_cast<int64_t>(result.size() - vs.size());
  if (vs.size() <= result.size() && k_dim >= 0 && vs[static_cast<size_t>(k_dim)] != 1) {
    *ok = false;
    return Error::Ok;
  }
  std::vector<int64_t> vstr;
  if (!value_strides(v, result, &vstr)) return value_mismatch(v, text);
  *ok = true;
  IndexPutLayout& l = p->layout;
  l = IndexPutLayout{};
  l.rank = static_cast<int>(rank);
  l.numel = s.numel();
  l.mask = static_cast<const uint8_t*>(e.t->data_ptr());
  for (int64_t d = 0; d < rank; ++d) {
    l.sizes[d] = s.sizes()[d];
    l.out_strides[d] = p->out_strides[static_cast<size_t>(d)];
    if (d >= pos && d < pos + m) {
      l.mask_strides[d] = e.t->strides()[static_cast<size_t>(d - pos)];
      l.value_strides[d] = 0;
    } else {
      const int64_t r = d < pos ? d : d - m + 1;
      l.value_strides[d] = vstr[static_cast<size_t>(r)];
    }
  }
  p->result_sizes = result;
  return Error::Ok;
}

// The CPU's view of a mask that is not in the mask form: its true elements' coordinates, one
// int64 index per dimension it covers (ATen's nonzero).
void mask_positions(const IndexEntry& e, IndexPutProblem* p, std::vector<IndexOperand>* out) {
  const SlimTensor& m = *e.t;
  const int64_t rank = m.dim(), n = m.numel();
  const size_t first = p->mask_positions.size();
  p->mask_positions.resize(first + static_cast<size_t>(rank));
  const auto* data = static_cast<const uint8_t*>(m.data_ptr());
  std::vector<int64_t> c(static_cast<size_t>(rank), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += c[static_cast<size_t>(d)] * m.strides()[d];
    if (data[off] != 0) {
      for (int64_t d = 0; d < rank; ++d) p->mask_positions[first + d].push_back(c[static_cast<size_t>(d)]);
    }
    for (int64_t d = rank; d-- > 0;) {
      if (++c[static_cast<size_t>(d)] < m.sizes()[d]) break;
      c[static_cast<size_t>(d)] = 0;
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    IndexOperand o;
    o.self_dim = e.self_dim + static_cast<int>(d);
    o.is64 = true;
    o.sizes = {static_cast<int64_t>(p->mask_positions[first + d].size())};
    o.strides = {1};
    o.mask_vector = static_cast<int>(first + static_cast<size_t>(d));
    out->push_back(o);  // data set once every vector has its final place
  }
}

// index_put's list: each entry None or a tensor (integer positions or a mask covering as many
// dimensions as it has), checked and placed on self's dimensions.
Error index_entries(DeviceType type, const AtenTensorHandle** indices, int64_t indices_len, IndexPutProblem* p,
                    std::vector<IndexEntry>* out) {
  const SlimTensor& s = *p->self;
  int64_t covered = 0;
  for (int64_t i = 0; i < indices_len; ++i) {
    const AtenTensorHandle* h = indices[i];
    if (h == nullptr || *h == nullptr) {
      ++covered;
      continue;
    }
    char what[32];
    std::snprintf(what, sizeof what, "indices[%lld]", static_cast<long long>(i));
    SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "index_put", what, *h, &p->device));
    IndexEntry e;
    e.t = tensor_of(*h);
    const ScalarType t = e.t->dtype();
    SLIMCUDA_OP_CHECK(t == ScalarType::Long || t == ScalarType::Int || t == ScalarType::Bool || t == ScalarType::Byte,
                      Error::InvalidArgument,
                      "index_put: tensors used as indices must be long, int, byte or bool tensors (%s is %s)", what,
                      scalar_type_name(t));
    e.mask = t == ScalarType::Bool || t == ScalarType::Byte;
    SLIMCUDA_OP_CHECK(!e.mask || e.t->dim() > 0, Error::NotSupported,
                      "index_put: a 0-d bool index (%s) is not supported", what);
    e.self_dim = static_cast<int>(covered);
    covered += e.mask ? e.t->dim() : 1;
    out->push_back(e);
  }
  SLIMCUDA_OP_CHECK(covered <= s.dim(), Error::InvalidArgument,
                    "index_put: too many indices for tensor of dimension %lld (got %lld)",
                    static_cast<long long>(s.dim()), static_cast<long long>(covered));
  SLIMCUDA_OP_CHECK(!out->empty(), Error::InvalidArgument,
                    "index_put: every index is None (at least one must be a tensor)");
  for (const IndexEntry& e : *out) {
    if (!e.mask) continue;
    for (int64_t j = 0; j < e.t->dim(); ++j) {
      SLIMCUDA_OP_CHECK(e.t->sizes()[j] == s.sizes()[e.self_dim + j], Error::InvalidArgument,
                        "index_put: The shape of the mask %s at index %lld does not match the shape of the indexed "
                        "tensor %s at index %lld",
                        shape_text(e.t->sizes()).c_str(), static_cast<long long>(j), shape_text(s.sizes()).c_str(),
                        static_cast<long long>(e.self_dim + j));
    }
  }
  return Error::Ok;
}

// The index tensors the layout reads: the integer ones as given, the masks (CPU only) as
// their true elements' coordinates.
Error index_operands(DeviceType type, const std::vector<IndexEntry>& entries, IndexPutProblem* p) {
  p->indices.clear();
  p->mask_positions.clear();
  for (const IndexEntry& e : entries) {
    if (!e.mask) continue;
    SLIMCUDA_OP_CHECK(type == DeviceType::CPU, Error::NotSupported,
                      "index_put: this bool index needs the number of its true elements on the host (a "
                      "synchronization, which the CUDA ops never make); CUDA takes a bool index only as the one "
                      "index with values that do not vary along its true elements (x[mask] = v)");
  }
  for (const IndexEntry& e : entries) {
    if (e.mask) {
      mask_positions(e, p, &p->indices);
      continue;
    }
    IndexOperand o;
    o.self_dim = e.self_dim;
    o.data = e.t->data_ptr();
    o.is64 = e.t->dtype() == ScalarType::Long;
    o.sizes = e.t->sizes();
    o.strides = e.t->strides();
    p->indices.push_back(o);
  }
  // The masks' positions are in their final vectors now.
  for (IndexOperand& o : p->indices) {
    if (o.mask_vector >= 0) o.data = p->mask_positions[static_cast<size_t>(o.mask_vector)].data();
  }
  const int n = static_cast<int>(p->indices.size());
  SLIMCUDA_OP_CHECK(n <= kMaxIndexTensors, Error::NotSupported,
                    "index_put: %d index tensors (a bool mask counts one per dimension); at most %d are supported", n,
                    kMaxIndexTensors);
  return Error::Ok;
}

// One dimension of the indexing result: a sliced dimension of self, or one of the index
// tensors' broadcast shape.
struct IterDim {
  int self_dim;  ///< -1: a broadcast dimension
  int b_dim;
};

// The index tensors' broadcast shape *b and the indexing result's dimensions.
Error indexing_dims(IndexPutProblem* p, std::vector<int64_t>* b_out, std::vector<IterDim>* iter_out) {
  const SlimTensor& s = *p->self;
  const int n = static_cast<int>(p->indices.size());
  // The index tensors broadcast together.
  std::vector<int64_t>& b = *b_out;
  b.clear();
  for (const IndexOperand& o : p->indices) {
    std::vector<int64_t> next_b;
    int64_t x = 0, y = 0, at = 0;
    if (!broadcast(b, o.sizes, &next_b, &x, &y, &at)) {
      std::string shapes;
      for (const IndexOperand& q : p->indices) shapes += (shapes.empty() ? "" : ", ") + shape_text(q.sizes);
      SLIMCUDA_OP_CHECK(false, Error::InvalidArgument,
                        "index_put: shape mismatch: indexing tensors could not be broadcast together with shapes %s",
                        shapes.c_str());
    }
    b = next_b;
  }
  // Indexed dimensions next to each other: the broadcast shape replaces them in place; else
  // it goes first (ATen's advanced indexing).
  const int first = p->indices.front().self_dim, last = p->indices.back().self_dim;
  bool adjacent = true;
  for (int k = 0; k < n; ++k) {
    if (p->indices[static_cast<size_t>(k)].self_dim != first + k) adjacent = false;
  }
  adjacent = adjacent && last - first + 1 == n;
  std::vector<IterDim>& iter = *iter_out;
  iter.clear();
  auto add_slices = [&](int from, int to) {
    for (int d = from; d < to; ++d) {
      bool indexed = false;
      for (const IndexOperand& o : p->indices) indexed = indexed || o.self_dim == d;
      if (!indexed) iter.push_back({d, -1});
    }
  };
  const int rank = static_cast<int>(s.dim());
  if (adjacent) {
    add_slices(0, first);
    for (size_t j = 0; j < b.size(); ++j) iter.push_back({-1, static_cast<int>(j)});
    add_slices(last + 1, rank);
  } else {
    for (size_t j = 0; j < b.size(); ++j) iter.push_back({-1, static_cast<int>(j)});
    add_slices(0, rank);
  }
  SLIMCUDA_OP_CHECK(static_cast<int64_t>(iter.size()) <= kMaxDims, Error::NotSupported,
                    "index_put: the indexing result has %zu dimensions (at most %lld)", iter.size(),
                    static_cast<long long>(kMaxDims));
  return Error::Ok;
}

// The layout index_put_target walks, from the result's dimensions.
void fill_index_put_layout(const std::vector<int64_t>& b, const std::vector<IterDim>& iter,
                           const std::vector<int64_t>& vstr, IndexPutProblem* p) {
  const SlimTensor& s = *p->self;
  const std::vector<int64_t>& result = p->result_sizes;
  const int n = static_cast<int>(p->indices.size());
  IndexPutLayout& l = p->layout;
  l = IndexPutLayout{};
  l.rank = static_cast<int>(iter.size());
  l.n_index = n;
  l.numel = numel_of(result);
  for (int r = 0; r < l.rank; ++r) {
    const IterDim& it = iter[static_cast<size_t>(r)];
    l.sizes[r] = result[static_cast<size_t>(r)];
    l.value_strides[r] = vstr[static_cast<size_t>(r)];
    l.out_strides[r] = it.self_dim >= 0 ? p->out_strides[static_cast<size_t>(it.self_dim)] : 0;
    for (int k = 0; k < n; ++k) {
      const IndexOperand& o = p->indices[static_cast<size_t>(k)];
      int64_t st = 0;
      if (it.self_dim < 0) {
        const int64_t od = it.b_dim - static_cast<int64_t>(b.size() - o.sizes.size());
        if (od >= 0 && o.sizes[static_cast<size_t>(od)] != 1) st = o.strides[static_cast<size_t>(od)];
      }
      l.index_strides[k][r] = st;
    }
  }
  for (int k = 0; k < n; ++k) {
    const IndexOperand& o = p->indices[static_cast<size_t>(k)];
    l.index_data[k] = o.data;
    l.index_64[k] = o.is64;
    l.index_dim_size[k] = s.sizes()[o.self_dim];
    l.index_out_stride[k] = p->out_strides[static_cast<size_t>(o.self_dim)];
  }
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

Error check_scatter_src(DeviceType type, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                        AtenTensorHandle index, AtenTensorHandle src, ScatterProblem* p) {
  p->reduce = ScatterReduce::None;
  return scatter_common(type, "scatter", out, self, dim, index, src, true, p);
}

Error check_scatter_value(DeviceType type, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                          AtenTensorHandle index, double value, ScatterProblem* p) {
  p->reduce = ScatterReduce::None;
  SLIMCUDA_RETURN_IF_ERROR(scatter_common(type, "scatter", out, self, dim, index, nullptr, false, p));
  SLIMCUDA_OP_CHECK(
      value_fits(p->dtype, value) && !(std::isnan(value) && !is_floating(p->dtype) && p->dtype != ScalarType::Bool),
      Error::InvalidArgument, "scatter: value %g cannot be converted to type %s without overflow", value,
      scalar_type_name(p->dtype));
  element_bytes(p->dtype, value, p->value);
  return Error::Ok;
}

Error check_scatter_reduce(DeviceType type, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                           AtenTensorHandle index, AtenTensorHandle src, const char* reduce, int32_t include_self,
                           ScatterProblem* p) {
  SLIMCUDA_OP_CHECK(reduce != nullptr, Error::InvalidArgument, "scatter_reduce: null reduce");
  const struct {
    const char* name;
    ScatterReduce r;
  } names[] = {
      {"sum", ScatterReduce::Sum},   {"prod", ScatterReduce::Prod},
      {"mean", ScatterReduce::Mean}, {"amax", ScatterReduce::Amax},
      {"amin", ScatterReduce::Amin}, {"max", ScatterReduce::Amax},  // ATen's undocumented spellings of amax and amin
      {"min", ScatterReduce::Amin}};
  p->reduce = ScatterReduce::None;
  for (const auto& n : names) {
    if (std::strcmp(reduce, n.name) == 0) p->reduce = n.r;
  }
  SLIMCUDA_OP_CHECK(p->reduce != ScatterReduce::None, Error::InvalidArgument,
                    "scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got %.64s", reduce);
  p->include_self = include_self != 0;
  SLIMCUDA_RETURN_IF_ERROR(scatter_common(type, "scatter_reduce", out, self, dim, index, src, true, p));
  identity_bytes(p->dtype, p->reduce, p->identity);
  return Error::Ok;
}

Error check_index_put(DeviceType type, AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len,
                      AtenTensorHandle values, int32_t accumulate, AtenTensorHandle* ret0, IndexPutProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "index_put", "self", self, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "index_put", "values", values, &p->device));
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "index_put: null ret0");
  SLIMCUDA_OP_CHECK(indices_len >= 0, Error::InvalidArgument, "index_put: indices_len %lld < 0",
                    static_cast<long long>(indices_len));
  SLIMCUDA_OP_CHECK(indices_len == 0 || indices != nullptr, Error::InvalidArgument, "index_put: null indices");
  p->self = tensor_of(self);
  p->values = tensor_of(values);
  p->accumulate = accumulate != 0;
  const SlimTensor &s = *p->self, &v = *p->values;
  p->dtype = s.dtype();
  SLIMCUDA_OP_CHECK(v.dtype() == s.dtype(), Error::InvalidArgument,
                    "index_put: Index put requires the source and destination dtypes match, got %s for the "
                    "destination and %s for the source.",
                    scalar_type_name(s.dtype()), scalar_type_name(v.dtype()));

  std::vector<IndexEntry> entries;
  SLIMCUDA_RETURN_IF_ERROR(index_entries(type, indices, indices_len, p, &entries));
  p->out_sizes = s.sizes();
  p->out_strides =
      is_non_overlapping_and_dense(s.sizes(), s.strides()) ? s.strides() : dense_strides_like(s.sizes(), s.strides());

  if (entries.size() == 1 && entries[0].mask) {
    bool ok = false;
    SLIMCUDA_RETURN_IF_ERROR(mask_form(entries[0], p, &ok));
    if (ok) return Error::Ok;
  }
  SLIMCUDA_RETURN_IF_ERROR(index_operands(type, entries, p));
  std::vector<int64_t> b;
  std::vector<IterDim> iter;
  SLIMCUDA_RETURN_IF_ERROR(indexing_dims(p, &b, &iter));
  std::vector<int64_t>& result = p->result_sizes;
  result.clear();
  for (const IterDim& it : iter) result.push_back(it.self_dim >= 0 ? s.sizes()[it.self_dim] : b[it.b_dim]);
  std::vector<int64_t> vstr;
  if (!value_strides(v, result, &vstr)) return value_mismatch(v, shape_text(result));
  fill_index_put_layout(b, iter, vstr, p);
  return Error::Ok;
}

Error check_masked_scatter(DeviceType type, AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
                           AtenTensorHandle* ret0, MaskedScatterProblem* p) {
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "masked_scatter", "self", self, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "masked_scatter", "mask", mask, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(type, "masked_scatter", "source", source, &p->device));
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "masked_scatter: null ret0");
  p->self = tensor_of(self);
  p->mask = tensor_of(mask);
  p->source = tensor_of(source);
  const SlimTensor &s = *p->self, &m = *p->mask, &src = *p->source;
  p->dtype = s.dtype();
  SLIMCUDA_OP_CHECK(m.dtype() == ScalarType::Bool, Error::InvalidArgument,
                    "masked_scatter: masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                    scalar_type_name(m.dtype()));
  SLIMCUDA_OP_CHECK(src.dtype() == s.dtype(), Error::InvalidArgument,
                    "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                    scalar_type_name(s.dtype()), scalar_type_name(src.dtype()));
  int64_t a = 0, b = 0, at = 0;
  SLIMCUDA_OP_CHECK(broadcast(m.sizes(), s.sizes(), &p->out_sizes, &a, &b, &at), Error::InvalidArgument,
                    "masked_scatter: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                    "non-singleton dimension %lld (mask %s, self %s)",
                    static_cast<long long>(a), static_cast<long long>(b), static_cast<long long>(at),
                    shape_text(m.sizes()).c_str(), shape_text(s.sizes()).c_str());
  p->self_strides = broadcast_strides(s.sizes(), s.strides(), p->out_sizes);
  const std::vector<int64_t> mask_strides = broadcast_strides(m.sizes(), m.strides(), p->out_sizes);
  MaskedScatterLayout& l = p->layout;
  l = MaskedScatterLayout{};
  l.rank = static_cast<int>(p->out_sizes.size());
  for (int d = 0; d < l.rank; ++d) {
    l.sizes[d] = p->out_sizes[static_cast<size_t>(d)];
    l.mask_strides[d] = mask_strides[static_cast<size_t>(d)];
  }
  l.source_rank = static_cast<int>(src.dim());
  for (int d = 0; d < l.source_rank; ++d) {
    l.source_sizes[d] = src.sizes()[static_cast<size_t>(d)];
    l.source_strides[d] = src.strides()[static_cast<size_t>(d)];
  }
  l.numel = numel_of(p->out_sizes);
  l.source_numel = src.numel();
  return Error::Ok;
}

}  // namespace slimcuda::ops
