// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU scaled-dot-product attention: OpenBLAS's sgemm for the two products, and the
// reference loops it is tested against (every op's semantics, on host tensors).

#include "csrc/ops/attention/attention_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Computes a checked AttentionProblem into p.out (and p.logsumexp when set), per batch and
/// query head in blocks of query rows: the scores by cblas_sgemm (Q Kᵀ, scaled), the causal
/// mask and bias added, a float softmax, the output by cblas_sgemm (P V); float16/bfloat16
/// operands widened to float first and the output rounded once at the store (as PyTorch's
/// CPU kernel accumulates them in float). The heads run on OpenMP threads (the generated
/// code's pool, CpuThreadScope's count). A row
/// that every key is masked out of gets 0s and a logsumexp of 0, as PyTorch's CPU kernel
/// gives. Sizes past BLAS's 32-bit ones go to the reference.
[[nodiscard]] Error attention_cpu(const AttentionProblem& p) noexcept;

/// The reference: scores and softmax in double, one query row at a time. Slow; the tests
/// compare attention_cpu with it.
[[nodiscard]] Error attention_cpu_reference(const AttentionProblem& p) noexcept;

}  // namespace slimcuda::ops
