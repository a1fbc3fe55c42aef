// SPDX-License-Identifier: Apache-2.0
// Decode attention (a few query rows against a KV cache) under the SDPA shims (cudnn, flash,
// efficient): a Llama-shaped decode step (16 heads of 128, a 512-position cache behind a
// boolean mask, logsumexp), cache lengths 1 to 4096, batch 8 with per-sequence padding,
// grouped-query heads, seq_q 3 with is_causal, KV caches viewed with strides, fully masked
// rows; each against a float64 reference computed here from the same float16/bfloat16
// inputs, and with SLIMCUDA_DECODE_ATTENTION off (cuDNN) against on. Which problems the
// decode kernel takes is checked without a GPU.
#include <cuda_runtime_api.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/attention_decode.h"
#include "csrc/ops/op_test_tensors.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch_ops.h"

namespace slimcuda::testing {
namespace {

enum class Mask { None, DecoderBool, PaddingBias, FullyMaskedBatch0 };
enum class Layout { Bhsd, Bshd, CacheView };
enum class Op { Cudnn, Flash, Efficient };

struct Case {
  std::string name;
  int32_t dtype;
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv, head_dim;
  Mask mask = Mask::None;
  Layout layout = Layout::Bhsd;
  bool causal = false;
  Op op = Op::Cudnn;
  double scale = 0.0;  // 0: the default 1 / sqrt(head_dim)
};

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The decoder's cache position: keys j <= kPos attend (tools/aoti/decoder.py's mask).
int64_t decoder_pos(int64_t seq_kv) { return seq_kv * 3 / 5; }

// Sizes and strides of a [B, H, S, D] operand in c's layout; the storage it needs.
struct Placement {
  std::vector<int64_t> sizes, strides;
  int64_t storage;
};

Placement place(const Case& c, int64_t heads, int64_t seq, bool is_kv) {
  const int64_t B = c.batch, D = c.head_dim;
  Placement p{{B, heads, seq, D}, {}, 0};
  if (c.layout == Layout::Bshd) {
    p.strides = {seq * heads * D, D, heads * D, 1};
  } else if (c.layout == Layout::CacheView && is_kv) {
    const int64_t max_pos = seq + 40;  // the cache is longer than the keys the call sees
    p.strides = {heads * max_pos * D, max_pos * D, D, 1};
  } else {
    p.strides = contiguous(p.sizes);
  }
  p.storage = 1;
  for (int d = 0; d < 4; ++d) p.storage += (p.sizes[d] - 1) * p.strides[d];
  return p;
}

// A device operand in its layout holding value(row-major index); its host copy.
struct Operand {
  Tensor host, storage, device;
};

Operand operand(const Case& c, int64_t heads, int64_t seq, bool is_kv, uint64_t seed) {
  const Placement p = place(c, heads, seq, is_kv);
  Operand o;
  o.host = host_tensor(p.sizes, contiguous(p.sizes), c.dtype, [seed](int64_t j) { return uniform(seed, j); });
  o.storage = device_empty({p.storage}, {1}, c.dtype);
  o.device = view(o.storage.get(), p.sizes, p.strides, 0);
  copy_into(o.device.get(), o.host.get());
  return o;
}

// The mask as the shim takes it (host copy for the reference), or none.
struct MaskTensor {
  Tensor host, device;
  int32_t dtype = kBool;
  std::vector<int64_t> sizes;
};

MaskTensor make_mask(const Case& c) {
  MaskTensor m;
  const int64_t S = c.seq_kv;
  switch (c.mask) {
    case Mask::None:
      return m;
    case Mask::DecoderBool:  // [1, 1, 1, S]: positions up to the current one
      m.sizes = {1, 1, 1, S};
      m.host =
          host_tensor(m.sizes, contiguous(m.sizes), kBool, [S](int64_t j) { return j <= decoder_pos(S) ? 1.0 : 0.0; });
      break;
    case Mask::PaddingBias:  // [B, 1, 1, S] additive: sequence b pads its last 7 b keys, others biased
      m.dtype = c.dtype;
      m.sizes = {c.batch, 1, 1, S};
      m.host = host_tensor(m.sizes, contiguous(m.sizes), c.dtype, [S](int64_t j) {
        const int64_t b = j / S, key = j % S;
        return key >= S - 7 * b && key > 0 ? kNegInf : 0.5 * uniform(77, j);
      });
      break;
    case Mask::FullyMaskedBatch0:  // [B, 1, 1, S] float32: sequence 0 may attend to nothing
      m.dtype = kF32;
      m.sizes = {c.batch, 1, 1, S};
      m.host = host_tensor(m.sizes, contiguous(m.sizes), kF32, [S](int64_t j) { return j < S ? kNegInf : 0.0; });
      break;
  }
  m.device = to_device(m.host.get());
  return m;
}

// out [B, H, Sq, D] and logsumexp [B, H, Sq] in float64: softmax(scale q.k + mask) v, keys
// j > i masked when causal (PyTorch's upper-left is_causal), a row with no key 0 and
// logsumexp 0 (slimcuda's convention, its CPU reference's too).
void reference(const Case& c, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
               const MaskTensor& mask, std::vector<double>* out, std::vector<double>* lse) {
  const int64_t B = c.batch, H = c.heads_q, Sq = c.seq_q, S = c.seq_kv, D = c.head_dim;
  const int64_t group = c.heads_q / c.heads_kv;
  const double scale = c.scale != 0.0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(D));
  const std::vector<double> m = mask.host != nullptr ? values(mask.host.get()) : std::vector<double>();
  out->assign(static_cast<size_t>(B * H * Sq * D), 0.0);
  lse->assign(static_cast<size_t>(B * H * Sq), 0.0);
  std::vector<double> s(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < Sq; ++i) {
        const double* qr = q.data() + ((b * H + h) * Sq + i) * D;
        double mx = kNegInf;
        for (int64_t j = 0; j < S; ++j) {
          double x = kNegInf;
          if (!c.causal || j <= i) {
            const double* kr = k.data() + ((b * c.heads_kv + hk) * S + j) * D;
            double dot = 0.0;
            for (int64_t d = 0; d < D; ++d) dot += qr[d] * kr[d];
            x = dot * scale;
            if (c.mask == Mask::DecoderBool) x = m[j] != 0.0 ? x : kNegInf;
            if (c.mask == Mask::PaddingBias || c.mask == Mask::FullyMaskedBatch0) x += m[b * S + j];
          }
          s[j] = x;
          mx = std::max(mx, x);
        }
        if (mx == kNegInf) continue;
        double sum = 0.0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        double* o = out->data() + ((b * H + h) * Sq + i) * D;
        for (int64_t j = 0; j < S; ++j) {
          const double* vr = v.data() + ((b * c.heads_kv + hk) * S + j) * D;
          for (int64_t d = 0; d < D; ++d) o[d] += s[j] / sum * vr[d];
        }
        (*lse)[(b * H + h) * Sq + i] = mx + std::log(sum);
      }
    }
  }
}

