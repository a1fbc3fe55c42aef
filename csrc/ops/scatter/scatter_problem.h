// SPDX-License-Identifier: Apache-2.0
#pragma once

// The scatter family's checked work, as plain structs the CPU loops and the kernels read
// alike (passed to kernels by value), and the per-element arithmetic both devices share:
// one element of any dtype loaded wide (convert::Wide), combined, and stored back with one
// rounding, so the CPU and CUDA ops reduce every pair of values alike.

#include <cstdint>

#include "csrc/core/limits.h"
#include "csrc/tensor/convert.h"

namespace slimcuda::ops {

/// scatter_reduce's reductions (None: plain scatter, the last write wins).
enum class ScatterReduce : int { None = 0, Sum, Prod, Mean, Amax, Amin };

/// One scatter: for every element of `index` (row-major over `sizes`, its coordinates c),
///   out[c with c[dim] := index[c]] (op)= src[c]   (or the value)
/// with index[c] checked against out's size along dim.
struct ScatterLayout {
  int rank = 0;  ///< index's dimensions (a 0-d index is one dimension of size 1)
  int64_t sizes[kMaxDims] = {};
  int64_t index_strides[kMaxDims] = {};
  int64_t src_strides[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};    ///< out's, 0 along dim (the index gives that one)
  int64_t count_strides[kMaxDims] = {};  ///< out's row-major strides (mean's counts), 0 along dim
  int dim = 0;
  int64_t dim_size = 1;    ///< out's size along dim
  int64_t dim_stride = 0;  ///< out's stride along dim
  int64_t count_step = 0;  ///< out's row-major stride along dim
  int64_t numel = 0;       ///< index elements
  bool index_64 = true;    ///< int64 (else int32) index
};

/// Element offsets of index element `e`: in index, src, out (without the index's term) and
/// the row-major position in out (without it either).
SLIMCUDA_HD inline void scatter_offsets(const ScatterLayout& l, int64_t e, int64_t* index_at, int64_t* src_at,
                                        int64_t* out_at, int64_t* count_at) {
  int64_t i = 0, s = 0, o = 0, c = 0;
  for (int d = l.rank - 1; d >= 0; --d) {
    const int64_t q = e % l.sizes[d];
    e /= l.sizes[d];
    i += q * l.index_strides[d];
    s += q * l.src_strides[d];
    o += q * l.out_strides[d];
    c += q * l.count_strides[d];
  }
  *index_at = i;
  *src_at = s;
  *out_at = o;
  *count_at = c;
}

/// At most this many index tensors in one index_put (after a bool mask became one index per
/// dimension it covers): the layout travels to the kernel by value.
inline constexpr int kMaxIndexTensors = 8;

/// One index_put: every position of the indexing result (row-major over `sizes`) writes
/// (or adds) values[position] at out[base + sum_k wrap(index_k[position]) * out_stride_k],
/// where base is the position's offset through the sliced (not indexed) dimensions; with a
/// mask instead of index tensors, the positions are out's own and only those the mask marks
/// are written.
struct IndexPutLayout {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};    ///< sliced dimensions' strides in out, else 0
  int64_t value_strides[kMaxDims] = {};  ///< values broadcast to the result (0: broadcast)
  int n_index = 0;
  const void* index_data[kMaxIndexTensors] = {};
  bool index_64[kMaxIndexTensors] = {};
  int64_t index_dim_size[kMaxIndexTensors] = {};    ///< out's size along the indexed dimension
  int64_t index_out_stride[kMaxIndexTensors] = {};  ///< out's stride along it
  int64_t index_strides[kMaxIndexTensors][kMaxDims] = {};
  const uint8_t* mask = nullptr;  ///< the mask form: bool, one byte per element
  int64_t mask_strides[kMaxDims] = {};
  int64_t numel = 0;  ///< positions
};

/// An index value read from a tensor of int64 or int32.
SLIMCUDA_HD inline int64_t read_index(const void* data, bool is64, int64_t at) {
  return is64 ? static_cast<const int64_t*>(data)[at] : static_cast<const int32_t*>(data)[at];
}

