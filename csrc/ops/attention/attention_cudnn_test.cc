// SPDX-License-Identifier: Apache-2.0
// attention_cudnn (cuDNN's fused SDPA) against the float64 reference written from the
// definition (csrc/ops/testing/sdpa_reference.h), computed from the same rounded
// float16/bfloat16 inputs and from the case's own description, never from the problem handed
// to cuDNN: scale, causal (upper-left), additive bias (full, broadcast, unaligned rows),
// boolean masks, grouped-query heads, logsumexp, PyTorch's [B,S,H,D]-permuted strides; the
// NotSupported contract (no last error left behind); the per-thread graph cache; capture into
// a CUDA graph (no synchronization or cudaMalloc).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention/attention_cudnn.h"
#include "csrc/ops/testing/sdpa_reference.h"
#include "csrc/tensor/convert.h"
#include "csrc/tensor/slim_tensor.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::test {
namespace {

using ops::AttentionProblem;
using testing::SdpaReference;

enum class Layout { BHSD, BSHD };  // storage order; the 4-D view is always [B,H,S,D]
enum class Mask { None, Full, KeyPadding, Bool, Float32 };

// PyTorch's default scale, 1/sqrt(head_dim), for the head dims used here. attention_cudnn takes
// the scale resolved (attention_args resolves the default, checked against PyTorch's values in
// testdata/ops.json), so the cases state it instead of recomputing it as the library does.
constexpr double kScaleD64 = 0.125;
constexpr double kScaleD128 = 0.08838834764831845;  // 2^-3.5

struct Case {
  const char* name;
  ScalarType dtype;
  int64_t b, hq, hkv, sq, skv, d;
  Layout layout;
  bool causal;
  double scale;  // given to cuDNN and to the reference as it is
  Mask mask;
  bool lse;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

// Deterministic values in [-1, 1].
struct Lcg {
  uint64_t s;
  double next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((s >> 11) & 0xFFFFF) / static_cast<double>(0xFFFFF) * 2.0 - 1.0;
  }
};

uint16_t to_bits(double v, ScalarType t) {
  const float f = static_cast<float>(v);
  return t == ScalarType::Half ? convert::float_to_half(f) : convert::float_to_bfloat16(f);
}
double from_bits(uint16_t h, ScalarType t) {
  return t == ScalarType::Half ? convert::half_to_float(h) : convert::bfloat16_to_float(h);
}

struct TensorDeleter {
  void operator()(SlimTensor* t) const { delete t; }
};
using Owned = std::unique_ptr<SlimTensor, TensorDeleter>;

// Strides of the [d0,d1,d2,d3] view over storage laid out as `layout`.
std::vector<int64_t> view_strides(Layout layout, int64_t b, int64_t h, int64_t s, int64_t d) {
  (void)b;
  if (layout == Layout::BHSD) return {h * s * d, s * d, d, 1};
  return {s * h * d, d, h * d, 1};  // storage [B,S,H,D], viewed as [B,H,S,D]
}

int64_t span(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t i = 0; i < sizes.size(); ++i) last += (sizes[i] - 1) * strides[i];
  return last + 1;
}

