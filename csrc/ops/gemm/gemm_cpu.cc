// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/gemm/gemm_cpu.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <new>
#include <vector>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/common/cpu_threads.h"
#include "csrc/ops/gemm/gemm_epilogue.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

// One batch's operand as BLAS takes it: a float32 matrix, row-major with leading dimension
// ld, transposed or not.
struct BlasOperand {
  const float* data = nullptr;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int ld = 0;
};

// A rows x cols operand at `base` (element strides rs, cs) as BLAS can read it: in place when
// it is float32 with a unit stride and a valid leading dimension, else packed row-major into
// `pack`.
BlasOperand operand(const char* base, ScalarType t, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                    std::vector<float>& pack) {
  if (t == ScalarType::Float) {
    const auto* f = reinterpret_cast<const float*>(base);
    if (cs == 1 && rs >= (cols > 1 ? cols : 1) && rs <= INT_MAX) return {f, CblasNoTrans, static_cast<int>(rs)};
    if (rs == 1 && cs >= (rows > 1 ? rows : 1) && cs <= INT_MAX) return {f, CblasTrans, static_cast<int>(cs)};
  }
  gather_floats(base, t, 0, rows, cols, rs, cs, pack);
  return {pack.data(), CblasNoTrans, static_cast<int>(cols > 1 ? cols : 1)};
}

bool fits_blas(const GemmProblem& p) {
  return p.m <= INT_MAX && p.n <= INT_MAX && p.k <= INT_MAX && p.m * p.k <= INT_MAX && p.k * p.n <= INT_MAX &&
         p.m * p.n <= INT_MAX;
}

// out[i, j] as BLAS's C: float32 with a unit column stride and a valid leading dimension.
bool out_in_place(const GemmProblem& p) {
  return p.dtype == ScalarType::Float && p.out_strides[2] == 1 && p.out_strides[1] >= (p.n > 1 ? p.n : 1) &&
         p.out_strides[1] <= INT_MAX;
}

// float32 out that BLAS writes itself: beta * self placed first (then C = alpha * AB + C), the
// activation applied after.
void gemm_into_out(const GemmProblem& p, int64_t bi, const BlasOperand& x, const BlasOperand& y) {
  float* c = static_cast<float*>(p.out->data_ptr()) + bi * p.out_strides[0];
  const int64_t ldc = p.out_strides[1];
  const char* self = p.self != nullptr ? static_cast<const char*>(p.self->data_ptr()) : nullptr;
  const auto* self_f = reinterpret_cast<const float*>(self);  // out is float32, so is self
  const float beta = static_cast<float>(p.beta);
  for (int64_t i = 0; i < p.m && (self != nullptr || p.k == 0); ++i) {
    float* row = c + i * ldc;
    if (self == nullptr) {
      std::fill(row, row + p.n, 0.0f);
      continue;
    }
    const float* s = self_f + bi * p.self_strides[0] + i * p.self_strides[1];
    const int64_t sj = p.self_strides[2];
    for (int64_t j = 0; j < p.n; ++j) row[j] = beta * s[j * sj];
  }
  if (p.k > 0) {
    cblas_sgemm(CblasRowMajor, x.trans, y.trans, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                static_cast<float>(p.alpha), x.data, x.ld, y.data, y.ld, self != nullptr ? 1.0f : 0.0f, c,
                static_cast<int>(ldc));
  }
  if (p.act == Activation::None) return;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) c[i * ldc + j] = static_cast<float>(activate(p.act, c[i * ldc + j]));
  }
}

// Any other out: the product into a float32 buffer, then one pass that adds beta * self,
// activates and stores with out's dtype and strides.
void gemm_through_buffer(const GemmProblem& p, int64_t bi, const BlasOperand& x, const BlasOperand& y,
                         std::vector<float>& acc) {
  const ScalarType t = p.dtype;
  char* out = static_cast<char*>(p.out->data_ptr());
  const char* self = p.self != nullptr ? static_cast<const char*>(p.self->data_ptr()) : nullptr;
  acc.assign(static_cast<size_t>(p.m * p.n), 0.0f);  // k == 0: an empty sum
  if (p.k > 0) {
    cblas_sgemm(CblasRowMajor, x.trans, y.trans, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
                1.0f, x.data, x.ld, y.data, y.ld, 0.0f, acc.data(), static_cast<int>(p.n > 1 ? p.n : 1));
  }
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double v = p.alpha * static_cast<double>(acc[i * p.n + j]);
      if (self != nullptr) {
        v += p.beta * load_element(self, t, bi * p.self_strides[0] + i * p.self_strides[1] + j * p.self_strides[2]);
      }
      store_element(out, t, bi * p.out_strides[0] + i * p.out_strides[1] + j * p.out_strides[2], activate(p.act, v));
    }
  }
}

void gemm_blas(const GemmProblem& p) {
  const char* a = static_cast<const char*>(p.a->data_ptr());
  const char* b = static_cast<const char*>(p.b->data_ptr());
  const size_t es = element_size(p.dtype);
  const bool in_place = out_in_place(p);
  std::vector<float> pack_a, pack_b, acc;
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    BlasOperand x, y;
    if (p.k > 0) {
      x = operand(a + bi * p.a_strides[0] * es, p.dtype, p.m, p.k, p.a_strides[1], p.a_strides[2], pack_a);
      y = operand(b + bi * p.b_strides[0] * es, p.dtype, p.k, p.n, p.b_strides[1], p.b_strides[2], pack_b);
    }
    if (in_place) {
      gemm_into_out(p, bi, x, y);
    } else {
      gemm_through_buffer(p, bi, x, y, acc);
    }
  }
}

}  // namespace

Error gemm_cpu(const GemmProblem& p) noexcept {
  if (p.batch == 0 || p.m == 0 || p.n == 0) return Error::Ok;
  if (!fits_blas(p)) return gemm_cpu_reference(p);
  const CpuThreadScope threads;
  try {
    gemm_blas(p);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "no host memory to pack a %lld x %lld x %lld GEMM",
                          static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k));
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
