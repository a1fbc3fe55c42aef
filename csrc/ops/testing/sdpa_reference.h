// SPDX-License-Identifier: Apache-2.0
#pragma once

// Scaled-dot-product attention in double, written from its definition (PyTorch's
// torch.nn.functional.scaled_dot_product_attention) for tests to check slimcuda's attention
// against; it shares no code with slimcuda:
//   out[b,h,i,:] = sum_j softmax_j(score[b,h,i,:]) v[b,g(h),j,:]
//   score[b,h,i,j] = scale * (q[b,h,i,:] . k[b,g(h),j,:]) + bias[b,h,i,j],
//                    -inf where the mask is false or, when causal, where j > i
// g(h) = h / (heads_q / heads_kv): enable_gqa repeats each key/value head heads_q / heads_kv
// times (repeat_interleave). Causal is is_causal: ones(seq_q, seq_kv).tril(), aligned at the
// upper left, so query i sees keys 0..i whatever seq_kv is.

#include <cstdint>
#include <string>
#include <vector>

namespace slimcuda::testing {

struct SdpaReference {
  int64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_kv = 0, head_dim = 0, head_dim_v = 0;
  /// Packed row-major: q [batch, heads_q, seq_q, head_dim], k [batch, heads_kv, seq_kv,
  /// head_dim], v [batch, heads_kv, seq_kv, head_dim_v].
  std::vector<double> q, k, v;
  /// Used as given: the caller states the scale it expects (PyTorch's default is
  /// 1 / sqrt(head_dim)), so no default here can agree with a wrong one by construction.
  double scale = 0.0;
  bool causal = false;
  /// Additive bias: element [b,h,i,j] is bias[b*s[0] + h*s[1] + i*s[2] + j*s[3]] with
  /// s = bias_strides (0 broadcasts a dimension). Empty: none.
  std::vector<double> bias;
  int64_t bias_strides[4] = {0, 0, 0, 0};
  /// Boolean mask, nonzero where a query attends a key, indexed as the bias. Empty: none.
  std::vector<uint8_t> mask;
  int64_t mask_strides[4] = {0, 0, 0, 0};

  /// "" when the sizes, operands and strides fit together; else what does not.
  [[nodiscard]] std::string check() const;

  /// Query row (b, h, i): out[0, head_dim_v) and *lse, the natural log of sum_j exp(score).
  /// A row that sees no key gives NaN outputs and lse -inf (the definition's 0/0 and log 0).
  void row(int64_t b, int64_t h, int64_t i, double* out, double* lse) const;

  /// Every row: *out [batch, heads_q, seq_q, head_dim_v], *lse [batch, heads_q, seq_q],
  /// packed row-major.
  void all(std::vector<double>* out, std::vector<double>* lse) const;
};

}  // namespace slimcuda::testing