// A CUDA tensor (device 0) with these sizes and strides, its storage filled from `host`
// (span elements of 2 bytes, or 1 for bool, or 4 for float).
Owned device_tensor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, ScalarType t,
                    const void* host, const StreamContext& ctx) {
  EmptySpec spec;
  EXPECT_EQ(check_empty(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), static_cast<int32_t>(t),
                        static_cast<int32_t>(DeviceType::CUDA), 0, false, &spec),
            Error::Ok)
      << last_error_message();
  SlimTensor* out = nullptr;
  EXPECT_EQ(empty_strided(spec, ctx, &out), Error::Ok) << last_error_message();
  if (out != nullptr && host != nullptr) {
    EXPECT_EQ(cudaMemcpy(out->data_ptr(), host, span(sizes, strides) * out->element_size(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  return Owned(out);
}

struct Problem {
  AttentionProblem p;
  Owned q, k, v, bias, out, lse;
  std::vector<double> hq, hk, hv, hbias;  // rounded values, by view index [b][h][s][d]
  std::vector<uint8_t> hmask;             // Bool: [sq][skv]
};

// Builds the problem on the GPU and the rounded host copies the reference reads.
void make_problem(const Case& c, const StreamContext& ctx, Problem* pr) {
  AttentionProblem& p = pr->p;
  p.batch = c.b, p.heads_q = c.hq, p.heads_kv = c.hkv, p.seq_q = c.sq, p.seq_kv = c.skv;
  p.head_dim = p.head_dim_v = c.d;
  p.dtype = c.dtype;
  p.device = 0;
  p.causal = c.causal;
  p.scale = c.scale;
  Lcg rng{0x5eed + static_cast<uint64_t>(c.sq * 131 + c.skv)};

  auto fill = [&](int64_t h, int64_t s, std::vector<double>* vals, std::vector<int64_t>* strides, Owned* t) {
    *strides = view_strides(c.layout, c.b, h, s, c.d);
    const std::vector<int64_t> sizes = {c.b, h, s, c.d};
    std::vector<uint16_t> storage(span(sizes, *strides), 0);
    vals->assign(c.b * h * s * c.d, 0.0);
    for (int64_t i0 = 0; i0 < c.b; ++i0)
      for (int64_t i1 = 0; i1 < h; ++i1)
        for (int64_t i2 = 0; i2 < s; ++i2)
          for (int64_t i3 = 0; i3 < c.d; ++i3) {
            const uint16_t bits = to_bits(rng.next(), c.dtype);
            storage[i0 * (*strides)[0] + i1 * (*strides)[1] + i2 * (*strides)[2] + i3] = bits;
            (*vals)[((i0 * h + i1) * s + i2) * c.d + i3] = from_bits(bits, c.dtype);
          }
    *t = device_tensor(sizes, *strides, c.dtype, storage.data(), ctx);
  };
  std::vector<int64_t> st;
  fill(c.hq, c.sq, &pr->hq, &st, &pr->q);
  std::copy(st.begin(), st.end(), p.q_strides);
  fill(c.hkv, c.skv, &pr->hk, &st, &pr->k);
  std::copy(st.begin(), st.end(), p.k_strides);
  fill(c.hkv, c.skv, &pr->hv, &st, &pr->v);
  std::copy(st.begin(), st.end(), p.v_strides);
  p.q = pr->q.get(), p.k = pr->k.get(), p.v = pr->v.get();

  // The output as PyTorch's op returns it: the same layout as q.
  st = view_strides(c.layout, c.b, c.hq, c.sq, c.d);
  pr->out = device_tensor({c.b, c.hq, c.sq, c.d}, st, c.dtype, nullptr, ctx);
  std::copy(st.begin(), st.end(), p.out_strides);
  p.out = pr->out.get();
  EXPECT_EQ(cudaMemset(p.out->data_ptr(), 0xFF, span({c.b, c.hq, c.sq, c.d}, st) * 2), cudaSuccess);  // NaNs

  if (c.lse) {
    // [B, H, round_up(Sq, 32)] as PyTorch's efficient attention allocates it.
    const int64_t padded = (c.sq + 31) / 32 * 32;
    pr->lse = device_tensor({c.b, c.hq, padded}, {c.hq * padded, padded, 1}, ScalarType::Float, nullptr, ctx);
    EXPECT_EQ(cudaMemset(pr->lse->data_ptr(), 0xFF, c.b * c.hq * padded * 4), cudaSuccess);
    p.logsumexp = pr->lse.get();
    p.lse_strides[0] = c.hq * padded, p.lse_strides[1] = padded, p.lse_strides[2] = 1;
  }

  if (c.mask == Mask::Full) {
    std::vector<uint16_t> storage(c.b * c.hq * c.sq * c.skv);
    pr->hbias.resize(storage.size());
    for (size_t i = 0; i < storage.size(); ++i) {
      storage[i] = to_bits(rng.next() * 2.0, c.dtype);
      pr->hbias[i] = from_bits(storage[i], c.dtype);
    }
    const std::vector<int64_t> sizes = {c.b, c.hq, c.sq, c.skv};
    const std::vector<int64_t> strides = {c.hq * c.sq * c.skv, c.sq * c.skv, c.skv, 1};
    pr->bias = device_tensor(sizes, strides, c.dtype, storage.data(), ctx);
    std::copy(strides.begin(), strides.end(), p.bias_strides);
    p.bias_dtype = c.dtype;
  } else if (c.mask == Mask::Float32) {
    // A float32 [1, 1, Sq, Skv] bias with float16/bfloat16 q (PyTorch allows it).
    std::vector<float> storage(c.sq * c.skv);
    pr->hbias.resize(storage.size());
    for (size_t i = 0; i < storage.size(); ++i) {
      storage[i] = static_cast<float>(rng.next() * 2.0);
      pr->hbias[i] = storage[i];
    }
    pr->bias = device_tensor({1, 1, c.sq, c.skv}, {c.sq * c.skv, c.sq * c.skv, c.skv, 1}, ScalarType::Float,
                             storage.data(), ctx);
    p.bias_strides[0] = 0, p.bias_strides[1] = 0, p.bias_strides[2] = c.skv, p.bias_strides[3] = 1;
    p.bias_dtype = ScalarType::Float;
  } else if (c.mask == Mask::KeyPadding) {
    // [B, 1, 1, Skv]: the last quarter of each batch's keys padded out with a large negative.
    std::vector<uint16_t> storage(c.b * c.skv);
    pr->hbias.resize(storage.size());
    for (int64_t i = 0; i < c.b; ++i)
      for (int64_t j = 0; j < c.skv; ++j) {
        const double v = j >= c.skv - (c.skv / 4) * (i + 1) / c.b ? -10000.0 : 0.0;
        storage[i * c.skv + j] = to_bits(v, c.dtype);
        pr->hbias[i * c.skv + j] = from_bits(storage[i * c.skv + j], c.dtype);
      }
    pr->bias = device_tensor({c.b, 1, 1, c.skv}, {c.skv, c.skv, c.skv, 1}, c.dtype, storage.data(), ctx);
    p.bias_strides[0] = c.skv, p.bias_strides[1] = 0, p.bias_strides[2] = 0, p.bias_strides[3] = 1;
    p.bias_dtype = c.dtype;
  } else if (c.mask == Mask::Bool) {
    // [Sq, Skv] shared by every batch and head; each row keeps its own key and a few more.
    pr->hmask.resize(c.sq * c.skv);
    for (int64_t i = 0; i < c.sq; ++i)
      for (int64_t j = 0; j < c.skv; ++j) pr->hmask[i * c.skv + j] = (j == i % c.skv) || rng.next() > 0.3;
    pr->bias = device_tensor({c.sq, c.skv}, {c.skv, 1}, ScalarType::Bool, pr->hmask.data(), ctx);
    p.bias_strides[0] = 0, p.bias_strides[1] = 0, p.bias_strides[2] = c.skv, p.bias_strides[3] = 1;
    p.bias_dtype = ScalarType::Bool;
  }
  p.bias = pr->bias.get();
}

// The float64 reference for c: its sizes, scale, causality and mask from the case, its values
// from the rounded host copies (the bias and mask in the layouts make_problem gave them).
SdpaReference reference_for(const Case& c, const Problem& pr) {
  SdpaReference r;
  r.batch = c.b, r.heads_q = c.hq, r.heads_kv = c.hkv, r.seq_q = c.sq, r.seq_kv = c.skv;
  r.head_dim = r.head_dim_v = c.d;
  r.q = pr.hq, r.k = pr.hk, r.v = pr.hv;
  r.scale = c.scale;
  r.causal = c.causal;
  int64_t* st = r.bias_strides;
  switch (c.mask) {
    case Mask::Full:  // [B, Hq, Sq, Skv]
      r.bias = pr.hbias;
      st[0] = c.hq * c.sq * c.skv, st[1] = c.sq * c.skv, st[2] = c.skv, st[3] = 1;
      break;
    case Mask::KeyPadding:  // [B, Skv]
      r.bias = pr.hbias;
      st[0] = c.skv, st[3] = 1;
      break;
    case Mask::Float32:  // [Sq, Skv]
      r.bias = pr.hbias;
      st[2] = c.skv, st[3] = 1;
      break;
    case Mask::Bool:  // [Sq, Skv]
      r.mask = pr.hmask;
      r.mask_strides[2] = c.skv, r.mask_strides[3] = 1;
      break;
    case Mask::None:
      break;
  }
  return r;
}

class AttentionCudnnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SLIMCUDA_REQUIRE_GPU_OR_SKIP();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    }
  }
  // attention_cudnn that must run (a NotSupported here is a failure with its reason).
  void run(const AttentionProblem& p) {
    const Error e = ops::attention_cudnn(p, ctx());
    ASSERT_EQ(e, Error::Ok) << last_error_message() << " / " << ops::attention_cudnn_unsupported_reason();
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  }
  [[nodiscard]] StreamContext ctx() const { return StreamContext::selected(stream_, 0); }
  cudaStream_t stream_ = nullptr;
};

