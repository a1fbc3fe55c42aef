// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA scaled-dot-product attention: the decode kernel (attention_decode.cu) for a few
// query rows against a KV cache, cuDNN's fused SDPA where it serves the case
// (float16/bfloat16), slimcuda's own kernel (attention_cuda.cu) for float32 and everything
// cuDNN declines.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention_problem.h"

namespace slimcuda::ops {

/// Enqueues a checked AttentionProblem on ctx's stream (its device current): no
/// synchronization, no cudaMalloc. Errors: NotSupported (head dims above 256 on the own
/// kernel), Internal (a launch failure, the CUDA error in the message).
[[nodiscard]] Error attention_cuda(const AttentionProblem& p, const StreamContext& ctx, const char* function);

/// The same on the decode kernel (attention_decode.h: seq_q <= 4, head dim 64/128, float16/
/// bfloat16, 16-byte aligned K/V rows), whatever SLIMCUDA_DECODE_ATTENTION says; NotSupported,
/// with the last-error message untouched, for a problem it does not take (what
/// attention_cuda then hands to cuDNN). Its split-K workspace comes from the caching
/// allocator on ctx's stream.
[[nodiscard]] Error attention_decode_cuda(const AttentionProblem& p, const StreamContext& ctx, const char* function);

/// The same on slimcuda's own kernel only, whatever cuDNN could serve (what attention_cuda
/// falls through to; benchmarks time it against cuDNN's path).
[[nodiscard]] Error attention_kernel_cuda(const AttentionProblem& p, const StreamContext& ctx, const char* function);

}  // namespace slimcuda::ops
