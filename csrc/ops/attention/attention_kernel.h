// SPDX-License-Identifier: Apache-2.0
#pragma once

// slimcuda's own scaled-dot-product attention kernel (attention_cuda.cu): plain
// pointers and element strides, so the .cu needs no tensor types.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Element types of the kernel's operands (q, k, v and out share one; the bias may differ).
enum class AttnType : int8_t { F32, F16, BF16, Bool };

struct AttentionKernelArgs {
  int64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_kv = 0, head_dim = 0, head_dim_v = 0;
  AttnType dtype = AttnType::F32;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t q_strides[4] = {0, 0, 0, 0}, k_strides[4] = {0, 0, 0, 0}, v_strides[4] = {0, 0, 0, 0};
  const void* bias = nullptr;  ///< null: none
  AttnType bias_dtype = AttnType::F32;
  int64_t bias_strides[4] = {0, 0, 0, 0};  ///< 0 for broadcast dimensions
  bool causal = false;
  float scale = 1.0f;
  void* out = nullptr;
  int64_t out_strides[4] = {0, 0, 0, 0};
  float* lse = nullptr;  ///< null: not written
  int64_t lse_strides[3] = {0, 0, 0};
};

/// The largest head dim the kernel takes (its accumulators live in registers).
constexpr int64_t kAttentionMaxHeadDim = 256;

/// Enqueues the attention on `stream` (the current device's), no synchronization, no
/// allocation: one block per (query tile, head, batch), K/V tiles through shared memory,
/// an online softmax in float. Head dims above kAttentionMaxHeadDim, or a grid too large,
/// are NotSupported; launch failures Internal, with the CUDA error in the message.
[[nodiscard]] Error launch_attention(const AttentionKernelArgs& a, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
