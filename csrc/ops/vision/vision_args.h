// SPDX-License-Identifier: Apache-2.0
#pragma once

// The argument checks of torchvision's detection ops, one place for both devices: each fills
// its problem (vision_problem.h) from the tensors and scalars, output pointers left null for
// the op to fill once it has allocated them.

#include <cstdint>

#include "csrc/ops/vision/vision_problem.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// The VisionType of `t` on its device: CPU float32/float64, CUDA float32/float16/bfloat16;
/// another dtype -> NotSupported (message names op `name`).
[[nodiscard]] Error vision_type(const char* name, const SlimTensor& t, VisionType* out) noexcept;

/// input 4-D, rois [K, 5], one device and dtype, pooled sizes > 0, and for the ps ops C a
/// multiple of pooled_h * pooled_w.
[[nodiscard]] Error check_roi(const char* name, RoiOp op, const SlimTensor& input, const SlimTensor& rois,
                              double spatial_scale, int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio,
                              bool aligned, RoiProblem* p) noexcept;

/// dets [N, 4], scores [N], one device and dtype.
[[nodiscard]] Error check_nms(const SlimTensor& dets, const SlimTensor& scores, double iou_threshold,
                              NmsProblem* p) noexcept;

/// deform_conv2d's ranks, sizes (as vision_ops.h states), positive strides, dilations and
/// groups, non-negative padding, a non-empty output plane, one device and dtype.
[[nodiscard]] Error check_deform(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offset,
                                 const SlimTensor& mask, const SlimTensor& bias, const int64_t stride[2],
                                 const int64_t pad[2], const int64_t dilation[2], int64_t groups, int64_t offset_groups,
                                 bool use_mask, DeformProblem* p) noexcept;

}  // namespace slimcuda::ops
