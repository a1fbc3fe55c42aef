// SPDX-License-Identifier: Apache-2.0
#pragma once

// The checked problems of the data-dependent selection ops (nonzero, nonzero_static,
// masked_select, advanced indexing, unique) as plain structs both the CPU loops and the
// CUDA kernels read, with the element walks they share (header only, host and device).
//
// A walk visits a tensor's logical elements in row-major order: element `linear` of sizes
// [s0, ..., sn-1] sits at sum(coord_d * stride_d) elements from the data pointer (a
// broadcast dimension has stride 0).

#include <cstdint>

#include "csrc/ops/sort/order_key.h"
#include "csrc/tensor/convert.h"
#include "slimcuda/types.h"

namespace slimcuda::ops {

/// Most dimensions a tensor of these ops may have (self, masks, index tensors, outputs);
/// more is NotSupported. Twelve keeps the gather's kernel parameters under 4 KiB.
constexpr int kSelectMaxDims = 12;

/// A tensor's logical elements: sizes and element strides, row-major order.
struct Walk {
  int ndim = 0;
  int64_t sizes[kSelectMaxDims] = {};
  int64_t strides[kSelectMaxDims] = {};
};

/// Elements from the data pointer to element `linear` (0 <= linear < numel).
SLIMCUDA_HD inline int64_t walk_offset(const Walk& w, int64_t linear) {
  int64_t off = 0;
  for (int d = w.ndim - 1; d >= 0; --d) {
    const int64_t s = w.sizes[d];
    off += (linear % s) * w.strides[d];
    linear /= s;
  }
  return off;
}

/// Whether the element at p (es bytes) is not zero: its bits, the sign bit left out for
/// floating types (-0.0 is zero, NaN is not), as ATen's `x != 0`.
SLIMCUDA_HD inline bool element_nonzero(const char* p, int es, bool floating) {
  using convert::read_as;
  switch (es) {
    case 1:
      return read_as<uint8_t>(p) != 0;
    case 2:
      return (read_as<uint16_t>(p) & (floating ? 0x7fffu : 0xffffu)) != 0;
    case 4:
      return (read_as<uint32_t>(p) & (floating ? 0x7fffffffu : 0xffffffffu)) != 0;
    default:
      return (read_as<uint64_t>(p) & (floating ? 0x7fffffffffffffffull : ~0ull)) != 0;
  }
}

/// Copies one element of es bytes.
SLIMCUDA_HD inline void copy_element(char* to, const char* from, int es) {
  for (int b = 0; b < es; ++b) to[b] = from[b];
}

/// Which elements count: the nonzero ones of `in` (nonzero, a bool index, masked_select's
/// mask over the broadcast shape).
struct NonzeroScan {
  const char* data = nullptr;  ///< at the tensor's storage offset
  Walk walk;                   ///< sizes: the (broadcast) logical shape
  int es = 1;
  bool floating = false;
  int64_t n = 0;  ///< elements in the walk
};

/// Writes the coordinates of selected elements: row k of the [rows, ndim] output is the
/// coordinates over `sizes` of linear index selected[k]; rows at or past the number
/// selected hold `fill` (nonzero_static). Element (k, d) at k * row_stride + d * col_stride.
struct CoordsWrite {
  int ndim = 0;
  int64_t sizes[kSelectMaxDims] = {};
  int64_t rows = 0;
  int64_t row_stride = 0, col_stride = 0;
  int64_t fill = -1;
  int64_t* out = nullptr;
};

SLIMCUDA_HD inline void write_coords(const CoordsWrite& w, int64_t k, int64_t linear) {
  for (int d = w.ndim - 1; d >= 0; --d) {
    const int64_t s = w.sizes[d];
    w.out[k * w.row_stride + d * w.col_stride] = linear % s;
    linear /= s;
  }
}

SLIMCUDA_HD inline void write_fill(const CoordsWrite& w, int64_t k) {
  for (int d = 0; d < w.ndim; ++d) w.out[k * w.row_stride + d * w.col_stride] = w.fill;
}

/// Advanced indexing as a gather: output element e (row-major over out sizes) reads self at
/// the sum over self's dimensions of (a slice dimension) the output coordinate it walks
/// times its stride, or (an indexed dimension) the index tensor's value at the broadcast
/// coordinates, wrapped once if negative, times its stride.
struct IndexGather {
  const char* self = nullptr;
  char* out = nullptr;
  int es = 1;
  int self_ndim = 0;
  int64_t self_sizes[kSelectMaxDims] = {};
  int64_t self_strides[kSelectMaxDims] = {};
  /// Per self dimension: the index tensor (null: a slice), int32 or int64, and its element
  /// strides over the broadcast dimensions (0 where it broadcasts).
  const void* index[kSelectMaxDims] = {};
  bool index_is32[kSelectMaxDims] = {};
  int64_t index_strides[kSelectMaxDims][kSelectMaxDims] = {};
  /// The output: sizes, strides, and what each dimension walks: b >= 0 self dimension b
  /// (a slice), -1 - j broadcast dimension j.
  int out_ndim = 0;
  int64_t out_sizes[kSelectMaxDims] = {};
  int64_t out_strides[kSelectMaxDims] = {};
  int8_t out_source[kSelectMaxDims] = {};
  int64_t numel = 0;
};

/// Where output element e reads and writes: *src in self (elements), *dst in out; false
/// (with *bad_dim and *bad_value set) when an index is out of range.
SLIMCUDA_HD inline bool index_gather_at(const IndexGather& g, int64_t e, int64_t* src, int64_t* dst, int* bad_dim,
                                        int64_t* bad_value) {
  int64_t bcoord[kSelectMaxDims] = {};
  int64_t s = 0, o = 0;
  for (int d = g.out_ndim - 1; d >= 0; --d) {
    const int64_t c = e % g.out_sizes[d];
    e /= g.out_sizes[d];
    o += c * g.out_strides[d];
    const int src_dim = g.out_source[d];
    if (src_dim >= 0) {
      s += c * g.self_strides[src_dim];
    } else {
      bcoord[-1 - src_dim] = c;
    }
  }
  for (int d = 0; d < g.self_ndim; ++d) {
    if (g.index[d] == nullptr) continue;
    int64_t at = 0;
    for (int j = 0; j < kSelectMaxDims; ++j) at += bcoord[j] * g.index_strides[d][j];
    int64_t v = g.index_is32[d] ? static_cast<int64_t>(static_cast<const int32_t*>(g.index[d])[at])
                                : static_cast<const int64_t*>(g.index[d])[at];
    if (v < -g.self_sizes[d] || v >= g.self_sizes[d]) {
      *bad_dim = d;
      *bad_value = v;
      *dst = o;
      return false;
    }
    if (v < 0) v += g.self_sizes[d];
    s += v * g.self_strides[d];
  }
  *src = s;
  *dst = o;
  return true;
}

/// Whether an element's order key (csrc/ops/sort/order_key.h) is a NaN's: NaN is never equal
/// to NaN, so every NaN is a value of its own.
SLIMCUDA_HD inline bool key_is_nan(uint64_t key, int es, bool floating) {
  return floating && key == (es >= 8 ? ~0ull : (1ull << (8 * es)) - 1);
}

/// unique along a dimension: slice i (< slices) of `in` starts i * slice_stride elements in;
/// its element k (< slice_len) walks `rest`, self's other dimensions in row-major order.
/// Slices compare lexicographically by their elements' order keys.
struct SliceScan {
  const char* in = nullptr;
  Walk rest;
  int64_t slices = 0, slice_len = 0, slice_stride = 0;
  int es = 1;
  int dtype = 0;
  bool floating = false;
  bool consecutive = false;
};

SLIMCUDA_HD inline uint64_t slice_key(const SliceScan& s, int64_t slice, int64_t k) {
  return order_key(s.in + (slice * s.slice_stride + walk_offset(s.rest, k)) * s.es, s.dtype);
}

/// Whether slice a orders before slice b.
SLIMCUDA_HD inline bool slice_less(const SliceScan& s, int64_t a, int64_t b) {
  for (int64_t k = 0; k < s.slice_len; ++k) {
    const uint64_t ka = slice_key(s, a, k), kb = slice_key(s, b, k);
    if (ka != kb) return ka < kb;
  }
  return false;
}

/// Whether slices a and b hold equal values (a NaN equals nothing).
SLIMCUDA_HD inline bool slice_equal(const SliceScan& s, int64_t a, int64_t b) {
  for (int64_t k = 0; k < s.slice_len; ++k) {
    const uint64_t ka = slice_key(s, a, k);
    if (ka != slice_key(s, b, k) || key_is_nan(ka, s.es, s.floating)) return false;
  }
  return true;
}

}  // namespace slimcuda::ops
