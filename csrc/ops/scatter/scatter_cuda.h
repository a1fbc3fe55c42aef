// SPDX-License-Identifier: Apache-2.0
#pragma once

// The scatter family on CUDA, on ctx's stream (the caller's), never synchronizing: self
// copied into the output (copy_tensor, stream-ordered), then the kernels of
// scatter_kernels.h; scratch (mean's counters, masked_scatter's prefix sum and CUB's
// temporary) from the caching allocator on the same stream. What the CPU ops check in the
// data is not checked here (see scatter_kernels.h).

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/scatter/scatter_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

[[nodiscard]] Error scatter_cuda(const ScatterProblem& p, const StreamContext& ctx);

[[nodiscard]] Error index_put_cuda(const IndexPutProblem& p, SlimTensor& out, const StreamContext& ctx);

[[nodiscard]] Error masked_scatter_cuda(const MaskedScatterProblem& p, SlimTensor& out, const StreamContext& ctx);

}  // namespace slimcuda::ops
