// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU reference GEMM (mm, addmm, bmm, baddbmm, _addmm_activation).

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Computes a checked GemmProblem on the host: float32 accumulates in double, float16 and
/// bfloat16 in float (as ATen's CPU kernels); alpha * acc + beta * self, then the
/// activation (ReLU, or GELU's exact erf form), stored once into out with its strides.
[[nodiscard]] Error gemm_cpu(const GemmProblem& p) noexcept;

}  // namespace slimcuda::ops
