// SPDX-License-Identifier: Apache-2.0
#pragma once

// sort and topk on CUDA (sort_kernels.h: CUB's segmented sort), on ctx's stream, into
// tensors the shim allocated with the problem's layout; scratch from the caching allocator.
// Never synchronizes.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

[[nodiscard]] Error sort_cuda(const SortProblem& p, SlimTensor& values, SlimTensor& indices, const StreamContext& ctx);

}  // namespace slimcuda::ops