class AttentionCudnnMatches : public AttentionCudnnTest, public ::testing::WithParamInterface<Case> {};

TEST_P(AttentionCudnnMatches, HostReference) {
  const Case& c = GetParam();
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  run(pr.p);

  const SdpaReference ref = reference_for(c, pr);
  ASSERT_EQ(ref.check(), "");
  std::vector<double> want, want_lse;
  ref.all(&want, &want_lse);
  const std::vector<int64_t> st(pr.p.out_strides, pr.p.out_strides + 4);
  std::vector<uint16_t> got(span({c.b, c.hq, c.sq, c.d}, st));
  ASSERT_EQ(cudaMemcpy(got.data(), pr.p.out->data_ptr(), got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  // cuDNN multiplies the softmax probabilities, rounded to the I/O type, with V.
  const double tol = c.dtype == ScalarType::Half ? 4e-3 : 2.5e-2;
  int bad = 0;
  double worst = 0;
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h)
      for (int64_t i = 0; i < c.sq; ++i)
        for (int64_t x = 0; x < c.d; ++x) {
          const double g = from_bits(got[b * st[0] + h * st[1] + i * st[2] + x], c.dtype);
          const double w = want[((b * c.hq + h) * c.sq + i) * c.d + x];
          const double err = std::fabs(g - w);
          worst = std::max(worst, std::isnan(g) ? INFINITY : err);
          if (!(err <= tol + tol * std::fabs(w)) && bad++ < 5) {
            ADD_FAILURE() << "out[" << b << "," << h << "," << i << "," << x << "] = " << g << ", want " << w;
          }
        }
  EXPECT_EQ(bad, 0) << "worst abs error " << worst;

  if (c.lse) {
    const int64_t padded = pr.p.lse_strides[1];
    std::vector<float> lse(c.b * c.hq * padded);
    ASSERT_EQ(cudaMemcpy(lse.data(), pr.p.logsumexp->data_ptr(), lse.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    int lse_bad = 0;
    for (int64_t r = 0; r < c.b * c.hq; ++r)
      for (int64_t i = 0; i < c.sq; ++i) {
        const double g = lse[r * padded + i], w = want_lse[r * c.sq + i];
        if (!(std::fabs(g - w) <= 2e-3 + 1e-3 * std::fabs(w)) && lse_bad++ < 5) {
          ADD_FAILURE() << "logsumexp[" << r << "," << i << "] = " << g << ", want " << w << " (natural log)";
        }
      }
    EXPECT_EQ(lse_bad, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionCudnnMatches,
                         ::testing::Values(Case{"f16_bhsd_d64", ScalarType::Half, 2, 4, 4, 128, 128, 64, Layout::BHSD,
                                                false, kScaleD64, Mask::None, false},
                                           Case{"bf16_bshd_d128_causal_scale_lse", ScalarType::BFloat16, 2, 3, 3, 77,
                                                160, 128, Layout::BSHD, true, 0.3, Mask::None, true},
                                           Case{"f16_bshd_d64_full_bias_lse", ScalarType::Half, 2, 2, 2, 64, 96, 64,
                                                Layout::BSHD, false, kScaleD64, Mask::Full, true},
                                           Case{"bf16_d128_key_padding_causal", ScalarType::BFloat16, 2, 2, 2, 96, 96,
                                                128, Layout::BHSD, true, kScaleD128, Mask::KeyPadding, false},
                                           Case{"f16_d64_bool_mask", ScalarType::Half, 1, 2, 2, 50, 70, 64,
                                                Layout::BSHD, false, kScaleD64, Mask::Bool, false},
                                           Case{"f16_unaligned_bias_rows", ScalarType::Half, 1, 2, 2, 33, 100, 64,
                                                Layout::BHSD, false, 0.125, Mask::Full, false},
                                           Case{"bf16_gqa_causal", ScalarType::BFloat16, 1, 8, 2, 256, 256, 64,
                                                Layout::BSHD, true, kScaleD64, Mask::None, true},
                                           Case{"f16_d128_sq_gt_skv_causal", ScalarType::Half, 1, 2, 2, 100, 40, 128,
                                                Layout::BSHD, true, kScaleD128, Mask::None, false}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST_F(AttentionCudnnTest, SecondCallReusesTheGraph) {
  Case c{"reuse", ScalarType::Half, 1, 2, 2, 64, 64, 64, Layout::BSHD, true, kScaleD64, Mask::None, false};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  const ops::AttentionCudnnStats before = ops::attention_cudnn_stats();
  run(pr.p);
  const ops::AttentionCudnnStats first = ops::attention_cudnn_stats();
  EXPECT_EQ(first.graphs_built, before.graphs_built + 1);
  run(pr.p);
  const ops::AttentionCudnnStats second = ops::attention_cudnn_stats();
  EXPECT_EQ(second.graphs_built, first.graphs_built) << "the same shape must reuse the cached graph";
  EXPECT_EQ(second.executions, first.executions + 1);
  // Another scale is another graph (it is baked into the plan).
  pr.p.scale = 0.5;
  run(pr.p);
  EXPECT_EQ(ops::attention_cudnn_stats().graphs_built, second.graphs_built + 1);
}

TEST_F(AttentionCudnnTest, EachThreadBuildsItsOwnGraph) {
  Case c{"threads", ScalarType::BFloat16, 1, 2, 2, 64, 80, 64, Layout::BSHD, false, kScaleD64, Mask::None, true};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  run(pr.p);
  std::vector<uint16_t> here(span({c.b, c.hq, c.sq, c.d}, pr.p.out->strides()));
  ASSERT_EQ(cudaMemcpy(here.data(), pr.p.out->data_ptr(), here.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemset(pr.p.out->data_ptr(), 0, here.size() * 2), cudaSuccess);

  // Another thread, its own stream: a cache (and cuDNN handle) of its own, the same result.
  Error e = Error::Internal;
  ops::AttentionCudnnStats other;
  std::thread t([&] {
    cudaSetDevice(0);
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
    e = ops::attention_cudnn(pr.p, StreamContext::selected(s, 0));
    cudaStreamSynchronize(s);
    other = ops::attention_cudnn_stats();
    cudaStreamDestroy(s);
  });
  t.join();
  ASSERT_EQ(e, Error::Ok);
  EXPECT_EQ(other.graphs_built, 1u);
  EXPECT_EQ(other.executions, 1u);
  std::vector<uint16_t> there(here.size());
  ASSERT_EQ(cudaMemcpy(there.data(), pr.p.out->data_ptr(), there.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(here.data(), there.data(), here.size() * 2), 0);
}

TEST_F(AttentionCudnnTest, RejectedShapeIsNotSupportedQuietlyAndRemembered) {
  // head_dim 12 is not a multiple of 8: cuDNN's SDPA rejects it, so it is declined before
  // cuDNN is asked at all (asking crashed inside cuDNN 9.19 on the H200): no graph is built
  // or rejected by cuDNN, the answer is the same every time, and the last error untouched.
  Case c{"reject", ScalarType::Half, 1, 1, 1, 16, 16, 12, Layout::BHSD, false, 0.25, Mask::None, false};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  (void)set_last_error(Error::InvalidArgument, "sentinel %d", 7);
  const ops::AttentionCudnnStats before = ops::attention_cudnn_stats();
  EXPECT_EQ(ops::attention_cudnn(pr.p, ctx()), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "slimcuda: sentinel 7");
  EXPECT_NE(std::string(ops::attention_cudnn_unsupported_reason()).find("multiples of 8"), std::string::npos)
      << ops::attention_cudnn_unsupported_reason();
  EXPECT_EQ(ops::attention_cudnn(pr.p, ctx()), Error::NotSupported);
  EXPECT_EQ(ops::attention_cudnn_stats().graphs_built, before.graphs_built);
  EXPECT_EQ(ops::attention_cudnn_stats().rejected, before.rejected) << "cuDNN was never asked";
  EXPECT_STREQ(last_error_message(), "slimcuda: sentinel 7");
  clear_last_error();
  EXPECT_EQ(ops::attention_cudnn(pr.p, ctx()), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "");
}

TEST_F(AttentionCudnnTest, Float32BiasWith16BitAttentionIsLeftToTheKernel) {
  Case c{"f32_bias", ScalarType::BFloat16, 1, 2, 2, 32, 48, 64, Layout::BSHD, false, kScaleD64, Mask::Float32, false};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  (void)set_last_error(Error::InvalidArgument, "sentinel");
  EXPECT_EQ(ops::attention_cudnn(pr.p, ctx()), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "slimcuda: sentinel");
  EXPECT_NE(std::string(ops::attention_cudnn_unsupported_reason()).find("float32 bias"), std::string::npos)
      << ops::attention_cudnn_unsupported_reason();
}

TEST_F(AttentionCudnnTest, MisalignedOperandIsNotSupported) {
  Case c{"misaligned", ScalarType::Half, 1, 1, 1, 16, 16, 64, Layout::BHSD, false, kScaleD64, Mask::None, false};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  // A view of q one element into its storage: 2 bytes off the 16-byte alignment.
  SlimTensor* view = nullptr;
  const int64_t one[4] = {1, 1, 1, 1};
  ASSERT_EQ(reinterpret(*pr.q, 4, one, one, 1, &view), Error::Ok) << last_error_message();
  Owned owned(view);
  AttentionProblem p = pr.p;
  p.q = view;
  (void)set_last_error(Error::InvalidArgument, "sentinel");
  EXPECT_EQ(ops::attention_cudnn(p, ctx()), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "slimcuda: sentinel");
  EXPECT_NE(std::string(ops::attention_cudnn_unsupported_reason()).find("aligned"), std::string::npos);
}

TEST_F(AttentionCudnnTest, CapturesIntoACudaGraph) {
  Case c{"capture", ScalarType::BFloat16, 2, 2, 2, 64, 64, 64, Layout::BSHD, false, kScaleD64, Mask::KeyPadding, false};
  Problem pr;
  make_problem(c, ctx(), &pr);
  ASSERT_FALSE(HasFailure());
  run(pr.p);  // builds the graph and warms the allocator's cache
  std::vector<uint16_t> eager(span({c.b, c.hq, c.sq, c.d}, pr.p.out->strides()));
  ASSERT_EQ(cudaMemcpy(eager.data(), pr.p.out->data_ptr(), eager.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemset(pr.p.out->data_ptr(), 0, eager.size() * 2), cudaSuccess);

  // Capture fails if the call synchronizes or allocates device memory with cudaMalloc.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Error e = ops::attention_cudnn(pr.p, ctx());
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(e, Error::Ok) << last_error_message();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<uint16_t> replayed(eager.size());
  ASSERT_EQ(cudaMemcpy(replayed.data(), pr.p.out->data_ptr(), replayed.size() * 2, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(std::memcmp(eager.data(), replayed.data(), eager.size() * 2), 0);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

// No GPU needed: float32 is answered before cuDNN is touched.
TEST(AttentionCudnnNoGpu, Float32IsNotSupportedWithoutALastError) {
  AttentionProblem p;
  p.dtype = ScalarType::Float;
  p.batch = p.heads_q = p.heads_kv = 1;
  p.seq_q = p.seq_kv = 4;
  p.head_dim = p.head_dim_v = 8;
  (void)set_last_error(Error::InvalidArgument, "sentinel");
  EXPECT_EQ(ops::attention_cudnn(p, StreamContext::unselected(0)), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "slimcuda: sentinel");
  EXPECT_NE(std::string(ops::attention_cudnn_unsupported_reason()).find("float16 or bfloat16"), std::string::npos);
  clear_last_error();
  EXPECT_EQ(ops::attention_cudnn(p, StreamContext::unselected(0)), Error::NotSupported);
  EXPECT_STREQ(last_error_message(), "");
}

// The path is SLIMCUDA_ATTENTION's value at each call: an override applies to the next one.
TEST(AttentionCudnnNoGpu, PathOverrideValues) {
  std::string why;
  for (const auto& [word, path] : {std::pair{"auto", ops::AttentionPath::Auto},
                                   {"kernel", ops::AttentionPath::Kernel},
                                   {"cudnn", ops::AttentionPath::Cudnn},
                                   {"CUDNN", ops::AttentionPath::Cudnn},
                                   {"", ops::AttentionPath::Auto}}) {
    ASSERT_EQ(config::set("SLIMCUDA_ATTENTION", word, &why), Error::Ok) << why;
    EXPECT_EQ(ops::attention_path_override(), path) << word;
  }
  EXPECT_EQ(config::set("SLIMCUDA_ATTENTION", "flash", &why), Error::InvalidArgument);
  EXPECT_EQ(ops::attention_path_override(), ops::AttentionPath::Auto) << "a bad value changes nothing";
  ASSERT_EQ(config::set("SLIMCUDA_ATTENTION", nullptr, &why), Error::Ok) << why;
}

}  // namespace
}  // namespace slimcuda::test
