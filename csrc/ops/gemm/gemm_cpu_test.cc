// SPDX-License-Identifier: Apache-2.0
// The CPU GEMM on OpenBLAS gives the reference loops' values: every operand layout BLAS takes
// in place (row-major, transposed) and every one it must pack (strided, broadcast, float16,
// bfloat16), batched or not, with bias (broadcast too), alpha, beta, the activations, an
// empty sum (k = 0) and outputs BLAS writes itself or through a buffer (strided, half).
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/gemm/gemm_cpu.h"
#include "csrc/tensor/slim_tensor.h"

namespace slimcuda::ops {
namespace {

// A host buffer seen through explicit element strides (a GEMM operand's [batch, rows, cols]).
struct Operand {
  std::vector<char> bytes;
  std::unique_ptr<SlimTensor> tensor;
  int64_t strides[3] = {0, 0, 0};
};

// Values in [-1, 1) from a linear congruential sequence.
double value(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return static_cast<double>(seed >> 8) / static_cast<double>(1u << 23) - 1.0;
}

// `elements` elements of t filled with values, viewed with `strides`.
Operand make(ScalarType t, int64_t elements, const int64_t (&strides)[3], uint32_t seed) {
  Operand o;
  o.bytes.resize(static_cast<size_t>(elements > 0 ? elements : 1) * element_size(t));
  for (int64_t i = 0; i < elements; ++i) store_element(o.bytes.data(), t, i, value(seed));
  std::memcpy(o.strides, strides, sizeof(o.strides));
  o.tensor = std::make_unique<SlimTensor>(Storage::borrow(o.bytes.data(), o.bytes.size(), Device{DeviceType::CPU, 0}),
                                          std::vector<int64_t>{static_cast<int64_t>(o.bytes.size())},
                                          std::vector<int64_t>{1}, t, 0);
  return o;
}

enum class Layout { RowMajor, Transposed, Strided, Broadcast };

// Strides of a rows x cols operand (batch stride 0 for Broadcast) and its buffer's size.
int64_t layout(Layout l, int64_t batch, int64_t rows, int64_t cols, int64_t (&s)[3]) {
  switch (l) {
    case Layout::RowMajor:
      s[0] = rows * cols, s[1] = cols, s[2] = 1;
      return batch * rows * cols;
    case Layout::Transposed:
      s[0] = rows * cols, s[1] = 1, s[2] = rows;
      return batch * rows * cols;
    case Layout::Strided:  // every other column of a wider matrix: no unit stride
      s[0] = rows * cols * 2, s[1] = cols * 2, s[2] = 2;
      return batch * rows * cols * 2;
    case Layout::Broadcast:  // one matrix for every batch, each row the same
      s[0] = 0, s[1] = 0, s[2] = 1;
      return cols;
  }
  return 0;
}

struct Case {
  ScalarType dtype;
  int64_t batch, m, n, k;
  Layout a, b;
  bool bias, bias_row, out_transposed;
  double alpha, beta;
  Activation act;
};

void run(const Case& c) {
  SCOPED_TRACE(testing::Message() << "dtype " << static_cast<int>(c.dtype) << " batch " << c.batch << " m " << c.m
                                  << " n " << c.n << " k " << c.k << " a " << static_cast<int>(c.a) << " b "
                                  << static_cast<int>(c.b) << " bias " << c.bias << c.bias_row << " out_t "
                                  << c.out_transposed << " act " << static_cast<int>(c.act));
  int64_t as[3], bs[3], ss[3] = {0, 0, 0}, os[3];
  Operand a = make(c.dtype, layout(c.a, c.batch, c.m, c.k, as), as, 1);
  Operand b = make(c.dtype, layout(c.b, c.batch, c.k, c.n, bs), bs, 2);
  int64_t self_elements = 0;
  if (c.bias_row) {  // nn.Linear's bias: one row broadcast over rows and batches
    ss[2] = 1, self_elements = c.n;
  } else {
    self_elements = layout(Layout::RowMajor, c.batch, c.m, c.n, ss);
  }
  Operand self = make(c.dtype, self_elements, ss, 3);
  const int64_t out_elements = layout(c.out_transposed ? Layout::Transposed : Layout::RowMajor, c.batch, c.m, c.n, os);
  Operand out = make(c.dtype, out_elements, os, 4), want = make(c.dtype, out_elements, os, 4);
  GemmProblem p;
  p.batch = c.batch, p.m = c.m, p.n = c.n, p.k = c.k;
  p.dtype = c.dtype;
  p.a = a.tensor.get(), p.b = b.tensor.get(), p.self = c.bias ? self.tensor.get() : nullptr;
  std::memcpy(p.a_strides, a.strides, sizeof(as));
  std::memcpy(p.b_strides, b.strides, sizeof(bs));
  std::memcpy(p.self_strides, self.strides, sizeof(ss));
  std::memcpy(p.out_strides, out.strides, sizeof(os));
  p.alpha = c.alpha, p.beta = c.beta, p.act = c.act;
  p.out = want.tensor.get();
  ASSERT_EQ(gemm_cpu_reference(p), Error::Ok);
  p.out = out.tensor.get();
  ASSERT_EQ(gemm_cpu(p), Error::Ok);
  // Sums in another order (BLAS's blocks, float accumulation): float rounding per term of the
  // k; float16/bfloat16 then round that to their own precision, where the two may land one
  // unit in the last place apart.
  const double abs_tol = (c.dtype == ScalarType::Float ? 1e-6 : 1e-4) * static_cast<double>(c.k + 1);
  const double rel_tol = c.dtype == ScalarType::Float ? 1e-6 : c.dtype == ScalarType::Half ? 0x1p-10 : 0x1p-7;
  int64_t bad = 0;
  for (int64_t i = 0; i < out_elements; ++i) {
    const double got = load_element(out.bytes.data(), c.dtype, i), ref = load_element(want.bytes.data(), c.dtype, i);
    if (!(std::fabs(got - ref) <= abs_tol + rel_tol * std::fabs(ref)) && bad++ < 5) {
      ADD_FAILURE() << "element " << i << ": " << got << ", reference " << ref;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(GemmCpu, BlasMatchesTheReferenceForEveryLayout) {
  const Layout layouts[] = {Layout::RowMajor, Layout::Transposed, Layout::Strided, Layout::Broadcast};
  for (ScalarType t : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16}) {
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        run({t, 3, 7, 5, 9, la, lb, false, false, false, 1.0, 0.0, Activation::None});
        run({t, 1, 33, 17, 65, la, lb, true, true, false, 0.5, 2.0, Activation::None});
      }
    }
  }
}

TEST(GemmCpu, BiasAlphaBetaActivationsAndOutputs) {
  for (ScalarType t : {ScalarType::Float, ScalarType::BFloat16}) {
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu}) {
      for (bool out_t : {false, true}) {
        for (bool row : {false, true}) {
          run({t, 2, 16, 24, 32, Layout::RowMajor, Layout::Transposed, true, row, out_t, 1.5, -0.5, act});
        }
        run({t, 2, 16, 24, 32, Layout::Transposed, Layout::RowMajor, false, false, out_t, 1.0, 0.0, act});
      }
    }
  }
}

