// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/gemm/gemm_cpu.h"  // gemm_cpu_reference

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/gemm/gemm_epilogue.h"

namespace slimcuda::ops {

Error gemm_cpu_reference(const GemmProblem& p) noexcept {
  const ScalarType t = p.dtype;
  const char* a = static_cast<const char*>(p.a->data_ptr());
  const char* b = static_cast<const char*>(p.b->data_ptr());
  char* out = static_cast<char*>(p.out->data_ptr());
  const char* self = p.self != nullptr ? static_cast<const char*>(p.self->data_ptr()) : nullptr;
  const bool float_acc = t != ScalarType::Float;
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double acc = 0.0;
        float facc = 0.0f;
        for (int64_t l = 0; l < p.k; ++l) {
          const double x = load_element(a, t, bi * p.a_strides[0] + i * p.a_strides[1] + l * p.a_strides[2]);
          const double y = load_element(b, t, bi * p.b_strides[0] + l * p.b_strides[1] + j * p.b_strides[2]);
          if (float_acc) {
            facc += static_cast<float>(x) * static_cast<float>(y);
          } else {
            acc += x * y;
          }
        }
        double v = p.alpha * (float_acc ? static_cast<double>(facc) : acc);
        if (self != nullptr) {
          v += p.beta * load_element(self, t, bi * p.self_strides[0] + i * p.self_strides[1] + j * p.self_strides[2]);
        }
        store_element(out, t, bi * p.out_strides[0] + i * p.out_strides[1] + j * p.out_strides[2], activate(p.act, v));
      }
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
