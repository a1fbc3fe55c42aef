// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU GEMMs' activation, shared by the BLAS path and the reference so both apply the
// same function.

#include <cmath>

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// ReLU (NaN stays NaN, as ATen's), or GELU's exact erf form; None leaves v.
inline double activate(Activation act, double v) noexcept {
  switch (act) {
    case Activation::Relu:
      return v > 0.0 ? v : (std::isnan(v) ? v : 0.0);
    case Activation::Gelu:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Activation::None:
      break;
  }
  return v;
}

}  // namespace slimcuda::ops
