// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device code of slimcuda's attention kernel (launched by attention_cuda.cu). Kept in
// a header of its own so that attention_kernel_emulation_test.cc can compile the very same
// kernel for the host, with the few CUDA primitives it uses (shared memory, block and warp
// barriers, warp shuffles) emulated on threads: the kernel's logic is tested without a GPU.
// Includers provide CUDA's types and keywords (nvcc, or the emulation).
//
// The kernel: a flash-attention-style forward pass on CUDA cores. One block of four warps
// per (tile of 16 query rows, head, batch); each warp owns 4 rows. K/V tiles of 32 keys go
// through shared memory (converted to float once); scores are computed with one key per
// lane (float4 reads where the head dim allows), the softmax is online (running max and
// sum per row, base-2 exponentials), and the P·V products accumulate in registers, each
// lane owning head-dim columns lane, lane + 32, ..., the weights of one key for the warp's
// 4 rows read as one broadcast float4.

#include <cstddef>
#include <cstdint>

#include "csrc/ops/attention/attention_kernel.h"
#include "csrc/ops/common/device_elements.cuh"

// nvcc's loop unrolling hint; nothing for a host compiler (the emulation test).
#ifdef __CUDACC__
#define SLIMCUDA_UNROLL _Pragma("unroll")
#else
#define SLIMCUDA_UNROLL
#endif

#ifndef SLIMCUDA_ATTENTION_DYNAMIC_SMEM
#define SLIMCUDA_ATTENTION_DYNAMIC_SMEM(name) extern __shared__ float4 name[]
#endif

namespace slimcuda::ops::attention_device {

constexpr int kWarps = 4;
constexpr int kRowsPerWarp = 4;
constexpr int kBlockQ = kWarps * kRowsPerWarp;
constexpr int kBlockK = 32;  // one key per lane
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr unsigned kFull = 0xffffffffu;

// The bias as an additive term in base-2 units; a bool mask's false is -inf.
__device__ __forceinline__ float bias_log2(const void* base, AttnType t, int64_t off) {
  switch (t) {
    case AttnType::F32:
      return static_cast<const float*>(base)[off] * kLog2e;
    case AttnType::F16:
      return __half2float(static_cast<const __half*>(base)[off]) * kLog2e;
    case AttnType::BF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[off]) * kLog2e;
    case AttnType::Bool:
      return static_cast<const unsigned char*>(base)[off] != 0 ? 0.0f : -INFINITY;
  }
  return 0.0f;
}

__device__ __forceinline__ float warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(kFull, x, o));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(kFull, x, o);
  return x;
}

// Shared-memory row stride of the K tile, chosen so the 32 lanes reading one row each
// (key = lane) hit different banks: head dims that are multiples of 4 are read as float4
// (stride D + 4: an odd number of float4s, so each 8-lane phase covers all 32 banks), others
// as floats (an odd stride).
__host__ __device__ __forceinline__ bool vector_rows(int head_dim) { return head_dim % 4 == 0; }
__host__ __device__ __forceinline__ int k_row_stride(int head_dim) {
  return vector_rows(head_dim) ? head_dim + 4 : (head_dim | 1);
}

// Calls f(row, col) for this thread's elements of a rows x cols tile, the block's threads
// walking it in row-major order (consecutive threads, consecutive columns: coalesced reads
// of a row-contiguous operand), with one division per thread rather than one per element.
template <typename F>
__device__ __forceinline__ void for_tile(int rows, int cols, F f) {
  if (cols == 0) return;
  int r = threadIdx.x / cols, c = threadIdx.x % cols;
  const int rs = kThreads / cols, cs = kThreads % cols;
  while (r < rows) {
    f(r, c);
    r += rs;
    c += cs;
    if (c >= cols) {
      c -= cols;
      ++r;
    }
  }
}

