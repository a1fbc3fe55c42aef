// SPDX-License-Identifier: Apache-2.0
#pragma once

// The selection ops on CUDA, on ctx's stream. Their output sizes depend on the data, so each
// counts on the device, copies the count(s) into pinned memory and waits for that copy: one
// synchronization of the stream per call (as ATen's kernels), then allocates the outputs and
// fills them on the stream. A stream being captured into a CUDA graph cannot wait: those calls
// are refused with NotSupported before anything is enqueued, the capture left intact.
// nonzero_static and index.Tensor without bool / uint8 indices need no count and never
// synchronize; empty inputs neither.

#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/select/select_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

[[nodiscard]] Error nonzero_cuda(const NonzeroProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);
[[nodiscard]] Error masked_select_cuda(const MaskedSelectProblem& p, const StreamContext& ctx,
                                       std::unique_ptr<SlimTensor>* out);
/// An index out of range cannot be reported without a synchronization: its element is zero.
[[nodiscard]] Error index_cuda(const IndexProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);
[[nodiscard]] Error unique_cuda(const UniqueProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]);

/// unique_dim / unique_consecutive with a dim; inverse and counts only when asked for (else
/// [0], as ATen's CUDA kernel).
[[nodiscard]] Error unique_dim_cuda(const UniqueDimProblem& p, const StreamContext& ctx,
                                    std::unique_ptr<SlimTensor> out[3]);

}  // namespace slimcuda::ops
