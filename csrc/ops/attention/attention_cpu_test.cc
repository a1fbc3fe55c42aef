// SPDX-License-Identifier: Apache-2.0
// The CPU attention on OpenBLAS gives the reference loops' values and logsumexp: float32,
// float16 and bfloat16, grouped-query heads, causal, a bool mask and an additive bias (both
// broadcast), rows every key is masked out of, query blocks (more rows than one block), and
// operands in PyTorch's [batch, seq, heads, dim] layout.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/attention/attention_cpu.h"
#include "csrc/ops/common/cpu_elements.h"
#include "csrc/tensor/slim_tensor.h"

namespace slimcuda::ops {
namespace {

struct Buffer {
  std::vector<char> bytes;
  std::unique_ptr<SlimTensor> tensor;
};

Buffer make(ScalarType t, int64_t elements, uint32_t seed) {
  Buffer b;
  b.bytes.resize(static_cast<size_t>(elements) * element_size(t));
  for (int64_t i = 0; i < elements; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const double v = static_cast<double>(seed >> 8) / static_cast<double>(1u << 23) - 1.0;
    if (t == ScalarType::Bool) {
      b.bytes[i] = (seed >> 29) != 0 ? 1 : 0;  // mostly attend
    } else {
      store_element(b.bytes.data(), t, i, 2.0 * v);
    }
  }
  b.tensor = std::make_unique<SlimTensor>(Storage::borrow(b.bytes.data(), b.bytes.size(), Device{DeviceType::CPU, 0}),
                                          std::vector<int64_t>{elements}, std::vector<int64_t>{1}, t, 0);
  return b;
}

// [batch, heads, seq, dim] strides: contiguous, or PyTorch's [batch, seq, heads, dim] memory.
void strides(bool seq_major, int64_t heads, int64_t seq, int64_t dim, int64_t (&s)[4]) {
  if (seq_major) {
    s[0] = seq * heads * dim, s[1] = dim, s[2] = heads * dim, s[3] = 1;
  } else {
    s[0] = heads * seq * dim, s[1] = seq * dim, s[2] = dim, s[3] = 1;
  }
}

enum class Bias { None, Mask, Additive, MaskAllOff };

struct Case {
  ScalarType t;
  int64_t batch, hq, hkv, sq, skv, d, dv;
  bool causal, seq_major;
  Bias bias;
};

void run(const Case& c) {
  SCOPED_TRACE(testing::Message() << "dtype " << static_cast<int>(c.t) << " b " << c.batch << " hq " << c.hq << " hkv "
                                  << c.hkv << " sq " << c.sq << " skv " << c.skv << " d " << c.d << " causal "
                                  << c.causal << " bias " << static_cast<int>(c.bias));
  AttentionProblem p;
  p.batch = c.batch, p.heads_q = c.hq, p.heads_kv = c.hkv, p.seq_q = c.sq, p.seq_kv = c.skv;
  p.head_dim = c.d, p.head_dim_v = c.dv, p.dtype = c.t, p.causal = c.causal;
  p.scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  Buffer q = make(c.t, c.batch * c.hq * c.sq * c.d, 1), k = make(c.t, c.batch * c.hkv * c.skv * c.d, 2);
  Buffer v = make(c.t, c.batch * c.hkv * c.skv * c.dv, 3);
  p.q = q.tensor.get(), p.k = k.tensor.get(), p.v = v.tensor.get();
  strides(c.seq_major, c.hq, c.sq, c.d, p.q_strides);
  strides(c.seq_major, c.hkv, c.skv, c.d, p.k_strides);
  strides(c.seq_major, c.hkv, c.skv, c.dv, p.v_strides);
  Buffer bias;
  if (c.bias != Bias::None) {  // [sq, skv], broadcast over batch and heads
    p.bias_dtype = c.bias == Bias::Additive ? c.t : ScalarType::Bool;
    bias = make(p.bias_dtype, c.sq * c.skv, 4);
    if (c.bias == Bias::MaskAllOff) {  // every other query row attends to nothing
      for (int64_t i = 0; i < c.sq; i += 2) std::memset(bias.bytes.data() + i * c.skv, 0, c.skv);
    }
    p.bias = bias.tensor.get();
    p.bias_strides[2] = c.skv, p.bias_strides[3] = 1;
  }
  const int64_t out_elements = c.batch * c.hq * c.sq * c.dv, lse_elements = c.batch * c.hq * c.sq;
  Buffer out = make(c.t, out_elements, 5), want = make(c.t, out_elements, 5);
  Buffer lse = make(ScalarType::Float, lse_elements, 6), want_lse = make(ScalarType::Float, lse_elements, 6);
  strides(false, c.hq, c.sq, c.dv, p.out_strides);
  p.lse_strides[0] = c.hq * c.sq, p.lse_strides[1] = c.sq, p.lse_strides[2] = 1;
  p.out = want.tensor.get(), p.logsumexp = want_lse.tensor.get();
  ASSERT_EQ(attention_cpu_reference(p), Error::Ok);
  p.out = out.tensor.get(), p.logsumexp = lse.tensor.get();
  ASSERT_EQ(attention_cpu(p), Error::Ok);
  const double rel = c.t == ScalarType::Float ? 1e-5 : c.t == ScalarType::Half ? 0x1p-10 : 0x1p-7;
  int64_t bad = 0;
  for (int64_t i = 0; i < out_elements; ++i) {
    const double got = load_element(out.bytes.data(), c.t, i), ref = load_element(want.bytes.data(), c.t, i);
    if (!(std::fabs(got - ref) <= 1e-5 + rel * std::fabs(ref)) && bad++ < 5) {
      ADD_FAILURE() << "out " << i << ": " << got << ", reference " << ref;
    }
  }
  for (int64_t i = 0; i < lse_elements; ++i) {
    const double got = load_element(lse.bytes.data(), ScalarType::Float, i);
    const double ref = load_element(want_lse.bytes.data(), ScalarType::Float, i);
    if (!(std::fabs(got - ref) <= 1e-4 * (1.0 + std::fabs(ref))) && bad++ < 5) {
      ADD_FAILURE() << "logsumexp " << i << ": " << got << ", reference " << ref;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(AttentionCpu, BlasMatchesTheReference) {
  for (ScalarType t : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16}) {
    for (bool causal : {false, true}) {
      for (Bias bias : {Bias::None, Bias::Mask, Bias::Additive}) {
        run({t, 2, 4, 4, 9, 9, 16, 16, causal, false, bias});
        run({t, 1, 8, 2, 5, 12, 32, 24, causal, true, bias});  // grouped heads, seq-major operands
      }
    }
  }
}

TEST(AttentionCpu, RowsWithNoKeyAndQueryBlocks) {
  run({ScalarType::Float, 1, 2, 2, 6, 7, 8, 8, false, false, Bias::MaskAllOff});
  run({ScalarType::Float, 1, 2, 1, 6, 7, 8, 8, true, true, Bias::MaskAllOff});
  // More query rows than one block, causal across the block boundary.
  run({ScalarType::Float, 1, 2, 2, 300, 300, 16, 16, true, false, Bias::None});
  run({ScalarType::BFloat16, 2, 3, 1, 129, 40, 8, 4, false, true, Bias::Additive});
}

}  // namespace
}  // namespace slimcuda::ops
