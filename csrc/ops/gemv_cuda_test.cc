// SPDX-License-Identifier: Apache-2.0
// The small-m GEMV under aoti_torch_cuda_mm_out / addmm_out / bmm_out / baddbmm_out /
// _addmm_activation: a Llama-shaped decode step's Linears (m 1, 3, 8) and the edges (n not
// a multiple of a block's rows, k = 8, bias, alpha/beta, strided out, batched, activations,
// and operands the GEMV must leave to cuBLASLt), each against a float64 reference computed
// here from the same float16/bfloat16 inputs, and with SLIMCUDA_GEMV off against on. Which
// problems take the GEMV (gemm_uses_gemv) is checked without a GPU.
#include <cuda_runtime_api.h>

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/gemm_cuda.h"
#include "csrc/ops/gemv_cuda.h"
#include "csrc/ops/op_args.h"
#include "csrc/ops/op_test_tensors.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch_ops.h"

namespace slimcuda::testing {
namespace {

enum class Out { Contiguous, Transposed, Padded };
enum class Operand { Aligned, XOffset, WOffset, XRowStride, WRowStride, WPaddedRows };
enum class Op { Mm, Addmm, Relu, Gelu };

struct Case {
  std::string name;
  int32_t dtype;
  int64_t batch, m, n, k;
  Op op = Op::Mm;
  double alpha = 1.0, beta = 1.0;
  Out out = Out::Contiguous;
  Operand operand = Operand::Aligned;
};

// What one call gave and what it should have given.
struct Outcome {
  std::vector<double> got, want, tol;
};

// The float64 result and its tolerance. The GEMV and cuBLASLt sum k products in float32 and
// round the result once: |got - want| <= eps * |want| (the rounding to float16/bfloat16 is
// at most half an ulp, 2^-12 or 2^-9 relative; eps is twice that) + 2^-16 * sum |terms|
// (float32 sums of k <= 8192 products drift by about sqrt(k) * 2^-24 * sum |terms| <=
// 2^-17.5 * sum |terms|, so twice that and more). One product of 8 elements lost or counted
// twice moves a k = 8192 output by ~0.9, thirty times the tolerance.
Outcome reference(const Case& c, const std::vector<double>& x, const std::vector<double>& w,
                  const std::vector<double>& bias) {
  Outcome o;
  const double eps = c.dtype == kF16 ? 0x1p-11 : 0x1p-8;
  const bool self = c.op != Op::Mm && c.beta != 0.0;
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        const double* xr = x.data() + (b * c.m + i) * c.k;
        const double* wr = w.data() + (b * c.n + j) * c.k;
        double sum = 0.0, mag = 0.0;
        for (int64_t l = 0; l < c.k; ++l) {
          sum += xr[l] * wr[l];
          mag += std::fabs(xr[l] * wr[l]);
        }
        double v = c.alpha * sum;
        mag *= std::fabs(c.alpha);
        if (self) {
          v += c.beta * bias[j];
          mag += std::fabs(c.beta * bias[j]);
        }
        if (c.op == Op::Relu) v = v > 0.0 ? v : 0.0;
        // GELU's tanh form, as cuBLASLt's epilogue and PyTorch's _addmm_activation compute it.
        if (c.op == Op::Gelu) v = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        o.want.push_back(v);
        o.tol.push_back(eps * std::fabs(v) + 0x1p-16 * mag + 1e-6);
      }
    }
  }
  return o;
}

