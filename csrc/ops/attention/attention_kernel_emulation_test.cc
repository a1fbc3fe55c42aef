// SPDX-License-Identifier: Apache-2.0
// slimcuda's attention kernel (attention_kernel_device.h, the code nvcc compiles) run on
// the host with CUDA's primitives emulated (attention_emulation.h), against a reference in
// double: tiling, the online softmax, causal tile skipping, masks and biases, grouped-query
// heads, strides and both score paths (float4 and scalar head dims) are checked in CI, where
// there is no GPU. Shared memory is poisoned with NaN before each block and guarded after
// it, so reading what the kernel did not write, or writing past its size, fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

// clang-format off: the emulation must come first
#include "csrc/ops/attention/attention_emulation.h"
#include "csrc/ops/attention/attention_kernel_device.h"
// clang-format on

namespace slimcuda::ops {
namespace {

using attention_device::attention_kernel;
using attention_device::attention_smem_bytes;
using attention_device::kBlockQ;
using attention_device::kThreads;

template <int NC>
void run_grid(const AttentionKernelArgs& a) {
  const size_t bytes = attention_smem_bytes(static_cast<int>(a.head_dim), static_cast<int>(a.head_dim_v));
  constexpr size_t kGuard = 64;  // float4s after the block's shared memory
  const size_t n = bytes / sizeof(float4);
  ASSERT_EQ(bytes % sizeof(float4), 0u) << "shared memory size not a multiple of float4";
  std::vector<float4> smem(n + kGuard);
  const unsigned tiles = static_cast<unsigned>((a.seq_q + kBlockQ - 1) / kBlockQ);
  for (unsigned z = 0; z < a.batch; ++z) {
    for (unsigned y = 0; y < a.heads_q; ++y) {
      for (unsigned x = 0; x < tiles; ++x) {
        for (float4& f : smem) f = {NAN, NAN, NAN, NAN};
        for (size_t i = n; i < n + kGuard; ++i) smem[i] = {1.5f, 2.5f, 3.5f, 4.5f};
        slimcuda_emulation::dynamic_smem = smem.data();
        slimcuda_emulation::Barrier block(kThreads);
        std::vector<std::unique_ptr<slimcuda_emulation::Barrier>> warps;
        for (int w = 0; w < kThreads / 32; ++w) {
          warps.push_back(std::make_unique<slimcuda_emulation::Barrier>(32));
          slimcuda_emulation::warp_barriers[w] = warps.back().get();
        }
        slimcuda_emulation::block_barrier = &block;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < kThreads; ++t) {
          threads.emplace_back([&a, t, x, y, z] {
            slimcuda_emulation::thread_index = {t, 0, 0};
            slimcuda_emulation::block_index = {x, y, z};
            attention_kernel<float, NC>(a);
          });
        }
        for (std::thread& t : threads) t.join();
        for (size_t i = n; i < n + kGuard; ++i) {
          ASSERT_TRUE(smem[i].x == 1.5f && smem[i].y == 2.5f && smem[i].z == 3.5f && smem[i].w == 4.5f)
              << "shared memory written past its " << bytes << " bytes";
        }
      }
    }
  }
}

void run(const AttentionKernelArgs& a) {
  switch ((a.head_dim_v + 31) / 32) {
    case 0:
    case 1:
      return run_grid<1>(a);
    case 2:
      return run_grid<2>(a);
    case 3:
      return run_grid<3>(a);
    case 4:
      return run_grid<4>(a);
    case 5:
      return run_grid<5>(a);
    default:
      return run_grid<8>(a);
  }
}

struct Config {
  int batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, head_dim_v;
  bool causal;
  enum Bias { None, Additive, Mask, BroadcastAdditive } bias;
  bool bshd;  // q/k/v stored [B, S, H, D] and seen transposed
};

class AttentionKernelEmulation : public ::testing::TestWithParam<Config> {};

TEST_P(AttentionKernelEmulation, MatchesTheReference) {
  const Config c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(c.seq_q * 131 + c.seq_kv * 7 + c.head_dim));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto strides = [&](int heads, int seq, int dim) {
    return c.bshd ? std::vector<int64_t>{int64_t{seq} * heads * dim, dim, int64_t{heads} * dim, 1}
                  : std::vector<int64_t>{int64_t{heads} * seq * dim, int64_t{seq} * dim, dim, 1};
  };
  const std::vector<int64_t> qs = strides(c.heads_q, c.seq_q, c.head_dim);
  const std::vector<int64_t> ks = strides(c.heads_kv, c.seq_kv, c.head_dim);
  const std::vector<int64_t> vs = strides(c.heads_kv, c.seq_kv, c.head_dim_v);
  std::vector<float> q(size_t{1} * c.batch * c.heads_q * c.seq_q * c.head_dim);
  std::vector<float> k(size_t{1} * c.batch * c.heads_kv * c.seq_kv * c.head_dim);
  std::vector<float> v(size_t{1} * c.batch * c.heads_kv * c.seq_kv * c.head_dim_v);
  for (float& x : q) x = u(rng);
  for (float& x : k) x = u(rng);
  for (float& x : v) x = u(rng);
  // Bias [Sq, Skv] (broadcast over batch and heads: strides 0), or [B, 1, 1, Skv].
  std::vector<float> bias_f(size_t{1} * c.batch * c.seq_q * c.seq_kv);
  std::vector<unsigned char> mask(size_t{1} * c.seq_q * c.seq_kv);
  for (float& x : bias_f) x = 2.0f * u(rng);
  for (unsigned char& m : mask) m = u(rng) > -0.5f ? 1 : 0;
  if (c.seq_q > 1) {
    for (int j = 0; j < c.seq_kv; ++j) mask[size_t{1} * c.seq_kv + j] = 0;  // row 1: every key masked
  }

