// SPDX-License-Identifier: Apache-2.0
// The CUDA attention shims on the shapes real models give them (BERT, GPT-2, ViT, a
// grouped-query decoder, head dims up to 256, single-query decode), compared with a float64
// reference written from the definition (csrc/ops/testing/sdpa_reference.h) on the same
// rounded inputs; a call captured into a CUDA graph on the caller's stream (nothing
// synchronizes or leaves the stream) and replayed. The small value cases live in
// testdata/ops.json (PyTorch's values); these are too large to store.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/testing/sdpa_reference.h"
#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/test_stream.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

constexpr int32_t kCPU = 0, kCUDA = 1;
constexpr int32_t kF32 = 6, kF16 = 5, kBF16 = 15, kBool = 11;

struct Deleter {
  void operator()(AtenTensorOpaque* t) const { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }
};
using Tensor = std::unique_ptr<AtenTensorOpaque, Deleter>;

size_t element_size(int32_t dtype) { return dtype == kF32 ? 4 : dtype == kBool ? 1 : 2; }

void store(char* p, int32_t dtype, double v) {
  const float f = static_cast<float>(v);
  if (dtype == kF32) {
    std::memcpy(p, &f, 4);
  } else if (dtype == kBool) {
    *p = v != 0.0 ? 1 : 0;
  } else {
    const uint16_t h = dtype == kF16 ? convert::float_to_half(f) : convert::float_to_bfloat16(f);
    std::memcpy(p, &h, 2);
  }
}

double load(const char* p, int32_t dtype) {
  if (dtype == kBool) return *p != 0 ? 1.0 : 0.0;
  if (dtype == kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == kF16 ? convert::half_to_float(h) : convert::bfloat16_to_float(h);
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform value in [-1, 1) for (seed, element).
double uniform(uint64_t seed, int64_t j) {
  return static_cast<double>(mix(seed * 1000003ull + static_cast<uint64_t>(j)) >> 11) * 0x1p-52 - 1.0;
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(sizes[d], 1);
  return s;
}

// A host tensor with these sizes/strides, element (row-major index j) = value(j).
Tensor host_tensor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
                   const std::function<double(int64_t)>& value) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                                    dtype, kCPU, 0, &h),
            0)
      << last_error_message();
  Tensor t(h);
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(h, &data), 0);
  const int64_t nd = static_cast<int64_t>(sizes.size());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * strides[d];
    store(static_cast<char*>(data) + off * element_size(dtype), dtype, value(j));
    for (int64_t d = nd; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return t;
}

Tensor to_device(AtenTensorHandle host) {
  int64_t nd = 0;
  int64_t *sz = nullptr, *st = nullptr;
  int32_t dtype = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(host, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(host, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(host, &st), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(host, &dtype), 0);
  AtenTensorHandle d = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sz, st, dtype, kCUDA, 0, &d), 0) << last_error_message();
  Tensor t(d);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(d, host, 0), 0) << last_error_message();
  return t;
}