struct Result {
  std::vector<double> out, lse;  // lse as [B, H, Sq], whatever the op's layout
};

// Runs c through its shim (logsumexp requested where the op has the flag).
Result run(const Case& c, const Operand& q, const Operand& k, const Operand& v, const MaskTensor& mask) {
  AtenTensorHandle h[9] = {};
  int64_t max_q = 0, max_k = 0;
  AtenTensorHandle bias = mask.device.get();
  AtenTensorHandle* bias_arg = bias != nullptr ? &bias : nullptr;
  double scale = c.scale;
  double* scale_arg = c.scale != 0.0 ? &scale : nullptr;
  int32_t code = -1;
  switch (c.op) {
    case Op::Cudnn:
      code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_cudnn_attention)(
          q.device.get(), k.device.get(), v.device.get(), bias_arg, 1, 0.0, c.causal ? 1 : 0, 0, scale_arg, &h[0],
          &h[1], &h[2], &h[3], &max_q, &max_k, &h[6], &h[7], &h[8]);
      break;
    case Op::Flash:
      EXPECT_EQ(bias, nullptr) << "the flash op takes no mask";
      code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_flash_attention)(
          q.device.get(), k.device.get(), v.device.get(), 0.0, c.causal ? 1 : 0, 0, scale_arg, &h[0], &h[1], &h[2],
          &h[3], &max_q, &max_k, &h[6], &h[7], &h[8]);
      break;
    case Op::Efficient:
      code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
          q.device.get(), k.device.get(), v.device.get(), bias_arg, 1, 0.0, c.causal ? 1 : 0, scale_arg, &h[0], &h[1],
          &h[6], &h[7]);
      break;
  }
  std::vector<Tensor> owned;
  for (AtenTensorHandle t : h) owned.emplace_back(t);
  Result r;
  EXPECT_EQ(code, 0) << last_error_message();
  if (code != 0) return r;
  r.out = values(h[0]);
  const std::vector<double> lse = values(h[1]);
  // cudnn: [B, H, Sq, 1]; flash: [B, H, Sq]; efficient: [B, H, Sq rounded up to 32].
  const int64_t rows = c.batch * c.heads_q, pitch = c.op == Op::Efficient ? (c.seq_q + 31) / 32 * 32 : c.seq_q;
  EXPECT_EQ(static_cast<int64_t>(lse.size()), rows * pitch);
  for (int64_t r0 = 0; r0 < rows && static_cast<int64_t>(lse.size()) == rows * pitch; ++r0) {
    for (int64_t i = 0; i < c.seq_q; ++i) r.lse.push_back(lse[r0 * pitch + i]);
  }
  return r;
}

