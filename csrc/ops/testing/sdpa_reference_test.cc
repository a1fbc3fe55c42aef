// SPDX-License-Identifier: Apache-2.0
// The float64 attention reference against values worked out by hand from the definition.
#include "csrc/ops/testing/sdpa_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace slimcuda::testing {
namespace {

// One batch and head, head_dim 1: score[i][j] = scale * q[i] * k[j].
SdpaReference one_head(std::vector<double> q, std::vector<double> k, std::vector<double> v) {
  SdpaReference a;
  a.batch = a.heads_q = a.heads_kv = 1;
  a.seq_q = static_cast<int64_t>(q.size());
  a.seq_kv = static_cast<int64_t>(k.size());
  a.head_dim = 1;
  a.head_dim_v = static_cast<int64_t>(v.size()) / a.seq_kv;
  a.q = std::move(q), a.k = std::move(k), a.v = std::move(v);
  a.scale = 1.0;
  return a;
}

TEST(SdpaReference, WeighsValuesBySoftmaxOfScaledScores) {
  // Scores 0 and ln 2 (scale 0.5 times q.k = 2 ln 2): weights 1/3 and 2/3, lse ln 3.
  SdpaReference a = one_head({1.0}, {0.0, 2.0 * std::log(2.0)}, {3.0, 30.0, 6.0, 60.0});
  a.scale = 0.5;
  ASSERT_EQ(a.check(), "");
  double out[2], lse;
  a.row(0, 0, 0, out, &lse);
  EXPECT_DOUBLE_EQ(out[0], 3.0 / 3 + 6.0 * 2 / 3);
  EXPECT_DOUBLE_EQ(out[1], 30.0 / 3 + 60.0 * 2 / 3);
  EXPECT_DOUBLE_EQ(lse, std::log(3.0));
}

TEST(SdpaReference, CausalIsAlignedAtTheUpperLeft) {
  // 2 queries, 3 keys, equal scores: query 0 sees key 0 only, query 1 keys 0 and 1 (not the
  // bottom-right alignment, where query 0 would see keys 0 and 1).
  SdpaReference a = one_head({0.0, 0.0}, {1.0, 1.0, 1.0}, {2.0, 4.0, 9.0});
  a.causal = true;
  std::vector<double> out, lse;
  a.all(&out, &lse);
  EXPECT_DOUBLE_EQ(out[0], 2.0);
  EXPECT_DOUBLE_EQ(out[1], 3.0);
  EXPECT_DOUBLE_EQ(lse[0], 0.0);
  EXPECT_DOUBLE_EQ(lse[1], std::log(2.0));
  // More queries than keys: query 3 sees all 2 keys.
  SdpaReference b = one_head({0.0, 0.0, 0.0, 0.0}, {1.0, 1.0}, {2.0, 4.0});
  b.causal = true;
  b.all(&out, &lse);
  EXPECT_DOUBLE_EQ(out[0], 2.0);
  EXPECT_DOUBLE_EQ(out[3], 3.0);
}

TEST(SdpaReference, MasksAndBiasesBroadcastThroughStrides) {
  // Batch 2, 2 queries, 2 keys, equal scores. A bias [B, 1, 1, Skv] (strides {2, 0, 0, 1})
  // hides key 1 in batch 0 only; a bool mask [Sq, Skv] (strides {0, 0, 2, 1}) hides key 0
  // from query 1 in every batch.
  SdpaReference a;
  a.batch = 2, a.heads_q = a.heads_kv = 1, a.seq_q = a.seq_kv = 2, a.head_dim = a.head_dim_v = 1;
  a.q.assign(4, 0.0), a.k.assign(4, 0.0);
  a.v = {1.0, 3.0, 5.0, 7.0};  // batch 0: 1, 3; batch 1: 5, 7
  a.scale = 1.0;
  const double inf = std::numeric_limits<double>::infinity();
  a.bias = {0.0, -inf, 0.0, 0.0};
  a.bias_strides[0] = 2, a.bias_strides[3] = 1;
  a.mask = {1, 1, 0, 1};
  a.mask_strides[2] = 2, a.mask_strides[3] = 1;
  ASSERT_EQ(a.check(), "");
  std::vector<double> out, lse;
  a.all(&out, &lse);
  EXPECT_DOUBLE_EQ(out[0], 1.0);  // b0 q0: key 0
  EXPECT_TRUE(std::isnan(out[1])) << "b0 q1 sees no key";
  EXPECT_EQ(lse[1], -inf);
  EXPECT_DOUBLE_EQ(out[2], 6.0);  // b1 q0: keys 0 and 1
  EXPECT_DOUBLE_EQ(out[3], 7.0);  // b1 q1: key 1
}

TEST(SdpaReference, GroupedQueryHeadsRepeatEachKeyValueHead) {
  // 4 query heads over 2 key/value heads: heads 0 and 1 read kv head 0, heads 2 and 3 kv
  // head 1 (repeat_interleave, not a tiling that would give heads 0 and 2 the same one).
  SdpaReference a;
  a.batch = 1, a.heads_q = 4, a.heads_kv = 2, a.seq_q = a.seq_kv = 1, a.head_dim = a.head_dim_v = 1;
  a.q.assign(4, 1.0), a.k.assign(2, 1.0);
  a.v = {10.0, 20.0};
  a.scale = 1.0;
  std::vector<double> out, lse;
  a.all(&out, &lse);
  EXPECT_EQ(out, (std::vector<double>{10.0, 10.0, 20.0, 20.0}));
}

TEST(SdpaReference, CheckNamesOperandsThatDoNotFit) {
  SdpaReference a = one_head({1.0}, {1.0, 2.0}, {1.0, 2.0});
  EXPECT_EQ(a.check(), "");
  a.v.pop_back();
  EXPECT_EQ(a.check(), "v has the wrong size");
  a = one_head({1.0}, {1.0, 2.0}, {1.0, 2.0});
  a.bias = {0.0};
  a.bias_strides[3] = 1;
  EXPECT_EQ(a.check(), "bias_strides reach past the bias");
  a = one_head({1.0}, {1.0}, {1.0});
  a.heads_q = 3, a.heads_kv = 2;
  EXPECT_EQ(a.check(), "heads_q must be a multiple of heads_kv");
}

}  // namespace
}  // namespace slimcuda::testing
