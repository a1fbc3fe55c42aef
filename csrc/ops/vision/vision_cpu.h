// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU side of the detection ops (float32 computed in float, float64 in double, as
// torchvision's CPU kernels): loops over vision_math.h's per-element functions.

#include <cstdint>
#include <vector>

#include "csrc/ops/vision/vision_problem.h"

namespace slimcuda::ops {

/// Fills p.out (and p.index) for every output element. p.type is F32 or F64.
void roi_cpu(const RoiProblem& p) noexcept;

/// Fills p.out. p.type is F32 or F64.
void deform_conv2d_cpu(const DeformProblem& p) noexcept;

/// The kept indices of nms, in order (may throw std::bad_alloc). p.type is F32 or F64.
[[nodiscard]] std::vector<int64_t> nms_cpu(const NmsProblem& p);

}  // namespace slimcuda::ops
