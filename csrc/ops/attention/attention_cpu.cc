// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/attention/attention_cpu.h"

#include <cblas.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/common/cpu_threads.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

// Query rows per block: the block's scores (rows x seq_kv floats) stay small however long
// the keys are.
constexpr int64_t kRowBlock = 128;

// One thread's buffers, reused across the heads it takes.
struct HeadBuffers {
  std::vector<float> q, k, v, scores, out;
};

// The causal mask and the bias on one row of scores, then its softmax in place; returns the
// row's logsumexp (0 for a row every key is masked out of, whose weights are all 0).
float softmax_row(const AttentionProblem& p, const char* bias, int64_t b, int64_t h, int64_t i, float* s) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t n = p.seq_kv;
  const int64_t row = b * p.bias_strides[0] + h * p.bias_strides[1] + i * p.bias_strides[2];
  for (int64_t j = 0; j < n; ++j) {
    if (p.causal && j > i) {
      s[j] = kNegInf;
      continue;
    }
    if (bias == nullptr) continue;
    const int64_t off = row + j * p.bias_strides[3];
    if (p.bias_dtype == ScalarType::Bool) {
      if (bias[off] == 0) s[j] = kNegInf;
    } else if (p.bias_dtype == ScalarType::Float) {
      s[j] += reinterpret_cast<const float*>(bias)[off];
    } else {
      s[j] += static_cast<float>(load_element(bias, p.bias_dtype, off));
    }
  }
  float max = kNegInf;
  for (int64_t j = 0; j < n; ++j) max = s[j] > max ? s[j] : max;
  if (max == kNegInf) {
    std::memset(s, 0, static_cast<size_t>(n) * sizeof(float));
    return 0.0f;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - max);
    sum += s[j];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) s[j] *= inv;
  return static_cast<float>(max + std::log(sum));
}

void one_head(const AttentionProblem& p, int64_t b, int64_t h, HeadBuffers& buf) {
  const ScalarType t = p.dtype;
  const int64_t group = p.heads_kv > 0 ? p.heads_q / p.heads_kv : 1, hk = h / group;
  const int64_t D = p.head_dim, Dv = p.head_dim_v, Skv = p.seq_kv;
  const char* bias = p.bias != nullptr ? static_cast<const char*>(p.bias->data_ptr()) : nullptr;
  char* out = static_cast<char*>(p.out->data_ptr());
  char* lse = p.logsumexp != nullptr ? static_cast<char*>(p.logsumexp->data_ptr()) : nullptr;
  gather_floats(static_cast<const char*>(p.k->data_ptr()), t, b * p.k_strides[0] + hk * p.k_strides[1], Skv, D,
                p.k_strides[2], p.k_strides[3], buf.k);
  gather_floats(static_cast<const char*>(p.v->data_ptr()), t, b * p.v_strides[0] + hk * p.v_strides[1], Skv, Dv,
                p.v_strides[2], p.v_strides[3], buf.v);
  for (int64_t i0 = 0; i0 < p.seq_q; i0 += kRowBlock) {
    const int64_t rows = p.seq_q - i0 < kRowBlock ? p.seq_q - i0 : kRowBlock;
    gather_floats(static_cast<const char*>(p.q->data_ptr()), t,
                  b * p.q_strides[0] + h * p.q_strides[1] + i0 * p.q_strides[2], rows, D, p.q_strides[2],
                  p.q_strides[3], buf.q);
    buf.scores.assign(static_cast<size_t>(rows * Skv), 0.0f);
    if (D > 0) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(Skv),
                  static_cast<int>(D), static_cast<float>(p.scale), buf.q.data(), static_cast<int>(D), buf.k.data(),
                  static_cast<int>(D), 0.0f, buf.scores.data(), static_cast<int>(Skv));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float l = softmax_row(p, bias, b, h, i0 + r, buf.scores.data() + r * Skv);
      if (lse != nullptr) {
        std::memcpy(lse + (b * p.lse_strides[0] + h * p.lse_strides[1] + (i0 + r) * p.lse_strides[2]) * 4, &l, 4);
      }
    }
    buf.out.assign(static_cast<size_t>(rows * Dv), 0.0f);
    if (Dv > 0) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(Dv),
                  static_cast<int>(Skv), 1.0f, buf.scores.data(), static_cast<int>(Skv), buf.v.data(),
                  static_cast<int>(Dv), 0.0f, buf.out.data(), static_cast<int>(Dv));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t ob = b * p.out_strides[0] + h * p.out_strides[1] + (i0 + r) * p.out_strides[2];
      for (int64_t d = 0; d < Dv; ++d) store_element(out, t, ob + d * p.out_strides[3], buf.out[r * Dv + d]);
    }
  }
}

bool fits_blas(const AttentionProblem& p) {
  const int64_t big = p.seq_kv > p.head_dim ? p.seq_kv : p.head_dim;
  return p.seq_kv > 0 && big <= INT_MAX / kRowBlock && p.seq_kv * p.head_dim <= INT_MAX &&
         p.seq_kv * p.head_dim_v <= INT_MAX && (p.heads_kv == 0 || p.heads_q % p.heads_kv == 0);
}

}  // namespace

Error attention_cpu(const AttentionProblem& p) noexcept {
  if (p.batch == 0 || p.heads_q == 0 || p.seq_q == 0) return Error::Ok;
  if (!fits_blas(p)) return attention_cpu_reference(p);
  const int64_t heads = p.batch * p.heads_q;
  const CpuThreadScope threads;
  std::atomic<bool> no_memory{false};
  // Each thread catches its own bad_alloc: an exception must not leave an OpenMP region.
#pragma omp parallel if (heads > 1)
  {
    HeadBuffers buf;
#pragma omp for schedule(dynamic)
    for (int64_t bh = 0; bh < heads; ++bh) {
      if (no_memory.load(std::memory_order_relaxed)) continue;
      try {
        one_head(p, bh / p.heads_q, bh % p.heads_q, buf);
      } catch (const std::bad_alloc&) {
        no_memory.store(true);
      }
    }
  }
  if (no_memory.load()) {
    return set_last_error(Error::MemoryAllocationFailed, "no host memory for attention over %lld keys",
                          static_cast<long long>(p.seq_kv));
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