// Tolerances. Decode kernel: float32 scores and sums, the output rounded once, so
// |got - want| <= eps |want| + 1e-4 with eps twice the rounding's half ulp (bfloat16 2^-8,
// float16 2^-11) and 1e-4 for float32 exp2/log2 and the reassociated sums of up to 4096
// weights (about 2^-24 sqrt(4096) relative, fifty times less); logsumexp (float32, never
// rounded further) within 1e-4 + 1e-5 |want|. cuDNN (the switch off) rounds the softmax
// weights to the I/O type before P·V: the tolerances attention_cuda_test uses for it.
struct Tolerance {
  double atol, rtol;
};
Tolerance decode_tolerance(int32_t dtype) { return {1e-4, dtype == kF16 ? 0x1p-11 : 0x1p-8}; }
Tolerance cudnn_tolerance(int32_t dtype) { return dtype == kF16 ? Tolerance{2e-3, 5e-3} : Tolerance{1e-2, 1e-2}; }

int64_t count_off(const std::vector<double>& got, const std::vector<double>& want, Tolerance t,
                  const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  int64_t off = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) <= t.atol + t.rtol * std::fabs(want[i])) continue;  // NaN is off
    if (++off <= 5) ADD_FAILURE() << what << ": element " << i << " = " << got[i] << ", want " << want[i];
  }
  return off;
}

class AttentionDecode : public ::testing::Test {
 protected:
  void SetUp() override { SLIMCUDA_REQUIRE_GPU_OR_SKIP(); }
  void TearDown() override { ops::set_decode_attention_enabled(true); }

  // c on the decode kernel against the reference; with compare_off, also with the switch
  // off (cuDNN or the own kernel) against the reference and the decode kernel's result.
  static void check(const Case& c, uint64_t seed, bool compare_off = true) {
    SCOPED_TRACE(c.name);
    const Operand q = operand(c, c.heads_q, c.seq_q, false, seed);
    const Operand k = operand(c, c.heads_kv, c.seq_kv, true, seed + 1);
    const Operand v = operand(c, c.heads_kv, c.seq_kv, true, seed + 2);
    const MaskTensor mask = make_mask(c);
    std::vector<double> want, want_lse;
    reference(c, values(q.host.get()), values(k.host.get()), values(v.host.get()), mask, &want, &want_lse);
    ops::set_decode_attention_enabled(true);
    const Result on = run(c, q, k, v, mask);
    EXPECT_EQ(count_off(on.out, want, decode_tolerance(c.dtype), c.name + " out"), 0);
    EXPECT_EQ(count_off(on.lse, want_lse, {1e-4, 1e-5}, c.name + " logsumexp"), 0);
    if (!compare_off) return;
    ops::set_decode_attention_enabled(false);
    const Result off = run(c, q, k, v, mask);
    ops::set_decode_attention_enabled(true);
    const Tolerance t = cudnn_tolerance(c.dtype);
    EXPECT_EQ(count_off(off.out, want, t, c.name + " out, switch off"), 0);
    EXPECT_EQ(count_off(on.out, off.out, {2 * t.atol, 2 * t.rtol}, c.name + " out, on vs off"), 0);
    EXPECT_EQ(count_off(off.lse, want_lse, {1e-3, 1e-4}, c.name + " logsumexp, switch off"), 0);
  }
};