// Runs c through the shim its op names, on the legacy default stream.
Outcome run(const Case& c, uint64_t seed) {
  const int64_t B = c.batch, m = c.m, n = c.n, k = c.k;
  const bool batched = B > 1;
  // x: [B,] m x k, possibly one element off 16-byte alignment or with an odd row stride.
  const int64_t x_off = c.operand == Operand::XOffset ? 1 : 0;
  const int64_t ldx = c.operand == Operand::XRowStride ? k + 1 : k;
  const int64_t ldw = c.operand == Operand::WRowStride ? k + 1 : c.operand == Operand::WPaddedRows ? k + 8 : k;
  const int64_t w_off = c.operand == Operand::WOffset ? 1 : 0;
  Tensor x_store = device_empty({B * m * ldx + x_off}, {1}, c.dtype);
  Tensor w_store = device_empty({B * n * ldw + w_off}, {1}, c.dtype);
  std::vector<int64_t> x_sizes = {m, k}, x_strides = {ldx, 1}, w_sizes = {n, k}, w_strides = {ldw, 1};
  std::vector<int64_t> wt_sizes = {k, n}, wt_strides = {1, ldw};
  std::vector<int64_t> out_sizes = {m, n};
  if (batched) {
    x_sizes.insert(x_sizes.begin(), B), x_strides.insert(x_strides.begin(), m * ldx);
    w_sizes.insert(w_sizes.begin(), B), w_strides.insert(w_strides.begin(), n * ldw);
    wt_sizes.insert(wt_sizes.begin(), B), wt_strides.insert(wt_strides.begin(), n * ldw);
    out_sizes.insert(out_sizes.begin(), B);
  }
  Tensor hx = host_tensor(x_sizes, contiguous(x_sizes), c.dtype, [&](int64_t j) { return uniform(seed, j); });
  Tensor hw = host_tensor(w_sizes, contiguous(w_sizes), c.dtype, [&](int64_t j) { return uniform(seed + 1, j); });
  Tensor hb = host_tensor({n}, {1}, c.dtype, [&](int64_t j) { return uniform(seed + 2, j); });
  Tensor x = view(x_store.get(), x_sizes, x_strides, x_off);
  Tensor w = view(w_store.get(), w_sizes, w_strides, w_off);
  copy_into(x.get(), hx.get());
  copy_into(w.get(), hw.get());
  Tensor bias = to_device(hb.get());
  // nn.Linear's weight as AOTInductor passes it: the transposed view wᵀ.
  Tensor wt = view(w_store.get(), wt_sizes, wt_strides, w_off);

  // out: contiguous, a transposed view (column-major [m, n]) or rows padded by 3.
  std::vector<int64_t> out_store_sizes = {B * m * (n + 3)}, out_strides = contiguous(out_sizes);
  if (c.out == Out::Transposed) {
    out_strides = batched ? std::vector<int64_t>{m * n, 1, m} : std::vector<int64_t>{1, m};
  } else if (c.out == Out::Padded) {
    out_strides = batched ? std::vector<int64_t>{m * (n + 3), n + 3, 1} : std::vector<int64_t>{n + 3, 1};
  }
  Tensor out_store = device_empty(out_store_sizes, {1}, c.dtype);
  Tensor out = view(out_store.get(), out_sizes, out_strides, 0);
  Tensor activation_out;
  int32_t code = -1;
  switch (c.op) {
    case Op::Mm:
      code = batched ? SLIMCUDA_SHIM(aoti_torch_cuda_bmm_out)(out.get(), x.get(), wt.get())
                     : SLIMCUDA_SHIM(aoti_torch_cuda_mm_out)(out.get(), x.get(), wt.get());
      break;
    case Op::Addmm:
      code = batched
                 ? SLIMCUDA_SHIM(aoti_torch_cuda_baddbmm_out)(out.get(), bias.get(), x.get(), wt.get(), c.beta, c.alpha)
                 : SLIMCUDA_SHIM(aoti_torch_cuda_addmm_out)(out.get(), bias.get(), x.get(), wt.get(), c.beta, c.alpha);
      break;
    case Op::Relu:
    case Op::Gelu: {
      AtenTensorHandle h = nullptr;
      code = SLIMCUDA_SHIM(aoti_torch_cuda__addmm_activation)(bias.get(), x.get(), wt.get(), c.beta, c.alpha,
                                                              c.op == Op::Gelu ? 1 : 0, &h);
      activation_out.reset(h);
      break;
    }
  }
  EXPECT_EQ(code, 0) << last_error_message();
  Outcome o = reference(c, values(hx.get()), values(hw.get()), values(hb.get()));
  if (code == 0) o.got = values(activation_out != nullptr ? activation_out.get() : out.get());
  return o;
}

