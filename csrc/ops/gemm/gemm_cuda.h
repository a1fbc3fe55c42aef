// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA GEMM (mm, addmm, bmm, baddbmm, _addmm_activation) on cuBLASLt.

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Enqueues a checked GemmProblem on ctx's stream (no synchronization, no cudaMalloc):
/// float32 with CUBLAS_COMPUTE_32F (TF32 off, PyTorch's matmul default), float16/bfloat16
/// with float accumulation. Operands in any 2-D-strided layout cuBLASLt can read (row- or
/// column-major with a leading dimension, batches strided) are used in place; others are
/// copied to a contiguous temporary first. `out` is written with its own strides, through a
/// contiguous temporary when cuBLASLt cannot write its layout. A [N] bias with beta == 1 uses
/// the bias epilogue; any other self is first expanded into the result (then beta * C).
/// Plans (descriptors and the heuristic's algorithm) are cached per thread and shape.
[[nodiscard]] Error gemm_cuda(const GemmProblem& p, const StreamContext& ctx);

}  // namespace slimcuda::ops