  AttentionKernelArgs a;
  a.batch = c.batch, a.heads_q = c.heads_q, a.heads_kv = c.heads_kv, a.seq_q = c.seq_q, a.seq_kv = c.seq_kv;
  a.head_dim = c.head_dim, a.head_dim_v = c.head_dim_v;
  a.q = q.data(), a.k = k.data(), a.v = v.data();
  for (int i = 0; i < 4; ++i) a.q_strides[i] = qs[i], a.k_strides[i] = ks[i], a.v_strides[i] = vs[i];
  switch (c.bias) {
    case Config::Additive:
      a.bias = bias_f.data(), a.bias_dtype = AttnType::F32;
      a.bias_strides[2] = c.seq_kv, a.bias_strides[3] = 1;
      break;
    case Config::Mask:
      a.bias = mask.data(), a.bias_dtype = AttnType::Bool;
      a.bias_strides[2] = c.seq_kv, a.bias_strides[3] = 1;
      break;
    case Config::BroadcastAdditive:
      a.bias = bias_f.data(), a.bias_dtype = AttnType::F32;
      a.bias_strides[0] = c.seq_kv, a.bias_strides[3] = 1;
      break;
    case Config::None:
      break;
  }
  a.causal = c.causal;
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  // The output laid out [B, Sq, H, Dv] (the efficient op's layout), the logsumexp padded.
  std::vector<float> out(size_t{1} * c.batch * c.seq_q * c.heads_q * c.head_dim_v, NAN);
  const int64_t padded = (c.seq_q + 31) / 32 * 32;
  std::vector<float> lse(size_t{1} * c.batch * c.heads_q * padded, NAN);
  a.out = out.data();
  a.out_strides[0] = int64_t{c.seq_q} * c.heads_q * c.head_dim_v, a.out_strides[1] = c.head_dim_v;
  a.out_strides[2] = int64_t{c.heads_q} * c.head_dim_v, a.out_strides[3] = 1;
  a.lse = lse.data();
  a.lse_strides[0] = c.heads_q * padded, a.lse_strides[1] = padded, a.lse_strides[2] = 1;
  run(a);
  if (HasFatalFailure()) return;