// Elements off the reference (the first few reported).
int64_t count_off(const Outcome& o, const std::string& what) {
  EXPECT_EQ(o.got.size(), o.want.size()) << what;
  int64_t off = 0;
  for (size_t i = 0; i < o.got.size() && i < o.want.size(); ++i) {
    if (std::fabs(o.got[i] - o.want[i]) <= o.tol[i]) continue;  // NaN counts as off
    if (++off <= 5) ADD_FAILURE() << what << ": element " << i << " = " << o.got[i] << ", want " << o.want[i];
  }
  return off;
}

const char* dtype_name(int32_t dtype) { return dtype == kF16 ? "f16" : "bf16"; }

class GemvCuda : public ::testing::Test {
 protected:
  void SetUp() override { SLIMCUDA_REQUIRE_GPU_OR_SKIP(); }
  void TearDown() override { ops::set_gemv_enabled(true); }

  // c on the GEMV, then on cuBLASLt (SLIMCUDA_GEMV off): both the reference's values, and
  // within the sum of their tolerances of each other.
  static void check_both_paths(const Case& c, uint64_t seed) {
    SCOPED_TRACE(c.name);
    ops::set_gemv_enabled(true);
    const Outcome on = run(c, seed);
    EXPECT_EQ(count_off(on, c.name + " (GEMV on)"), 0);
    ops::set_gemv_enabled(false);
    const Outcome off = run(c, seed);
    ops::set_gemv_enabled(true);
    EXPECT_EQ(count_off(off, c.name + " (GEMV off)"), 0);
    ASSERT_EQ(on.got.size(), off.got.size());
    int64_t apart = 0;
    for (size_t i = 0; i < on.got.size(); ++i) {
      if (!(std::fabs(on.got[i] - off.got[i]) <= 2 * on.tol[i]) && ++apart <= 5) {
        ADD_FAILURE() << c.name << ": element " << i << " GEMV " << on.got[i] << ", cuBLASLt " << off.got[i];
      }
    }
  }
};

TEST_F(GemvCuda, DecoderLinearsMatchTheFloat64Reference) {
  // A Llama-shaped decoder (d 2048, MLP 8192, vocab 32000): fused QKV, attention output,
  // MLP up (and gate), MLP down, the LM head; batch 1, 3 and 8 decode steps.
  const std::pair<int64_t, int64_t> nk[] = {{6144, 2048}, {2048, 2048}, {8192, 2048}, {2048, 8192}, {32000, 2048}};
  uint64_t seed = 10;
  for (int32_t dtype : {kBF16, kF16}) {
    for (int64_t m : {1, 3, 8}) {
      for (auto [n, k] : nk) {
        Case c{std::string(dtype_name(dtype)) + "_m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" +
                   std::to_string(k),
               dtype,
               1,
               m,
               n,
               k};
        SCOPED_TRACE(c.name);
        EXPECT_EQ(count_off(run(c, seed += 3), c.name), 0);
      }
    }
  }
}

TEST_F(GemvCuda, EdgeShapesMatchTheFloat64Reference) {
  // n below, at and past a block's rows (1 to 16 depending on m), k from one vector up, every m.
  uint64_t seed = 100;
  for (int32_t dtype : {kBF16, kF16}) {
    for (int64_t m : {1, 2, 3, 4, 5, 7, 8}) {
      for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {5, 8}, {33, 24}, {1001, 264}, {17, 4096}}) {
        Case c{std::string(dtype_name(dtype)) + "_m" + std::to_string(m) + "_n" + std::to_string(n) + "_k" +
                   std::to_string(k),
               dtype,
               1,
               m,
               n,
               k};
        SCOPED_TRACE(c.name);
        EXPECT_EQ(count_off(run(c, seed += 3), c.name), 0);
      }
    }
  }
}

