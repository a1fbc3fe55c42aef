// SPDX-License-Identifier: Apache-2.0
#pragma once

// nms on CUDA: the host side around nms_kernels.cu.

#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/vision/vision_problem.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// The kept indices (int64, on ctx.device()) of a checked CUDA nms problem, as vision_ops.h's
/// nms() describes: one synchronization, refused under CUDA-graph capture.
[[nodiscard]] Error nms_cuda(const NmsProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);

}  // namespace slimcuda::ops