TEST_F(AttentionDecode, DecoderStepMatchesTheFloat64Reference) {
  // tools/aoti/decoder.py's attention: bf16, 16 heads of 128, a 512-position cache behind a
  // [1, 1, 1, 512] boolean mask, through the cudnn op with its logsumexp; then 4096 keys.
  check({"decoder_b1_kv512", kBF16, 1, 16, 16, 1, 512, 128, Mask::DecoderBool}, 1);
  check({"decoder_b8_kv512", kBF16, 8, 16, 16, 1, 512, 128, Mask::DecoderBool}, 2);
  check({"b1_kv4096", kBF16, 1, 16, 16, 1, 4096, 128}, 3);
}

TEST_F(AttentionDecode, CacheLengthsHeadDimsAndDtypes) {
  uint64_t seed = 10;
  for (int32_t dtype : {kBF16, kF16}) {
    for (int64_t d : {64, 128}) {
      for (int64_t s : {1, 17, 512, 4096}) {
        const std::string name =
            std::string(dtype == kF16 ? "f16" : "bf16") + "_d" + std::to_string(d) + "_kv" + std::to_string(s);
        check({name, dtype, 2, 4, 4, 1, s, d}, seed += 3);
      }
    }
  }
}

TEST_F(AttentionDecode, MasksBatchesGroupsAndLayouts) {
  const std::vector<Case> cases = {
      {"padding_bias_b8", kF16, 8, 4, 4, 1, 300, 64, Mask::PaddingBias},
      {"gqa_4_to_1", kBF16, 2, 8, 2, 1, 512, 128, Mask::DecoderBool},
      {"gqa_8_to_1_two_row_groups", kF16, 1, 32, 4, 1, 700, 128},
      {"seq_q3_gqa_three_row_groups", kBF16, 2, 8, 2, 3, 257, 64, Mask::PaddingBias},
      {"seq_q4", kF16, 1, 4, 4, 4, 1000, 128},
      {"bshd_layout", kBF16, 2, 4, 4, 1, 333, 128, Mask::None, Layout::Bshd},
      {"cache_view", kF16, 3, 4, 2, 1, 512, 64, Mask::DecoderBool, Layout::CacheView},
      {"explicit_scale", kBF16, 1, 4, 4, 2, 100, 128, Mask::None, Layout::Bhsd, false, Op::Cudnn, 0.3},
      {"flash_op", kBF16, 2, 8, 8, 1, 1024, 128, Mask::None, Layout::Bshd, false, Op::Flash},
      {"efficient_op", kF16, 2, 8, 8, 2, 640, 64, Mask::PaddingBias, Layout::Bhsd, false, Op::Efficient},
  };
  uint64_t seed = 200;
  for (const Case& c : cases) check(c, seed += 3);
}

TEST_F(AttentionDecode, CausalIsUpperLeftAligned) {
  // PyTorch's is_causal: row i sees keys j <= i, whatever the cache's length (so a single
  // query row sees key 0 only).
  check({"causal_seq_q1", kBF16, 1, 4, 4, 1, 512, 128, Mask::None, Layout::Bhsd, true}, 300);
  check({"causal_seq_q3_gqa", kF16, 2, 8, 2, 3, 64, 64, Mask::None, Layout::Bhsd, true}, 301);
}

TEST_F(AttentionDecode, FullyMaskedRowIsZeroWithLogsumexpZero) {
  // Sequence 0 may attend to no key: its rows are 0 and logsumexp 0 (the own kernel's and the
  // CPU reference's convention); sequence 1 is computed as usual. cuDNN's answer for such a
  // row is its own, so the switch-off comparison is left out.
  check({"fully_masked", kBF16, 2, 4, 4, 1, 1000, 128, Mask::FullyMaskedBatch0}, 400, false);
}