// The elements of t (CPU or CUDA) in row-major order.
std::vector<double> values(AtenTensorHandle t) {
  int64_t nd = 0;
  int64_t *sz = nullptr, *st = nullptr;
  int32_t dtype = 0, type = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &dtype), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &type), 0);
  std::vector<int64_t> sizes(sz, sz + nd), strides(st, st + nd);
  Tensor host;
  AtenTensorHandle src = t;
  if (type == kCUDA) {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype, kCPU, 0, &h), 0);
    host.reset(h);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << last_error_message();
    src = h;
  }
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(src, &data), 0);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> out;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * strides[d];
    out.push_back(load(static_cast<const char*>(data) + off * element_size(dtype), dtype));
    for (int64_t d = nd; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// One model-shaped attention: q/k/v [B, H, S, D] (bshd: stored [B, S, H, D] and transposed,
// as models pass them), an optional bias or bool mask.
struct Shape {
  const char* name;
  int32_t dtype;
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv, head_dim;
  bool bshd, causal;
  enum Bias { None, PaddingMask, BoolMask, FullBias } bias;
};

std::vector<int64_t> strides_of(const Shape& s, int64_t heads, int64_t seq) {
  if (!s.bshd) return contiguous({s.batch, heads, seq, s.head_dim});
  return {seq * heads * s.head_dim, s.head_dim, heads * s.head_dim, 1};
}

struct Inputs {
  Tensor q, k, v, bias;
};

Inputs make_inputs(const Shape& s, uint64_t seed) {
  Inputs in;
  const auto u = [seed](uint64_t t) { return [seed, t](int64_t j) { return uniform(seed * 7 + t, j); }; };
  in.q = host_tensor({s.batch, s.heads_q, s.seq_q, s.head_dim}, strides_of(s, s.heads_q, s.seq_q), s.dtype, u(1));
  in.k = host_tensor({s.batch, s.heads_kv, s.seq_kv, s.head_dim}, strides_of(s, s.heads_kv, s.seq_kv), s.dtype, u(2));
  in.v = host_tensor({s.batch, s.heads_kv, s.seq_kv, s.head_dim}, strides_of(s, s.heads_kv, s.seq_kv), s.dtype, u(3));
  const int64_t skv = s.seq_kv;
  switch (s.bias) {
    case Shape::PaddingMask:  // [B, 1, 1, Skv]: batch b keeps its first Skv - 7b keys
      in.bias = host_tensor({s.batch, 1, 1, skv}, contiguous({s.batch, 1, 1, skv}), s.dtype,
                            [&](int64_t j) { return j % skv < skv - 7 * (j / skv) ? 0.0 : -INFINITY; });
      break;
    case Shape::BoolMask:  // [Sq, Skv], about one key in five masked
      in.bias = host_tensor({s.seq_q, skv}, contiguous({s.seq_q, skv}), kBool,
                            [&](int64_t j) { return uniform(seed + 99, j) > -0.6 ? 1.0 : 0.0; });
      break;
    case Shape::FullBias:
      in.bias = host_tensor({s.batch, s.heads_q, s.seq_q, skv}, contiguous({s.batch, s.heads_q, s.seq_q, skv}), s.dtype,
                            u(4));
      break;
    case Shape::None:
      break;
  }
  return in;
}

struct Result {
  Tensor out, lse, seed, offset;
};

int32_t efficient(AtenTensorHandle q, AtenTensorHandle k, AtenTensorHandle v, AtenTensorHandle bias, bool causal,
                  Result* r) {
  AtenTensorHandle h[4] = {};
  const int32_t code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
      q, k, v, bias != nullptr ? &bias : nullptr, 1, 0.0, causal ? 1 : 0, nullptr, &h[0], &h[1], &h[2], &h[3]);
  r->out.reset(h[0]), r->lse.reset(h[1]), r->seed.reset(h[2]), r->offset.reset(h[3]);
  return code;
}

// |got - want| <= atol + rtol * |want| against the float64 reference, which reads the same
// rounded inputs (so input rounding is no error here) and rounds nothing:
// - float32 (slimcuda's kernel, float sums): each step rounds at 2^-24 and the errors over
//   <= 256 dims and <= 300 keys add up to about 1e-6; 1e-5 / 1e-4 leave a margin of 10.
// - float16 / bfloat16 (cuDNN, else the kernel): the output is rounded once to the dtype,
//   <= u * |want| with u = 2^-11 (float16) or 2^-8 (bfloat16), covered by rtol 5e-3 / 1e-2;
//   cuDNN also rounds the softmax weights p_j to the dtype before multiplying V, an error
//   <= u * sum_j p_j |v_j| <= u (|v| <= 1 here): 4.9e-4 / 3.9e-3, covered by atol 2e-3 / 1e-2.
// Still tight enough: a scale 2 % off fails every shape, kv heads tiled instead of repeated
// fail the GQA one (tried with the CPU op standing in for the CUDA one).
void tolerance(int32_t dtype, double* atol, double* rtol) {
  if (dtype == kF32) {
    *atol = 1e-5, *rtol = 1e-4;
  } else if (dtype == kF16) {
    *atol = 2e-3, *rtol = 5e-3;
  } else {
    *atol = 1e-2, *rtol = 1e-2;
  }
}

// The reference for s on the host inputs, read back through their strides and widened to
// double. The scale is PyTorch's default, 1 / sqrt(head_dim): the shim is called without one.
SdpaReference reference_for(const Shape& s, const Inputs& host) {
  SdpaReference r;
  r.batch = s.batch, r.heads_q = s.heads_q, r.heads_kv = s.heads_kv, r.seq_q = s.seq_q, r.seq_kv = s.seq_kv;
  r.head_dim = r.head_dim_v = s.head_dim;
  r.q = values(host.q.get()), r.k = values(host.k.get()), r.v = values(host.v.get());
  r.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  r.causal = s.causal;
  const int64_t skv = s.seq_kv;
  int64_t* st = r.bias_strides;
  switch (s.bias) {
    case Shape::PaddingMask:  // [B, 1, 1, Skv]
      r.bias = values(host.bias.get());
      st[0] = skv, st[3] = 1;
      break;
    case Shape::BoolMask: {  // [Sq, Skv] for every batch and head
      const std::vector<double> m = values(host.bias.get());
      r.mask.assign(m.begin(), m.end());
      r.mask_strides[2] = skv, r.mask_strides[3] = 1;
      break;
    }
    case Shape::FullBias:  // [B, Hq, Sq, Skv]
      r.bias = values(host.bias.get());
      st[0] = s.heads_q * s.seq_q * skv, st[1] = s.seq_q * skv, st[2] = skv, st[3] = 1;
      break;
    case Shape::None:
      break;
  }
  return r;
}

