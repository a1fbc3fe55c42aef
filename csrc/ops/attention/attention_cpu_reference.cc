// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/attention/attention_cpu.h"  // attention_cpu_reference

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "csrc/ops/common/cpu_elements.h"

namespace slimcuda::ops {
namespace {

// The bias at one score, as an additive term: a bool mask's false is -inf.
double bias_at(const AttentionProblem& p, const char* base, int64_t b, int64_t h, int64_t i, int64_t j) noexcept {
  const int64_t off = b * p.bias_strides[0] + h * p.bias_strides[1] + i * p.bias_strides[2] + j * p.bias_strides[3];
  if (p.bias_dtype == ScalarType::Bool) {
    return base[off] != 0 ? 0.0 : -std::numeric_limits<double>::infinity();
  }
  return load_element(base, p.bias_dtype, off);
}

}  // namespace

Error attention_cpu_reference(const AttentionProblem& p) noexcept {
  const ScalarType t = p.dtype;
  const char* q = static_cast<const char*>(p.q->data_ptr());
  const char* k = static_cast<const char*>(p.k->data_ptr());
  const char* v = static_cast<const char*>(p.v->data_ptr());
  const char* bias = p.bias != nullptr ? static_cast<const char*>(p.bias->data_ptr()) : nullptr;
  char* out = static_cast<char*>(p.out->data_ptr());
  char* lse = p.logsumexp != nullptr ? static_cast<char*>(p.logsumexp->data_ptr()) : nullptr;
  const int64_t group = p.heads_kv > 0 ? p.heads_q / p.heads_kv : 1;
  const int64_t D = p.head_dim, Dv = p.head_dim_v, Skv = p.seq_kv;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  // One head's keys and values (and one query row) gathered as contiguous doubles once,
  // so the inner loops read plain arrays whatever the operands' strides and dtype.
  std::vector<double> keys(static_cast<size_t>(Skv * D)), vals(static_cast<size_t>(Skv * Dv));
  std::vector<double> qrow(static_cast<size_t>(D)), score(static_cast<size_t>(Skv)), acc(static_cast<size_t>(Dv));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.heads_q; ++h) {
      const int64_t hk = h / group;
      if (h % group == 0) {
        for (int64_t j = 0; j < Skv; ++j) {
          const int64_t kb = b * p.k_strides[0] + hk * p.k_strides[1] + j * p.k_strides[2];
          const int64_t vb = b * p.v_strides[0] + hk * p.v_strides[1] + j * p.v_strides[2];
          for (int64_t d = 0; d < D; ++d) keys[j * D + d] = load_element(k, t, kb + d * p.k_strides[3]);
          for (int64_t d = 0; d < Dv; ++d) vals[j * Dv + d] = load_element(v, t, vb + d * p.v_strides[3]);
        }
      }
      for (int64_t i = 0; i < p.seq_q; ++i) {
        const int64_t qb = b * p.q_strides[0] + h * p.q_strides[1] + i * p.q_strides[2];
        for (int64_t d = 0; d < D; ++d) qrow[d] = load_element(q, t, qb + d * p.q_strides[3]);
        double max = kNegInf;
        for (int64_t j = 0; j < Skv; ++j) {
          double s = kNegInf;
          if (!p.causal || j <= i) {
            double dot = 0.0;
            const double* kr = keys.data() + j * D;
            for (int64_t d = 0; d < D; ++d) dot += qrow[d] * kr[d];
            s = dot * p.scale;
            if (bias != nullptr) s += bias_at(p, bias, b, h, i, j);
          }
          score[j] = s;
          if (s > max) max = s;
        }
        double sum = 0.0;
        for (double& s : score) {
          s = max == kNegInf ? 0.0 : std::exp(s - max);
          sum += s;
        }
        for (double& a : acc) a = 0.0;
        if (sum > 0.0) {
          for (int64_t j = 0; j < Skv; ++j) {
            const double w = score[j] / sum;
            if (w == 0.0) continue;
            const double* vr = vals.data() + j * Dv;
            for (int64_t d = 0; d < Dv; ++d) acc[d] += w * vr[d];
          }
        }
        const int64_t ob = b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
        for (int64_t d = 0; d < Dv; ++d) store_element(out, t, ob + d * p.out_strides[3], acc[d]);
        if (lse != nullptr) {
          const float l = sum > 0.0 ? static_cast<float>(max + std::log(sum)) : 0.0f;
          std::memcpy(lse + (b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]) * 4, &l, 4);
        }
      }
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