TEST_F(AttentionDecode, PendingLaunchErrorIsReturnedNotIgnored) {
  // Each launch's cudaGetLastError is checked: an error pending when the kernels are
  // launched (a failed cudaSetDevice just before) comes back as Internal, and is cleared.
  Tensor q = device_empty({1, 1, 1, 64}, {64, 64, 64, 1}, kBF16),
         kv = device_empty({1, 1, 64, 64}, {4096, 4096, 64, 1}, kBF16);
  Tensor out = device_empty({1, 1, 1, 64}, {64, 64, 64, 1}, kBF16);
  void *qp = nullptr, *kvp = nullptr, *op = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(q.get(), &qp), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(kv.get(), &kvp), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(out.get(), &op), 0);
  ops::AttentionKernelArgs a;
  a.batch = a.heads_q = a.heads_kv = a.seq_q = 1, a.seq_kv = 64, a.head_dim = a.head_dim_v = 64;
  a.dtype = ops::AttnType::BF16, a.q = qp, a.k = kvp, a.v = kvp, a.out = op, a.scale = 0.125f;
  const int64_t qs[4] = {64, 64, 64, 1}, ks[4] = {4096, 4096, 64, 1};
  for (int i = 0; i < 4; ++i) a.q_strides[i] = a.out_strides[i] = qs[i], a.k_strides[i] = a.v_strides[i] = ks[i];
  ASSERT_TRUE(ops::decode_attention_takes(a));
  ops::DecodeAttentionPlan plan;  // one split: no workspace
  plan.chunk = 64;
  ASSERT_NE(cudaSetDevice(1 << 20), cudaSuccess);
  EXPECT_EQ(ops::launch_decode_attention(a, plan, nullptr, nullptr, "decode_test"), Error::Internal);
  EXPECT_NE(std::string(last_error_message()).find("cudaGetLastError"), std::string::npos) << last_error_message();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error is cleared, not left for the next call";
  EXPECT_EQ(ops::launch_decode_attention(a, plan, nullptr, nullptr, "decode_test"), Error::Ok) << last_error_message();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Which problems the decode kernel takes: from sizes, strides, dtypes and addresses only
// (no GPU needed; the pointers are never read).
class AttentionDecodeRouting : public ::testing::Test {
 protected:
  static ops::AttentionKernelArgs decoder_step() {
    ops::AttentionKernelArgs a;
    a.batch = 1, a.heads_q = a.heads_kv = 16, a.seq_q = 1, a.seq_kv = 512, a.head_dim = a.head_dim_v = 128;
    a.dtype = ops::AttnType::BF16;
    alignas(16) static char storage[64];
    a.q = a.k = a.v = a.out = storage;
    const int64_t s[4] = {16 * 512 * 128, 512 * 128, 128, 1};
    for (int i = 0; i < 4; ++i) a.q_strides[i] = a.k_strides[i] = a.v_strides[i] = a.out_strides[i] = s[i];
    return a;
  }
};

TEST_F(AttentionDecodeRouting, DecodeShapesAreTaken) {
  ops::AttentionKernelArgs a = decoder_step();
  EXPECT_TRUE(ops::decode_attention_takes(a));
  a.head_dim = a.head_dim_v = 64, a.dtype = ops::AttnType::F16, a.seq_q = 4, a.heads_kv = 4;
  EXPECT_TRUE(ops::decode_attention_takes(a));
  a = decoder_step();
  a.seq_kv = 1;
  EXPECT_TRUE(ops::decode_attention_takes(a));
}

TEST_F(AttentionDecodeRouting, OtherProblemsAreLeftToCudnn) {
  auto with = [](auto change) {
    ops::AttentionKernelArgs a = decoder_step();
    change(a);
    return ops::decode_attention_takes(a);
  };
  EXPECT_FALSE(with([](auto& a) { a.dtype = ops::AttnType::F32; }));
  EXPECT_FALSE(with([](auto& a) { a.seq_q = 5; }));
  EXPECT_FALSE(with([](auto& a) { a.head_dim = a.head_dim_v = 96; }));
  EXPECT_FALSE(with([](auto& a) { a.head_dim_v = 64; }));
  EXPECT_FALSE(with([](auto& a) { a.seq_kv = 0; }));
  EXPECT_FALSE(with([](auto& a) { a.k_strides[3] = 2; }));
  EXPECT_FALSE(with([](auto& a) { a.v_strides[2] = 132; }));
  EXPECT_FALSE(with([](auto& a) { a.k = static_cast<const char*>(a.k) + 2; }));
  EXPECT_FALSE(with([](auto& a) { a.heads_kv = 3; }));
}

}  // namespace
}  // namespace slimcuda::testing
