// SPDX-License-Identifier: Apache-2.0
#pragma once

// A checked scaled-dot-product attention, the contract between the attention shims
// (argument checks, output allocation, the CPU reference and slimcuda's own CUDA kernel) and
// the cuDNN fused-SDPA path. Every operand is seen as 4-D [batch, heads, seq, dim] with
// element strides, as PyTorch's SDPA ops take them:
//   out[b,h,i,:] = sum_j softmax_j(scale * q[b,h,i,:] . k[b,hk,j,:] + bias[b,h,i,j]) v[b,hk,j,:]
// with hk = h / (heads_q / heads_kv) (grouped-query attention when heads_kv < heads_q), keys
// j > i masked out when causal (PyTorch's is_causal: the upper-left tril of [seq_q, seq_kv]),
// and logsumexp[b,h,i] = log sum_j exp(score) in float32 (natural log) when requested.

#include <cstdint>

#include "csrc/tensor/slim_tensor.h"

namespace slimcuda::ops {

struct AttentionProblem {
  int64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_kv = 0;
  int64_t head_dim = 0;                  ///< of q and k
  int64_t head_dim_v = 0;                ///< of v and out
  ScalarType dtype = ScalarType::Float;  ///< q, k, v and out: float32, float16 or bfloat16
  int device = -1;                       ///< CUDA device index (CPU: -1)

  const SlimTensor* q = nullptr;  ///< [batch, heads_q, seq_q, head_dim]
  const SlimTensor* k = nullptr;  ///< [batch, heads_kv, seq_kv, head_dim]
  const SlimTensor* v = nullptr;  ///< [batch, heads_kv, seq_kv, head_dim_v]
  int64_t q_strides[4] = {0, 0, 0, 0};
  int64_t k_strides[4] = {0, 0, 0, 0};
  int64_t v_strides[4] = {0, 0, 0, 0};

  /// Additive bias (or boolean mask: true = attend) broadcast to [batch, heads_q, seq_q,
  /// seq_kv]: a broadcast dimension has stride 0. nullptr: none.
  const SlimTensor* bias = nullptr;
  int64_t bias_strides[4] = {0, 0, 0, 0};
  ScalarType bias_dtype = ScalarType::Float;  ///< dtype, or Bool for a mask

  bool causal = false;
  double scale = 0.0;  ///< resolved: the caller's, else 1 / sqrt(head_dim)

  SlimTensor* out = nullptr;  ///< [batch, heads_q, seq_q, head_dim_v], strides as PyTorch's op returns
  int64_t out_strides[4] = {0, 0, 0, 0};
  /// float32 [batch, heads_q, >= seq_q] (element strides; only the first seq_q of the last
  /// dimension are written), or nullptr when not requested.
  SlimTensor* logsumexp = nullptr;
  int64_t lse_strides[3] = {0, 0, 0};
};

}  // namespace slimcuda::ops
