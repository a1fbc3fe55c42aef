// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU reference convolution (forward and transposed, 1-D/2-D/3-D, groups, bias).

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Computes a checked ConvProblem into `out` (shaped p.out_sizes, any strides): a direct
/// loop accumulating in double, bias added, one rounding at the store.
[[nodiscard]] Error convolution_cpu(const ConvProblem& p, const SlimTensor& out);

}  // namespace slimcuda::ops
