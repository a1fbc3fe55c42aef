// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU GEMM (mm, addmm, bmm, baddbmm, _addmm_activation): OpenBLAS's sgemm, and the
// reference loops it is tested against.

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Computes a checked GemmProblem on the host with OpenBLAS: each batch's product by
/// cblas_sgemm in float32 (float16 and bfloat16 operands widened first, as ATen's CPU
/// path accumulates them in float), then alpha * acc + beta * self and the activation
/// (ReLU, or GELU's exact erf form), stored once into out with its strides. An operand with
/// no unit stride is packed first. Threads: OpenBLAS's OpenMP build, so the OpenMP thread
/// count (OMP_NUM_THREADS) governs it and the generated code alike. Shapes past BLAS's
/// 32-bit sizes go to the reference.
[[nodiscard]] Error gemm_cpu(const GemmProblem& p) noexcept;

/// The reference: float32 accumulates in double, float16 and bfloat16 in float, one
/// element at a time. Slow; the tests compare gemm_cpu with it.
[[nodiscard]] Error gemm_cpu_reference(const GemmProblem& p) noexcept;

}  // namespace slimcuda::ops
