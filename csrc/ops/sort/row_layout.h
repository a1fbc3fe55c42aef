// SPDX-License-Identifier: Apache-2.0
#pragma once

// Element offsets of strided tensors for the sort-family ops, host and device alike: a
// tensor seen as rows along one dimension (sort, topk: one row per index of the other
// dimensions, row-major over them), and a tensor walked in row-major order (histc,
// searchsorted). Plain structs, passed to kernels by value.

#include <cstdint>

#include "csrc/core/limits.h"
#include "csrc/tensor/convert.h"

namespace slimcuda::ops {

/// Rows along one dimension of an input and of an output of the same shape but for the
/// length along that dimension.
struct RowLayout {
  int rank = 0;  ///< dimensions other than the row's
  int64_t sizes[kMaxDims] = {};
  int64_t in_strides[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  int64_t in_step = 0, out_step = 0;  ///< strides along the row's dimension
};

/// Element offsets of row `row`'s first element in the input and the output.
SLIMCUDA_HD inline void row_start(const RowLayout& l, int64_t row, int64_t* in, int64_t* out) {
  int64_t i = 0, o = 0;
  for (int d = l.rank - 1; d >= 0; --d) {
    const int64_t q = row % l.sizes[d];
    row /= l.sizes[d];
    i += q * l.in_strides[d];
    o += q * l.out_strides[d];
  }
  *in = i;
  *out = o;
}

/// A strided view walked in row-major order (a contiguous one is one dimension of stride 1).
struct StridedWalk {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

/// Element offset of the `linear`-th element in row-major order.
SLIMCUDA_HD inline int64_t walk_offset(const StridedWalk& w, int64_t linear) {
  if (w.rank == 1) return linear * w.strides[0];
  int64_t off = 0;
  for (int d = w.rank - 1; d >= 0; --d) {
    off += (linear % w.sizes[d]) * w.strides[d];
    linear /= w.sizes[d];
  }
  return off;
}

}  // namespace slimcuda::ops
