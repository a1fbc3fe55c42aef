// SPDX-License-Identifier: Apache-2.0
#pragma once

// The binary searches of searchsorted and bucketize, host and device alike, as ATen's:
// left (lower bound) finds the first position whose value is not below `v` (!(x >= v)
// moves right), right (upper bound) the first whose value is above it (!(x > v) moves
// right), so a NaN value lands past every element and a NaN element is never below
// anything. Values compare in the two operands' common dtype (rounded to it first): as
// double when that dtype is floating, as int64 when it is integral.

#include <cstdint>
#include <type_traits>

#include "csrc/ops/sort/row_layout.h"
#include "csrc/tensor/convert.h"
#include "slimcuda/types.h"

namespace slimcuda::ops {

/// An element of `dtype` rounded to the common floating dtype `common` (as a cast to it).
SLIMCUDA_HD inline double as_common_float(const char* p, int dtype, int common) {
  const convert::Wide w = convert::load(p, dtype);
  char buf[8];
  convert::store(buf, common, w);
  return convert::load(buf, common).f;
}

/// What one search needs: the sorted rows (with an optional sorter of int64 positions
/// within a row), where to read them, and how to compare.
struct SearchArgs {
  const char* seq = nullptr;
  int seq_dtype = 0;
  int seq_es = 0;
  StridedWalk seq_walk;
  const int64_t* sorter = nullptr;  ///< null: none
  StridedWalk sorter_walk;
  int64_t seq_len = 0;      ///< the rows' length (boundaries' last dimension)
  bool seq_one_row = true;  ///< 1-d boundaries: every value searches the one row
  int64_t in_row_len = 1;   ///< the values' last dimension (1 for a scalar)
  int common = 0;           ///< ScalarType code of the comparison
  bool common_floating = true;
  bool right = false;
};

/// The element at position `pos` of row `row` (through the sorter), compared as T.
template <typename T>
SLIMCUDA_HD inline T seq_value(const SearchArgs& a, int64_t row, int64_t pos) {
  int64_t j = pos;
  if (a.sorter != nullptr) {
    j = a.sorter[walk_offset(a.sorter_walk, row * a.seq_len + pos)];
    j = j < 0 ? 0 : (j >= a.seq_len ? a.seq_len - 1 : j);  // the CPU op rejects these; a kernel cannot
  }
  const char* p = a.seq + walk_offset(a.seq_walk, row * a.seq_len + j) * a.seq_es;
  if constexpr (std::is_integral_v<T>) {
    return convert::load(p, a.seq_dtype).i;
  } else {
    return as_common_float(p, a.seq_dtype, a.common);
  }
}

/// The insertion position of value v (already in the common dtype) in row `row`.
template <typename T>
SLIMCUDA_HD inline int64_t search_row(const SearchArgs& a, int64_t row, T v) {
  int64_t lo = 0, hi = a.seq_len;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const T x = seq_value<T>(a, row, mid);
    const bool go_right = a.right ? !(x > v) : !(x >= v);
    if (go_right) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace slimcuda::ops