class AttentionCuda : public ::testing::Test {
 protected:
  void SetUp() override { SLIMCUDA_REQUIRE_GPU_OR_SKIP(); }
};

TEST_F(AttentionCuda, MatchesAFloat64ReferenceOnModelShapes) {
  const Shape shapes[] = {
      {"bert_f32_padding_mask", kF32, 2, 12, 12, 128, 128, 64, true, false, Shape::PaddingMask},
      {"gpt2_f16_causal", kF16, 1, 12, 12, 200, 200, 64, true, true, Shape::None},
      {"vit_bf16", kBF16, 2, 6, 6, 197, 197, 64, true, false, Shape::None},
      {"gqa_bf16_causal_d128", kBF16, 1, 8, 2, 96, 96, 128, false, true, Shape::None},
      {"f32_d256", kF32, 1, 2, 2, 64, 80, 256, false, false, Shape::FullBias},
      {"f16_d80_bool_mask", kF16, 2, 4, 4, 77, 77, 80, true, false, Shape::BoolMask},
      {"f32_d40_causal_long", kF32, 1, 2, 2, 300, 300, 40, false, true, Shape::None},
      {"f32_decode_one_query", kF32, 4, 8, 8, 1, 300, 64, false, false, Shape::None},
  };
  uint64_t seed = 1;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.name);
    Inputs host = make_inputs(s, seed++);
    Tensor q = to_device(host.q.get()), k = to_device(host.k.get()), v = to_device(host.v.get());
    Tensor bias = host.bias != nullptr ? to_device(host.bias.get()) : Tensor();
    Result got;
    ASSERT_EQ(efficient(q.get(), k.get(), v.get(), bias.get(), s.causal, &got), 0) << last_error_message();

    // All rows of every shape: the largest costs about 6e7 multiply-adds, well under a second.
    const SdpaReference ref = reference_for(s, host);
    ASSERT_EQ(ref.check(), "");
    std::vector<double> want, lse_want;
    ref.all(&want, &lse_want);
    double atol, rtol;
    tolerance(s.dtype, &atol, &rtol);
    const std::vector<double> have = values(got.out.get());
    ASSERT_EQ(want.size(), have.size());
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; ++i) {
      if (!(std::fabs(have[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
        ADD_FAILURE() << "output element " << i << " = " << have[i] << ", want " << want[i];
        ++bad;
      }
    }
    // logsumexp: [B, H, ceil(Sq/32)*32] (PyTorch's efficient attention pads it), the
    // reference's [B, H, Sq]; float sums on the GPU, about 1e-6 off.
    const std::vector<double> lse_have = values(got.lse.get());
    const int64_t sq = s.seq_q, padded = (sq + 31) / 32 * 32;
    ASSERT_EQ(lse_have.size(), lse_want.size() / sq * padded);
    for (size_t i = 0; i < lse_want.size() && bad < 10; ++i) {
      const double g = lse_have[(i / sq) * padded + i % sq];
      if (!(std::fabs(g - lse_want[i]) <= 1e-4 + 1e-5 * std::fabs(lse_want[i]))) {
        ADD_FAILURE() << "logsumexp " << i << " = " << g << ", want " << lse_want[i];
        ++bad;
      }
    }
  }
}

// The whole shim call (output allocation included) captured on the caller's stream: a
// synchronization, an allocation outside the caching allocator or work on another stream
// would break the capture. The replay writes the captured call's outputs.
TEST_F(AttentionCuda, CapturesIntoACudaGraphOnTheCallerStream) {
  const Shape s{"bert_f32", kF32, 2, 4, 4, 64, 64, 64, true, false, Shape::PaddingMask};
  Inputs host = make_inputs(s, 42);
  Tensor q = to_device(host.q.get()), k = to_device(host.k.get()), v = to_device(host.v.get());
  Tensor bias = to_device(host.bias.get());
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  CallerStreamGuard on_stream(stream.get());
  Result eager;
  ASSERT_EQ(efficient(q.get(), k.get(), v.get(), bias.get(), false, &eager), 0) << last_error_message();
  const std::vector<double> want = values(eager.out.get());
  // Freed before the capture, so the captured call reuses the cached blocks rather than
  // asking CUDA for memory while capturing.
  eager = Result();

  const cudaStream_t cs = stream.get();
  ASSERT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  Result captured;
  const int32_t code = efficient(q.get(), k.get(), v.get(), bias.get(), false, &captured);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(cs, &graph);
  ASSERT_EQ(code, 0) << last_error_message();
  ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, cs), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(cs), cudaSuccess);
  EXPECT_EQ(values(captured.out.get()), want) << "the replay computes what the eager call did";
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  captured = Result();
}

}  // namespace
}  // namespace slimcuda::testing