// NC: head-dim columns per lane (ceil(head_dim_v / 32)), so the accumulators stay in registers.
template <typename T, int NC>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttentionKernelArgs a) {
  static_assert(kRowsPerWarp == 4, "a warp's softmax weights for one key are one float4");
  SLIMCUDA_ATTENTION_DYNAMIC_SMEM(smem_raw);  // float4: 16-byte aligned for the vector reads
  __shared__ float4 ps[kWarps][kBlockK];      // softmax weights of each warp's 4 rows, per key
  float* smem = reinterpret_cast<float*>(smem_raw);
  const int D = static_cast<int>(a.head_dim), Dv = static_cast<int>(a.head_dim_v);
  const bool vec = vector_rows(D);
  const int ks_stride = k_row_stride(D);
  float* qs = smem;                      // [kBlockQ][D], pre-scaled by scale * log2(e)
  float* ks = qs + kBlockQ * D;          // [kBlockK][ks_stride]
  float* vs = ks + kBlockK * ks_stride;  // [kBlockK][Dv]
  const int64_t b = blockIdx.z, h = blockIdx.y, q0 = int64_t{blockIdx.x} * kBlockQ;
  const int64_t hk = h / (a.heads_q / a.heads_kv);
  const T* q = static_cast<const T*>(a.q) + b * a.q_strides[0] + h * a.q_strides[1];
  const T* k = static_cast<const T*>(a.k) + b * a.k_strides[0] + hk * a.k_strides[1];
  const T* v = static_cast<const T*>(a.v) + b * a.v_strides[0] + hk * a.v_strides[1];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const float qscale = a.scale * kLog2e;
  for_tile(kBlockQ, D, [&](int r, int d) {
    const int64_t i = q0 + r;
    qs[r * D + d] = i < a.seq_q ? to_float(q[i * a.q_strides[2] + d * a.q_strides[3]]) * qscale : 0.0f;
  });

  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][NC];
  SLIMCUDA_UNROLL
  for (int r = 0; r < kRowsPerWarp; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    SLIMCUDA_UNROLL
    for (int c = 0; c < NC; ++c) acc[r][c] = 0.0f;
  }
  const int64_t row0 = q0 + warp * kRowsPerWarp;
  // Causal (upper-left aligned): row i sees keys j <= i, so no row of this tile sees a key
  // at or past q0 + kBlockQ: those tiles are skipped.
  int64_t kv_end = a.seq_kv;
  if (a.causal && q0 + kBlockQ < kv_end) kv_end = q0 + kBlockQ;

  for (int64_t j0 = 0; j0 < kv_end; j0 += kBlockK) {
    __syncthreads();  // the previous tile is consumed (and, the first time, Q is stored)
    for_tile(kBlockK, D, [&](int j, int d) {
      const int64_t key = j0 + j;
      ks[j * ks_stride + d] = key < a.seq_kv ? to_float(k[key * a.k_strides[2] + d * a.k_strides[3]]) : 0.0f;
    });
    for_tile(kBlockK, Dv, [&](int j, int d) {
      const int64_t key = j0 + j;
      vs[j * Dv + d] = key < a.seq_kv ? to_float(v[key * a.v_strides[2] + d * a.v_strides[3]]) : 0.0f;
    });
    __syncthreads();

    // Scores of this warp's rows against key j0 + lane (Q reads are broadcasts).
    float s[kRowsPerWarp];
    SLIMCUDA_UNROLL
    for (int r = 0; r < kRowsPerWarp; ++r) s[r] = 0.0f;
    const float* krow = ks + lane * ks_stride;
    const float* qrow = qs + warp * kRowsPerWarp * D;
    if (vec) {
      for (int d = 0; d < D; d += 4) {
        const float4 kd = *reinterpret_cast<const float4*>(krow + d);
        SLIMCUDA_UNROLL
        for (int r = 0; r < kRowsPerWarp; ++r) {
          const float4 qd = *reinterpret_cast<const float4*>(qrow + r * D + d);
          s[r] = fmaf(qd.x, kd.x, s[r]);
          s[r] = fmaf(qd.y, kd.y, s[r]);
          s[r] = fmaf(qd.z, kd.z, s[r]);
          s[r] = fmaf(qd.w, kd.w, s[r]);
        }
      }
    } else {
      for (int d = 0; d < D; ++d) {
        const float kd = krow[d];
        SLIMCUDA_UNROLL
        for (int r = 0; r < kRowsPerWarp; ++r) s[r] = fmaf(qrow[r * D + d], kd, s[r]);
      }
    }
    const int64_t j = j0 + lane;
    SLIMCUDA_UNROLL
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = row0 + r;
      float x = -INFINITY;
      if (j < a.seq_kv && i < a.seq_q && (!a.causal || j <= i)) {
        x = s[r];
        if (a.bias != nullptr) {
          x += bias_log2(a.bias, a.bias_dtype,
                         b * a.bias_strides[0] + h * a.bias_strides[1] + i * a.bias_strides[2] + j * a.bias_strides[3]);
        }
      }
      // Online softmax: rescale what was accumulated to the new running max. A row with
      // every key masked so far keeps max -inf; subtracting 0 then keeps exp2 at 0, not NaN.
      const float m_new = fmaxf(m[r], warp_max(x));
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      const float pr = exp2f(x - m_use);
      const float corr = exp2f(m[r] - m_use);
      l[r] = l[r] * corr + warp_sum(pr);
      SLIMCUDA_UNROLL
      for (int c = 0; c < NC; ++c) acc[r][c] *= corr;
      m[r] = m_new;
      s[r] = pr;
    }
    ps[warp][lane] = make_float4(s[0], s[1], s[2], s[3]);
    __syncwarp();

    // P·V: key jj's weights for the warp's rows are one broadcast float4; each lane owns
    // columns lane + 32c.
    const int nk = a.seq_kv - j0 < kBlockK ? static_cast<int>(a.seq_kv - j0) : kBlockK;
    for (int jj = 0; jj < nk; ++jj) {
      const float4 p4 = ps[warp][jj];
      const float pj[kRowsPerWarp] = {p4.x, p4.y, p4.z, p4.w};
      SLIMCUDA_UNROLL
      for (int c = 0; c < NC; ++c) {
        const int d = lane + 32 * c;
        const float vv = d < Dv ? vs[jj * Dv + d] : 0.0f;
        SLIMCUDA_UNROLL
        for (int r = 0; r < kRowsPerWarp; ++r) acc[r][c] = fmaf(pj[r], vv, acc[r][c]);
      }
    }
    __syncwarp();  // ps is rewritten by the next tile
  }

  T* out = static_cast<T*>(a.out) + b * a.out_strides[0] + h * a.out_strides[1];
  SLIMCUDA_UNROLL
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = row0 + r;
    if (i >= a.seq_q) continue;
    // A row no key may attend to (l == 0) is 0, as PyTorch's kernels give it.
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    SLIMCUDA_UNROLL
    for (int c = 0; c < NC; ++c) {
      const int d = lane + 32 * c;
      if (d < Dv) from_float(acc[r][c] * inv, &out[i * a.out_strides[2] + d * a.out_strides[3]]);
    }
    if (a.lse != nullptr && lane == 0) {
      a.lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i * a.lse_strides[2]] =
          l[r] > 0.0f ? (m[r] + log2f(l[r])) * kLn2 : 0.0f;
    }
  }
}

/// Dynamic shared memory of one block: the Q tile, the K tile (padded rows), the V tile.
__host__ __device__ __forceinline__ size_t attention_smem_bytes(int head_dim, int head_dim_v) {
  return sizeof(float) *
         (static_cast<size_t>(kBlockQ) * head_dim + static_cast<size_t>(kBlockK) * k_row_stride(head_dim) +
          static_cast<size_t>(kBlockK) * head_dim_v);
}

}  // namespace slimcuda::ops::attention_device
