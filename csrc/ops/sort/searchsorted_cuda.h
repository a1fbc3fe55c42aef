// SPDX-License-Identifier: Apache-2.0
#pragma once

// searchsorted and bucketize on CUDA (searchsorted_kernel.h), on ctx's stream. Never
// synchronizes.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

[[nodiscard]] Error searchsorted_cuda(const SearchProblem& p, SlimTensor& out, const StreamContext& ctx);

}  // namespace slimcuda::ops
