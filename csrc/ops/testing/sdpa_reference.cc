// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/testing/sdpa_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace slimcuda::testing {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The largest index strides s reach over [batch, heads_q, seq_q, seq_kv], plus one.
int64_t extent(const SdpaReference& a, const int64_t s[4]) {
  const int64_t sizes[4] = {a.batch, a.heads_q, a.seq_q, a.seq_kv};
  int64_t last = 0;
  for (int d = 0; d < 4; ++d) last += (sizes[d] - 1) * s[d];
  return last + 1;
}

int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t j) {
  return b * s[0] + h * s[1] + i * s[2] + j * s[3];
}

}  // namespace

std::string SdpaReference::check() const {
  if (batch < 1 || heads_q < 1 || heads_kv < 1 || seq_q < 1 || seq_kv < 1 || head_dim < 1 || head_dim_v < 1) {
    return "every size must be positive";
  }
  if (heads_q % heads_kv != 0) return "heads_q must be a multiple of heads_kv";
  if (static_cast<int64_t>(q.size()) != batch * heads_q * seq_q * head_dim) return "q has the wrong size";
  if (static_cast<int64_t>(k.size()) != batch * heads_kv * seq_kv * head_dim) return "k has the wrong size";
  if (static_cast<int64_t>(v.size()) != batch * heads_kv * seq_kv * head_dim_v) return "v has the wrong size";
  for (int d = 0; d < 4; ++d) {
    if (bias_strides[d] < 0 || mask_strides[d] < 0) return "negative bias or mask stride";
  }
  if (!bias.empty() && extent(*this, bias_strides) > static_cast<int64_t>(bias.size())) {
    return "bias_strides reach past the bias";
  }
  if (!mask.empty() && extent(*this, mask_strides) > static_cast<int64_t>(mask.size())) {
    return "mask_strides reach past the mask";
  }
  return "";
}

void SdpaReference::row(int64_t b, int64_t h, int64_t i, double* out, double* lse) const {
  const int64_t g = h / (heads_q / heads_kv);
  const double* qi = q.data() + ((b * heads_q + h) * seq_q + i) * head_dim;
  std::vector<double> score(static_cast<size_t>(seq_kv));
  double max = kNegInf;
  for (int64_t j = 0; j < seq_kv; ++j) {
    const double* kj = k.data() + ((b * heads_kv + g) * seq_kv + j) * head_dim;
    double dot = 0.0;
    for (int64_t x = 0; x < head_dim; ++x) dot += qi[x] * kj[x];
    double s = scale * dot;
    if (!bias.empty()) s += bias[at(bias_strides, b, h, i, j)];
    if (!mask.empty() && mask[at(mask_strides, b, h, i, j)] == 0) s = kNegInf;
    if (causal && j > i) s = kNegInf;
    score[j] = s;
    max = std::max(max, s);
  }
  if (max == kNegInf) {
    *lse = kNegInf;
    std::fill(out, out + head_dim_v, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // exp(s - max) in place of exp(s): the same softmax, without overflow.
  double sum = 0.0;
  for (double& s : score) sum += (s = std::exp(s - max));
  *lse = max + std::log(sum);
  std::fill(out, out + head_dim_v, 0.0);
  for (int64_t j = 0; j < seq_kv; ++j) {
    const double* vj = v.data() + ((b * heads_kv + g) * seq_kv + j) * head_dim_v;
    for (int64_t x = 0; x < head_dim_v; ++x) out[x] += score[j] / sum * vj[x];
  }
}

void SdpaReference::all(std::vector<double>* out, std::vector<double>* lse) const {
  out->assign(static_cast<size_t>(batch * heads_q * seq_q * head_dim_v), 0.0);
  lse->assign(static_cast<size_t>(batch * heads_q * seq_q), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads_q; ++h) {
      for (int64_t i = 0; i < seq_q; ++i) {
        const int64_t r = (b * heads_q + h) * seq_q + i;
        row(b, h, i, out->data() + r * head_dim_v, lse->data() + r);
      }
    }
  }
}

}  // namespace slimcuda::testing
