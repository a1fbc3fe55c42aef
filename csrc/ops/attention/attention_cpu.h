// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU reference scaled-dot-product attention (every op's semantics, on host tensors).

#include "csrc/ops/attention/attention_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Computes a checked AttentionProblem into p.out (and p.logsumexp when set): scores and
/// softmax in double, the float16/bfloat16 output rounded once at the store. A row that
/// every key is masked out of (a bool mask all false, an additive -inf bias) gets 0s and a
/// logsumexp of 0, as PyTorch's CPU kernel gives.
[[nodiscard]] Error attention_cpu(const AttentionProblem& p) noexcept;

}  // namespace slimcuda::ops