/// Position `e` of an index_put: the element of out it writes (*out_at) and the values
/// element it takes (*value_at); false when it writes nothing (the mask is false there, or an
/// index is out of range: the CPU op refused those before, the CUDA op skips them).
/// Negative indices count from the end, as ATen.
SLIMCUDA_HD inline bool index_put_target(const IndexPutLayout& l, int64_t e, int64_t* out_at, int64_t* value_at) {
  int64_t o = 0, v = 0, m = 0;
  int64_t at[kMaxIndexTensors] = {};
  for (int d = l.rank - 1; d >= 0; --d) {
    const int64_t q = e % l.sizes[d];
    e /= l.sizes[d];
    o += q * l.out_strides[d];
    v += q * l.value_strides[d];
    m += q * l.mask_strides[d];
    for (int k = 0; k < l.n_index; ++k) at[k] += q * l.index_strides[k][d];
  }
  if (l.mask != nullptr && l.mask[m] == 0) return false;
  for (int k = 0; k < l.n_index; ++k) {
    int64_t i = read_index(l.index_data[k], l.index_64[k], at[k]);
    if (i < 0) i += l.index_dim_size[k];
    if (i < 0 || i >= l.index_dim_size[k]) return false;
    o += i * l.index_out_stride[k];
  }
  *out_at = o;
  *value_at = v;
  return true;
}

/// One masked_scatter: out (contiguous, `numel` elements, row-major over `sizes`) takes the
/// next element of source (row-major over its own sizes) wherever the broadcast mask is true.
struct MaskedScatterLayout {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t mask_strides[kMaxDims] = {};
  int source_rank = 0;
  int64_t source_sizes[kMaxDims] = {};
  int64_t source_strides[kMaxDims] = {};
  int64_t numel = 0;
  int64_t source_numel = 0;
};

/// Element offset of the `linear`-th element in row-major order over sizes/strides.
SLIMCUDA_HD inline int64_t strided_offset(int rank, const int64_t* sizes, const int64_t* strides, int64_t linear) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

SLIMCUDA_HD inline bool wide_isnan(double f) { return f != f; }

/// a (op) b for two elements of one dtype (Sum and Mean add). Floating: in double, which
/// the store rounds once, as ATen's per-element arithmetic in the dtype; amax/amin
/// propagate NaN from either side (as ATen). Integers: wrap around on overflow, as ATen.
SLIMCUDA_HD inline convert::Wide combine(ScatterReduce op, const convert::Wide& a, const convert::Wide& b) {
  convert::Wide r = a;
  if (a.floating) {
    switch (op) {
      case ScatterReduce::Prod:
        r.f = a.f * b.f;
        break;
      case ScatterReduce::Amax:
        r.f = (wide_isnan(a.f) || wide_isnan(b.f)) ? (wide_isnan(a.f) ? a.f : b.f) : (b.f > a.f ? b.f : a.f);
        break;
      case ScatterReduce::Amin:
        r.f = (wide_isnan(a.f) || wide_isnan(b.f)) ? (wide_isnan(a.f) ? a.f : b.f) : (b.f < a.f ? b.f : a.f);
        break;
      case ScatterReduce::None:
        r.f = b.f;
        break;
      default:
        r.f = a.f + b.f;
    }
    return r;
  }
  const uint64_t ua = static_cast<uint64_t>(a.i), ub = static_cast<uint64_t>(b.i);
  switch (op) {
    case ScatterReduce::Prod:
      r.i = static_cast<int64_t>(ua * ub);
      break;
    case ScatterReduce::Amax:
      r.i = b.i > a.i ? b.i : a.i;
      break;
    case ScatterReduce::Amin:
      r.i = b.i < a.i ? b.i : a.i;
      break;
    case ScatterReduce::None:
      r.i = b.i;
      break;
    default:
      r.i = static_cast<int64_t>(ua + ub);
  }
  return r;
}

/// mean's last step: sum / count, floating in double (rounded once by the store), integers
/// rounded down (ATen divides integer sums with rounding_mode "floor").
SLIMCUDA_HD inline convert::Wide mean_of(const convert::Wide& sum, int64_t count) {
  convert::Wide r = sum;
  if (sum.floating) {
    r.f = sum.f / static_cast<double>(count);
  } else {
    int64_t q = sum.i / count;
    if ((sum.i % count != 0) && ((sum.i < 0) != (count < 0))) --q;
    r.i = q;
  }
  return r;
}

}  // namespace slimcuda::ops
