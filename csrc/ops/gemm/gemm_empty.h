// SPDX-License-Identifier: Apache-2.0
#pragma once

// The GEMM whose inner dimension is empty (k == 0): no product to compute, and cuBLASLt
// takes no k of 0, so out = act(beta * self), or act(0) without self, by one kernel.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Element type of launch_gemm_empty's tensors.
enum class GemmElement : int8_t { Float, Half, BFloat16 };
/// The activation applied after the sum: none, ReLU, or GELU in its tanh form (the form of
/// cuBLASLt's GELU epilogue, which the k > 0 path uses).
enum class GemmEpilogue : int8_t { None, Relu, GeluTanh };

/// Enqueues, on `stream` (current device), out[b][i][j] = act(beta * self[b][i][j]) for the
/// batch x m x n elements, with each tensor's element strides ([batch, m, n]; a broadcast
/// dimension has stride 0). `self` nullptr, or beta == 0: act(0) (self is not read, as
/// PyTorch ignores it, NaN included). Arithmetic in float32. Returns once enqueued.
[[nodiscard]] Error launch_gemm_empty(void* out, const int64_t out_strides[3], const void* self,
                                      const int64_t self_strides[3], GemmElement type, int64_t batch, int64_t m,
                                      int64_t n, double beta, GemmEpilogue act, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
