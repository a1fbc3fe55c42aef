// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA scaled-dot-product attention: cuDNN's fused SDPA where it serves the case
// (float16/bfloat16), slimcuda's own kernel (attention_cuda.cu) for float32 and everything
// cuDNN declines.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention/attention_problem.h"

namespace slimcuda::ops {

/// Enqueues a checked AttentionProblem on ctx's stream (its device current): no
/// synchronization, no cudaMalloc. Errors: NotSupported (head dims above 256 on the own
/// kernel), Internal (a launch failure, the CUDA error in the message).
[[nodiscard]] Error attention_cuda(const AttentionProblem& p, const StreamContext& ctx);

/// The same on slimcuda's own kernel only, whatever cuDNN could serve (what attention_cuda
/// falls through to; benchmarks time it against cuDNN's path).
[[nodiscard]] Error attention_kernel_cuda(const AttentionProblem& p, const StreamContext& ctx);

}  // namespace slimcuda::ops
