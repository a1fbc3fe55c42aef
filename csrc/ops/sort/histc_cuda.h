// SPDX-License-Identifier: Apache-2.0
#pragma once

// histc on CUDA (histc_kernels.h), on ctx's stream; scratch from the caching allocator.
// Never synchronizes: min == max takes the data's range on the device.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// More than INT32_MAX elements or bins -> NotSupported (CUB's int counters and levels).
[[nodiscard]] Error histc_cuda(const HistcProblem& p, SlimTensor& hist, const StreamContext& ctx);

}  // namespace slimcuda::ops