TEST_F(GemvCuda, BiasAlphaBetaStridedOutputAndActivations) {
  std::vector<Case> cases = {
      {"addmm_bias", kBF16, 1, 1, 2048, 2048, Op::Addmm},
      {"addmm_bias_m8", kF16, 1, 8, 1000, 512, Op::Addmm},
      {"addmm_alpha2_beta_half", kBF16, 1, 3, 300, 256, Op::Addmm, 2.0, 0.5},
      {"addmm_beta0_ignores_self", kF16, 1, 2, 64, 64, Op::Addmm, 1.0, 0.0},
      {"mm_out_transposed", kBF16, 1, 3, 130, 128, Op::Mm, 1.0, 1.0, Out::Transposed},
      {"mm_out_padded_rows", kF16, 1, 8, 77, 64, Op::Mm, 1.0, 1.0, Out::Padded},
      {"addmm_out_transposed", kF16, 1, 1, 2048, 2048, Op::Addmm, 1.0, 1.0, Out::Transposed},
      {"relu", kBF16, 1, 4, 256, 128, Op::Relu},
      {"gelu", kF16, 1, 5, 256, 128, Op::Gelu},
      {"weight_rows_padded", kBF16, 1, 2, 100, 64, Op::Mm, 1.0, 1.0, Out::Contiguous, Operand::WPaddedRows},
      {"bmm", kBF16, 3, 2, 40, 64},
      {"baddbmm_transposed_out", kF16, 4, 8, 33, 128, Op::Addmm, 1.0, 1.0, Out::Transposed},
  };
  uint64_t seed = 500;
  for (const Case& c : cases) check_both_paths(c, seed += 3);
}

TEST_F(GemvCuda, OperandsTheGemvLeavesToCublasLtAreStillRight) {
  // x or w one element off 16-byte alignment, a row stride that is not a multiple of 8, a k
  // that is not (k = 12), m = 9: cuBLASLt computes them, to the same reference.
  std::vector<Case> cases = {
      {"x_misaligned", kBF16, 1, 1, 256, 128, Op::Mm, 1.0, 1.0, Out::Contiguous, Operand::XOffset},
      {"w_misaligned", kF16, 1, 3, 256, 128, Op::Addmm, 1.0, 1.0, Out::Contiguous, Operand::WOffset},
      {"x_row_stride_odd", kBF16, 1, 4, 64, 64, Op::Mm, 1.0, 1.0, Out::Contiguous, Operand::XRowStride},
      {"w_row_stride_odd", kF16, 1, 2, 64, 64, Op::Mm, 1.0, 1.0, Out::Contiguous, Operand::WRowStride},
      {"k_not_multiple_of_8", kBF16, 1, 2, 64, 12},
      {"m9", kBF16, 1, 9, 64, 64, Op::Addmm},
  };
  uint64_t seed = 900;
  for (const Case& c : cases) check_both_paths(c, seed += 3);
}

TEST_F(GemvCuda, PendingLaunchErrorIsReturnedNotIgnored) {
  // The launch's cudaGetLastError is checked: an error pending when the kernel is launched
  // (here from a failed cudaSetDevice just before) comes back as Internal, and is cleared.
  Tensor x = device_empty({1, 8}, {8, 1}, kBF16), w = device_empty({4, 8}, {8, 1}, kBF16);
  Tensor out = device_empty({1, 4}, {4, 1}, kBF16);
  void *xp = nullptr, *wp = nullptr, *op = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(x.get(), &xp), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(w.get(), &wp), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(out.get(), &op), 0);
  ops::GemvArgs a;
  a.m = 1, a.n = 4, a.k = 8, a.x = xp, a.w = wp, a.w_row_stride = 8, a.out = op;
  a.out_strides[1] = 4, a.out_strides[2] = 1;
  ASSERT_TRUE(ops::gemv_takes(a));
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_NE(cudaSetDevice(1 << 20), cudaSuccess);
  EXPECT_EQ(ops::launch_gemv(a, device, nullptr, "gemv_test"), Error::Internal);
  EXPECT_NE(std::string(last_error_message()).find("cudaGetLastError"), std::string::npos) << last_error_message();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error is cleared, not left for the next call";
  EXPECT_EQ(ops::launch_gemv(a, device, nullptr, "gemv_test"), Error::Ok) << last_error_message();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Which problems take the GEMV: decided from sizes, strides, dtypes and addresses only, so