  int bad = 0;
  for (int b = 0; b < c.batch; ++b) {
    for (int h = 0; h < c.heads_q; ++h) {
      const int hk = h / (c.heads_q / c.heads_kv);
      for (int i = 0; i < c.seq_q; ++i) {
        std::vector<double> s(c.seq_kv);
        double max = -INFINITY;
        for (int j = 0; j < c.seq_kv; ++j) {
          double x = -INFINITY;
          if (!c.causal || j <= i) {
            double dot = 0.0;
            for (int d = 0; d < c.head_dim; ++d) {
              dot += double{q[b * qs[0] + h * qs[1] + i * qs[2] + d]} * k[b * ks[0] + hk * ks[1] + j * ks[2] + d];
            }
            x = dot * a.scale;
            if (c.bias == Config::Additive) x += bias_f[size_t{1} * i * c.seq_kv + j];
            if (c.bias == Config::BroadcastAdditive) x += bias_f[size_t{1} * b * c.seq_kv + j];
            if (c.bias == Config::Mask && mask[size_t{1} * i * c.seq_kv + j] == 0) x = -INFINITY;
          }
          s[j] = x;
          max = std::max(max, x);
        }
        double sum = 0.0;
        for (double& x : s) {
          x = max == -INFINITY ? 0.0 : std::exp(x - max);
          sum += x;
        }
        for (int d = 0; d < c.head_dim_v && bad < 5; ++d) {
          double o = 0.0;
          for (int j = 0; j < c.seq_kv; ++j) o += s[j] * v[b * vs[0] + hk * vs[1] + j * vs[2] + d];
          o = sum > 0.0 ? o / sum : 0.0;
          const float got = out[b * a.out_strides[0] + h * a.out_strides[1] + i * a.out_strides[2] + d];
          if (!(std::fabs(got - o) <= 2e-6 + 2e-6 * std::fabs(o))) {
            ADD_FAILURE() << "out[" << b << "," << h << "," << i << "," << d << "] = " << got << ", want " << o;
            ++bad;
          }
        }
        const double want_lse = sum > 0.0 ? max + std::log(sum) : 0.0;
        const float got_lse = lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i];
        if (bad < 5 && !(std::fabs(got_lse - want_lse) <= 2e-6 + 2e-6 * std::fabs(want_lse))) {
          ADD_FAILURE() << "lse[" << b << "," << h << "," << i << "] = " << got_lse << ", want " << want_lse;
          ++bad;
        }
      }
    }
  }
  // Only the first Sq entries of a padded logsumexp row are the kernel's to write.
  for (int b = 0; b < c.batch; ++b) {
    for (int h = 0; h < c.heads_q; ++h) {
      for (int64_t i = c.seq_q; i < padded; ++i) EXPECT_TRUE(std::isnan(lse[b * a.lse_strides[0] + h * padded + i]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionKernelEmulation,
                         ::testing::Values(Config{1, 1, 1, 5, 7, 16, 16, false, Config::None, false},
                                           Config{2, 2, 2, 17, 40, 40, 40, true, Config::None, true},
                                           Config{1, 4, 2, 33, 33, 64, 64, true, Config::Additive, false},
                                           Config{1, 1, 1, 3, 70, 3, 5, false, Config::Mask, false},
                                           Config{1, 2, 2, 20, 9, 80, 80, true, Config::Mask, true},
                                           Config{1, 1, 1, 16, 32, 256, 256, false, Config::Additive, false},
                                           Config{1, 1, 1, 1, 100, 33, 33, false, Config::None, false},
                                           Config{1, 2, 1, 40, 40, 128, 96, false, Config::Mask, false},
                                           Config{2, 1, 1, 7, 3, 8, 8, true, Config::None, false},
                                           Config{2, 2, 2, 19, 45, 24, 24, false, Config::BroadcastAdditive, true},
                                           Config{1, 1, 1, 4, 0, 8, 8, false, Config::None, false},
                                           Config{1, 1, 1, 6, 6, 160, 136, true, Config::None, false}));

}  // namespace
}  // namespace slimcuda::ops
