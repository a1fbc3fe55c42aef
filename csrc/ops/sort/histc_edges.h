// SPDX-License-Identifier: Apache-2.0
#pragma once

// histc's bins, host and device alike, as ATen's CPU histc: the range [min, max] widened
// to [min - 1, max + 1] when empty, bins + 1 edges spaced as linspace computes them in the
// input's dtype (each step rounded to it), an element counted in the last bin whose left
// edge it reaches, max itself in the last bin, anything outside [edge 0, edge bins] or NaN
// not counted.

#include <cstdint>

#include "csrc/tensor/convert.h"

namespace slimcuda::ops {

/// v rounded to floating dtype `dtype` (a cast to it).
SLIMCUDA_HD inline double round_as(double v, int dtype) {
  char buf[8];
  convert::store(buf, dtype, convert::Wide{v, 0, true});
  return convert::load(buf, dtype).f;
}

/// Finite (neither infinite nor NaN), without <cmath> in device code.
SLIMCUDA_HD inline bool is_finite_value(double v) { return v - v == 0.0; }

/// The range histc bins: equal bounds widened by one on each side. False when a bound is
/// not finite (ATen refuses such a range).
SLIMCUDA_HD inline bool histc_range(double* lo, double* hi) {
  if (*lo == *hi) {
    *lo -= 1.0;
    *hi += 1.0;
  }
  return is_finite_value(*lo) && is_finite_value(*hi);
}

/// Edge i (0..bins) of `bins` bins over [lo, hi] in `dtype`: linspace's two halves, from
/// the start below the middle and from the end above it.
SLIMCUDA_HD inline double histc_edge(double lo, double hi, int64_t bins, int64_t i, int dtype) {
  const double start = round_as(lo, dtype), end = round_as(hi, dtype);
  const double step = round_as((end - start) / static_cast<double>(bins), dtype);
  const int64_t steps = bins + 1;
  if (i < steps / 2) return round_as(start + round_as(step * static_cast<double>(i), dtype), dtype);
  return round_as(end - round_as(step * static_cast<double>(steps - i - 1), dtype), dtype);
}

}  // namespace slimcuda::ops
