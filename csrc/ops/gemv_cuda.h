// SPDX-License-Identifier: Apache-2.0
#pragma once

// The small-m GEMM as a bandwidth-bound GEMV (gemv_cuda.cu): out[b][i][j] = act(alpha *
// sum_l x[b][i][l] * w[b][j][l] + beta * self[b][i][j]) for m <= 8 rows of x, with w read
// along k contiguously (nn.Linear's weight [n, k], which mm_out/addmm_out receive as the
// transposed view mat2 = wᵀ with strides (1, k)). cuBLASLt reaches 30-70 % of the HBM
// bandwidth on these shapes (one decode step's Linears, H200); this path streams each
// weight once at close to the copy bandwidth. Plain pointers and element strides, so the
// .cu needs no tensor types; gemm_cuda.cc decides from a GemmProblem whether it applies.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/gemm_empty.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// The most rows of x (m) the GEMV takes.
inline constexpr int64_t kGemvMaxM = 8;

/// One GEMV, every operand [batch, rows, cols] with element strides (0 for a broadcast
/// dimension). x is [batch, m, k] with unit stride along k; w is [batch, n, k] with unit
/// stride along k.
struct GemvArgs {
  GemmElement type = GemmElement::BFloat16;  ///< Half or BFloat16 (the sums are float32)
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const void* x = nullptr;
  int64_t x_batch_stride = 0, x_row_stride = 0;
  const void* w = nullptr;
  int64_t w_batch_stride = 0, w_row_stride = 0;
  const void* self = nullptr;  ///< null: no self term (beta ignored)
  int64_t self_strides[3] = {0, 0, 0};
  float alpha = 1.0f, beta = 0.0f;
  void* out = nullptr;  ///< written element by element with its own strides
  int64_t out_strides[3] = {0, 0, 0};
  GemmEpilogue act = GemmEpilogue::None;
};

/// Whether launch_gemv takes `a`: float16/bfloat16, 1 <= m <= kGemvMaxM, n >= 1, k >= 8
/// with k % 8 == 0, batch <= 65535, and x and w 16-byte aligned at every row and batch (the
/// pointers, and their row and batch strides multiples of 8 elements): the kernel reads both
/// 16 bytes at a time.
[[nodiscard]] bool gemv_takes(const GemvArgs& a) noexcept;

/// Enqueues the GEMV on `stream` (on `device`, the current one): no synchronization, no
/// allocation, no workspace. `a` must satisfy gemv_takes (else InvalidArgument). A launch
/// failure is Internal with the CUDA error in the message.
[[nodiscard]] Error launch_gemv(const GemvArgs& a, int device, cudaStream_t stream, const char* function) noexcept;

/// Whether gemm_cuda may take the GEMV path: SLIMCUDA_GEMV, read once per process ("0"
/// turns it off; unset or anything else leaves it on), unless set_gemv_enabled overrode it.
[[nodiscard]] bool gemv_enabled() noexcept;

/// Overrides SLIMCUDA_GEMV for the rest of the process (tests and benchmarks that compare
/// both paths in one run). Not part of the ABI.
void set_gemv_enabled(bool enabled) noexcept;

}  // namespace slimcuda::ops