// checked on CPU tensors (no GPU needed).
class GemvRouting : public ::testing::Test {
 protected:
  bool uses_gemv(int32_t dtype, int64_t m, int64_t n, int64_t k, int64_t x_off, int64_t ldx, int64_t ldw,
                 bool w_transposed = true, bool bias = false) {
    Tensor xs = host_tensor({m * ldx + 8}, {1}, dtype, [](int64_t) { return 0.0; });
    Tensor ws = host_tensor({n * ldw + 8}, {1}, dtype, [](int64_t) { return 0.0; });
    Tensor x = view(xs.get(), {m, k}, {ldx, 1}, x_off);
    Tensor wt = w_transposed ? view(ws.get(), {k, n}, {1, ldw}, 0) : view(ws.get(), {k, n}, {n, 1}, 0);
    Tensor out = host_tensor({m, n}, {n, 1}, dtype, [](int64_t) { return 0.0; });
    Tensor b = host_tensor({n}, {1}, dtype, [](int64_t) { return 0.0; });
    ops::GemmProblem p;
    EXPECT_EQ(ops::check_gemm("routing", DeviceType::CPU, false, out.get(), bias ? b.get() : nullptr, x.get(), wt.get(),
                              1.0, 1.0, &p),
              Error::Ok)
        << last_error_message();
    return ops::gemm_uses_gemv(p);
  }
};

TEST_F(GemvRouting, PlainSmallMLinearsTakeTheGemv) {
  EXPECT_TRUE(uses_gemv(kBF16, 1, 2048, 2048, 0, 2048, 2048));
  EXPECT_TRUE(uses_gemv(kF16, 8, 32000, 2048, 0, 2048, 2048));
  EXPECT_TRUE(uses_gemv(kBF16, 3, 7, 8, 0, 8, 8, true, true));  // addmm with a [n] bias
  EXPECT_TRUE(uses_gemv(kBF16, 2, 100, 64, 0, 64, 72));         // weight rows padded to 72
  EXPECT_TRUE(uses_gemv(kBF16, 1, 64, 64, 0, 65, 64));          // m = 1: x's row stride unused
}

TEST_F(GemvRouting, EverythingElseStaysOnCublasLt) {
  EXPECT_FALSE(uses_gemv(kF32, 1, 64, 64, 0, 64, 64));          // float32
  EXPECT_FALSE(uses_gemv(kBF16, 9, 64, 64, 0, 64, 64));         // m > 8
  EXPECT_FALSE(uses_gemv(kBF16, 1, 64, 12, 0, 12, 12));         // k % 8 != 0
  EXPECT_FALSE(uses_gemv(kBF16, 1, 64, 64, 1, 64, 64));         // x misaligned
  EXPECT_FALSE(uses_gemv(kBF16, 2, 64, 64, 0, 65, 64));         // x rows misaligned
  EXPECT_FALSE(uses_gemv(kBF16, 1, 64, 64, 0, 64, 65));         // w rows misaligned
  EXPECT_FALSE(uses_gemv(kBF16, 1, 64, 64, 0, 64, 64, false));  // w read along n (a [k, n] matrix)
}

}  // namespace
}  // namespace slimcuda::testing