TEST(GemmCpu, EdgeShapes) {
  for (ScalarType t : {ScalarType::Float, ScalarType::Half}) {
    run({t, 2, 4, 3, 0, Layout::RowMajor, Layout::RowMajor, false, false, false, 1.0, 0.0, Activation::None});
    run({t, 2, 4, 3, 0, Layout::RowMajor, Layout::RowMajor, true, false, false, 1.0, 1.0, Activation::Relu});
    run({t, 1, 1, 1, 1, Layout::RowMajor, Layout::RowMajor, true, true, false, 1.0, 1.0, Activation::None});
    run({t, 1, 1, 257, 300, Layout::RowMajor, Layout::Transposed, true, true, false, 1.0, 1.0, Activation::None});
    run({t, 4, 129, 1, 64, Layout::Transposed, Layout::RowMajor, false, false, true, 1.0, 0.0, Activation::None});
  }
  // Nothing to compute: out is left alone.
  int64_t s[3] = {0, 0, 1};
  Operand a = make(ScalarType::Float, 1, s, 1);
  GemmProblem p;
  p.batch = 1, p.m = 0, p.n = 4, p.k = 4;
  p.a = p.b = p.out = a.tensor.get();
  const std::vector<char> before = a.bytes;
  EXPECT_EQ(gemm_cpu(p), Error::Ok);
  EXPECT_EQ(a.bytes, before);
}

}  // namespace
}  // namespace slimcuda::ops
