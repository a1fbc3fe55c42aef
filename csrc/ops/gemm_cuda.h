// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA GEMM (mm, addmm, bmm, baddbmm, _addmm_activation) on cuBLASLt, and the small-m
// GEMMs of nn.Linear layers (a decode step's) on slimcuda's GEMV (gemv_cuda.h).

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/op_args.h"

namespace slimcuda::ops {

/// Enqueues a checked GemmProblem on ctx's stream (no synchronization, no cudaMalloc):
/// float32 with CUBLAS_COMPUTE_32F (TF32 off, PyTorch's matmul default), float16/bfloat16
/// with float accumulation. Operands in any 2-D-strided layout cuBLASLt can read (row- or
/// column-major with a leading dimension, batches strided) are used in place; others are
/// copied to a contiguous temporary first. `out` is written with its own strides, through a
/// contiguous temporary when cuBLASLt cannot write its layout. A [N] bias with beta == 1 uses
/// the bias epilogue; any other self is first expanded into the result (then beta * C).
/// Plans (descriptors and the heuristic's algorithm) are cached per thread and shape.
/// Problems gemm_uses_gemv accepts run on the GEMV instead while gemv_enabled() (and
/// SLIMCUDA_GEMM_PLAIN is off).
[[nodiscard]] Error gemm_cuda(const GemmProblem& p, const StreamContext& ctx, const char* function);

/// Whether gemm_cuda runs p on the GEMV (SLIMCUDA_GEMV aside): float16/bfloat16, 1 <= m <= 8,
/// k >= 8 and k % 8 == 0, a read along k contiguously (a_strides[2] == 1) and b too
/// (b_strides[1] == 1: nn.Linear's weight wᵀ as mm_out/addmm_out receive it), both 16-byte
/// aligned with row and batch strides that keep them so (multiples of 8 elements), batch
/// <= 65535; any alpha, any self (a [n] bias or anything broadcast to out) and beta, no
/// activation or ReLU/GELU, out with any strides. Everything else stays on cuBLASLt.
[[nodiscard]] bool gemm_uses_gemv(const GemmProblem& p) noexcept;

}  // namespace slimcuda::ops
