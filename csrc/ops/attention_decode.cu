// SPDX-License-Identifier: Apache-2.0
// Decode attention (attention_decode.h), flash-decoding style. Memory-bound: each key and
// value row is read once, 16 bytes per lane, and serves every query row of its KV head.
//
// Partial kernel: grid (splits, heads_kv x row groups, batch), 4 warps. A block owns one
// chunk of keys of one KV head and up to QR query rows (the GQA group's heads x seq_q). A
// key is handled by G = D / 8 lanes, each holding 8 of its head-dim elements, so a warp
// takes P = 32 / G keys per step and U steps at once (8 keys, 4 KiB of K and V for D = 128,
// in flight per warp). Each lane group keeps an online softmax (running max, sum, output
// slice) per row; the groups are merged by shuffles within a warp and through shared memory
// across warps. One split: the block normalizes and writes out. More: it writes its
// unnormalized output with its max and sum to the workspace, and the combine kernel (one
// warp per query row) rescales the chunks to the common max and adds them up.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/ops/attention_decode.h"
#include "csrc/ops/attention_kernel_device.h"

namespace slimcuda::ops {
namespace {

using attention_device::bias_log2;
using attention_device::kLn2;
using attention_device::kLog2e;
using attention_device::warp_max;
using attention_device::warp_sum;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kKeysPerWarpRound = 8;
constexpr int kKeysPerRound = kWarps * kKeysPerWarpRound;  // a chunk is a multiple of this
// QR, query rows per block: at 8 the D = 128 kernel spilled (255 registers); a GQA group
// larger than this takes more row groups, which read the same K/V, mostly from L2.
constexpr int kMaxRows = 4;
constexpr unsigned kFull = 0xffffffffu;

struct Params {
  AttentionKernelArgs a;
  int64_t group;        // query heads per KV head
  int64_t rows_per_kv;  // group * seq_q: the query rows one KV head serves
  int64_t row_groups;   // blocks along those rows
  int64_t kv_end;       // keys any row may attend to (causal: j <= i < seq_q)
  int64_t chunk, splits;
  float* ws;  // splits > 1: [rows][splits][D] outputs, then [rows][splits] maxima, then sums
};

__device__ __forceinline__ uint4 load_streamed(const void* p) {
  uint4 v;
  // Read once per call: kept out of L1.
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

__device__ __forceinline__ void widen(const uint4& v, __nv_bfloat16, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ void widen(const uint4& v, __half, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 h;
    memcpy(&h, &w[i], sizeof h);
    const float2 p = __half22float2(h);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// exp2 of x - m with m the running max: a max of -inf (nothing attended yet) subtracts 0,
// which keeps exp2(-inf) at 0 instead of NaN.
__device__ __forceinline__ float safe_max(float m) { return m == -INFINITY ? 0.0f : m; }

// Which query row r of block row group `rg` is: its head and position; false past the rows.
__device__ __forceinline__ bool query_row(const Params& p, int64_t hk, int64_t rg, int r, int64_t* hq, int64_t* iq) {
  int64_t rr = rg * kMaxRows + r;
  const bool active = rr < p.rows_per_kv;
  if (!active) rr = p.rows_per_kv - 1;  // read a real row, write nothing
  *hq = hk * p.group + rr / p.a.seq_q;
  *iq = rr % p.a.seq_q;
  return active;
}

template <typename T, int D, int QR>
__global__ void __launch_bounds__(kThreads) decode_partial(Params p) {
  constexpr int G = D / 8;   // lanes per key
  constexpr int P = 32 / G;  // keys per warp step
  constexpr int U = kKeysPerWarpRound / P;
  __shared__ float s_acc[kWarps][QR][D];
  __shared__ float s_m[kWarps][QR], s_l[kWarps][QR];
  const AttentionKernelArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane / G, sub = lane % G;
  const int64_t split = blockIdx.x, b = blockIdx.z;
  const int64_t hk = blockIdx.y / p.row_groups, rg = blockIdx.y % p.row_groups;

  int64_t hq[QR], iq[QR];
  bool active[QR];
  float q[QR][8];
  const float qscale = a.scale * kLog2e;  // scores in base-2 units
#pragma unroll
  for (int r = 0; r < QR; ++r) {
    active[r] = query_row(p, hk, rg, r, &hq[r], &iq[r]);
    const T* qr = static_cast<const T*>(a.q) + b * a.q_strides[0] + hq[r] * a.q_strides[1] + iq[r] * a.q_strides[2];
#pragma unroll
    for (int e = 0; e < 8; ++e) q[r][e] = to_float(qr[(sub * 8 + e) * a.q_strides[3]]) * qscale;
  }
  const T* kbase = static_cast<const T*>(a.k) + b * a.k_strides[0] + hk * a.k_strides[1] + sub * 8;
  const T* vbase = static_cast<const T*>(a.v) + b * a.v_strides[0] + hk * a.v_strides[1] + sub * 8;

  float m[QR], l[QR], acc[QR][8];
#pragma unroll
  for (int r = 0; r < QR; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[r][e] = 0.0f;
  }
  const int64_t begin = split * p.chunk;
  const int64_t end = begin + p.chunk < p.kv_end ? begin + p.chunk : p.kv_end;
  for (int64_t j0 = begin + warp * kKeysPerWarpRound; j0 < end; j0 += kKeysPerRound) {
    // All of the round's K and V loads first: 2 U vectors in flight per lane.
    uint4 kr[U], vr[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t j = j0 + u * P + g;
      const bool valid = j < end;
      kr[u] = valid ? load_streamed(kbase + j * a.k_strides[2]) : make_uint4(0, 0, 0, 0);
      vr[u] = valid ? load_streamed(vbase + j * a.v_strides[2]) : make_uint4(0, 0, 0, 0);
    }
    float s[U][QR];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t j = j0 + u * P + g;
      float kf[8];
      widen(kr[u], T{}, kf);
#pragma unroll
      for (int r = 0; r < QR; ++r) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot = fmaf(q[r][e], kf[e], dot);
#pragma unroll
        for (int o = 1; o < G; o <<= 1) dot += __shfl_xor_sync(kFull, dot, o);
        float x = -INFINITY;
        if (j < end && (!a.causal || j <= iq[r])) {
          x = dot;
          if (a.bias != nullptr) {
            x += bias_log2(
                a.bias, a.bias_dtype,
                b * a.bias_strides[0] + hq[r] * a.bias_strides[1] + iq[r] * a.bias_strides[2] + j * a.bias_strides[3]);
          }
        }
        s[u][r] = x;
      }
    }
    float vf[U][8];
#pragma unroll
    for (int u = 0; u < U; ++u) widen(vr[u], T{}, vf[u]);
#pragma unroll
    for (int r = 0; r < QR; ++r) {
      float mx = m[r];
#pragma unroll
      for (int u = 0; u < U; ++u) mx = fmaxf(mx, s[u][r]);
      const float mu = safe_max(mx);
      const float corr = exp2f(m[r] - mu);
      l[r] *= corr;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][e] *= corr;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float pr = exp2f(s[u][r] - mu);
        l[r] += pr;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[r][e] = fmaf(pr, vf[u][e], acc[r][e]);
      }
      m[r] = mx;
    }
  }

  // Merge the warp's P lane groups (a butterfly: afterwards every group holds the merge).
#pragma unroll
  for (int o = G; o < 32; o <<= 1) {
#pragma unroll
    for (int r = 0; r < QR; ++r) {
      const float mo = __shfl_xor_sync(kFull, m[r], o), lo = __shfl_xor_sync(kFull, l[r], o);
      const float mx = fmaxf(m[r], mo), mu = safe_max(mx);
      const float cs = exp2f(m[r] - mu), co = exp2f(mo - mu);
      l[r] = l[r] * cs + lo * co;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][e] = acc[r][e] * cs + __shfl_xor_sync(kFull, acc[r][e], o) * co;
      m[r] = mx;
    }
  }
  if (g == 0) {
#pragma unroll
    for (int r = 0; r < QR; ++r) {
#pragma unroll
      for (int e = 0; e < 8; ++e) s_acc[warp][r][sub * 8 + e] = acc[r][e];
      if (sub == 0) s_m[warp][r] = m[r], s_l[warp][r] = l[r];
    }
  }
  __syncthreads();

  // Across the warps: thread t finishes element d of row r.
  for (int t = threadIdx.x; t < QR * D; t += kThreads) {
    const int r = t / D, d = t % D;
    int64_t h, i;
    if (!query_row(p, hk, rg, r, &h, &i)) continue;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_m[w][r]);
    const float mu = safe_max(mx);
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float c = exp2f(s_m[w][r] - mu);
      sum = fmaf(s_l[w][r], c, sum);
      out = fmaf(s_acc[w][r][d], c, out);
    }
    const int64_t row = (b * a.heads_q + h) * a.seq_q + i;
    if (p.splits == 1) {
      // A row no key may attend to (sum 0) is 0 with logsumexp 0, as the own kernel gives it.
      T* o = static_cast<T*>(a.out) + b * a.out_strides[0] + h * a.out_strides[1] + i * a.out_strides[2];
      from_float(sum > 0.0f ? out / sum : 0.0f, &o[d * a.out_strides[3]]);
      if (d == 0 && a.lse != nullptr) {
        a.lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i * a.lse_strides[2]] =
            sum > 0.0f ? (mx + log2f(sum)) * kLn2 : 0.0f;
      }
    } else {
      const int64_t rows = a.batch * a.heads_q * a.seq_q;
      p.ws[(row * p.splits + split) * D + d] = out;
      if (d == 0) {
        p.ws[rows * p.splits * D + row * p.splits + split] = mx;
        p.ws[rows * p.splits * (D + 1) + row * p.splits + split] = sum;
      }
    }
  }
}

// One warp per query row: the chunks' outputs rescaled to their common max and summed.
template <typename T, int D>
__global__ void __launch_bounds__(kThreads) decode_combine(Params p) {
  const AttentionKernelArgs& a = p.a;
  const int lane = threadIdx.x & 31;
  const int64_t rows = a.batch * a.heads_q * a.seq_q;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (row >= rows) return;
  const float* acc = p.ws + row * p.splits * D;
  const float* ms = p.ws + rows * p.splits * D + row * p.splits;
  const float* ls = p.ws + rows * p.splits * (D + 1) + row * p.splits;
  float mx = -INFINITY;
  for (int64_t s = lane; s < p.splits; s += 32) mx = fmaxf(mx, ms[s]);
  mx = warp_max(mx);
  const float mu = safe_max(mx);
  float sum = 0.0f;
  for (int64_t s = lane; s < p.splits; s += 32) sum = fmaf(ls[s], exp2f(ms[s] - mu), sum);
  sum = warp_sum(sum);
  float out[D / 32];
#pragma unroll
  for (int c = 0; c < D / 32; ++c) out[c] = 0.0f;
  for (int64_t s = 0; s < p.splits; ++s) {
    const float w = exp2f(ms[s] - mu);
#pragma unroll
    for (int c = 0; c < D / 32; ++c) out[c] = fmaf(acc[s * D + lane + 32 * c], w, out[c]);
  }
  const int64_t i = row % a.seq_q, h = (row / a.seq_q) % a.heads_q, b = row / (a.seq_q * a.heads_q);
  T* o = static_cast<T*>(a.out) + b * a.out_strides[0] + h * a.out_strides[1] + i * a.out_strides[2];
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
  for (int c = 0; c < D / 32; ++c) from_float(out[c] * inv, &o[(lane + 32 * c) * a.out_strides[3]]);
  if (lane == 0 && a.lse != nullptr) {
    a.lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i * a.lse_strides[2]] =
        sum > 0.0f ? (mx + log2f(sum)) * kLn2 : 0.0f;
  }
}

// Query rows per KV head rounded up to a power of two, at most kMaxRows.
int rows_per_block(int64_t rows) {
  int qr = 1;
  while (qr < kMaxRows && qr < rows) qr *= 2;
  return qr;
}

template <typename T, int D>
void launch_partial(const Params& p, int qr, dim3 grid, cudaStream_t stream) {
  switch (qr) {
    case 1:
      decode_partial<T, D, 1><<<grid, kThreads, 0, stream>>>(p);
      break;
    case 2:
      decode_partial<T, D, 2><<<grid, kThreads, 0, stream>>>(p);
      break;
    default:
      decode_partial<T, D, 4><<<grid, kThreads, 0, stream>>>(p);
      break;
  }
}

template <typename T>
void launch_typed(const Params& p, int qr, dim3 grid, cudaStream_t stream) {
  if (p.a.head_dim == 64) {
    launch_partial<T, 64>(p, qr, grid, stream);
  } else {
    launch_partial<T, 128>(p, qr, grid, stream);
  }
}

template <typename T>
void launch_combine(const Params& p, unsigned blocks, cudaStream_t stream) {
  if (p.a.head_dim == 64) {
    decode_combine<T, 64><<<blocks, kThreads, 0, stream>>>(p);
  } else {
    decode_combine<T, 128><<<blocks, kThreads, 0, stream>>>(p);
  }
}

bool vec_stride(int64_t size, int64_t stride) { return size <= 1 || stride % 8 == 0; }

std::atomic<int>& decode_state() {
  static std::atomic<int> state{-1};  // -1: SLIMCUDA_DECODE_ATTENTION not read yet; 0 off; 1 on
  return state;
}

int64_t kv_end_of(const AttentionKernelArgs& a) { return a.causal && a.seq_q < a.seq_kv ? a.seq_q : a.seq_kv; }

}  // namespace

bool decode_attention_takes(const AttentionKernelArgs& a) noexcept {
  if (a.dtype != AttnType::F16 && a.dtype != AttnType::BF16) return false;
  if (a.head_dim != a.head_dim_v || (a.head_dim != 64 && a.head_dim != 128)) return false;
  if (a.seq_q < 1 || a.seq_q > kDecodeMaxSeqQ || a.seq_kv < 1) return false;
  if (a.batch < 1 || a.batch > 65535 || a.heads_kv < 1 || a.heads_q < a.heads_kv || a.heads_q % a.heads_kv != 0) {
    return false;
  }
  const int64_t row_groups = (a.heads_q / a.heads_kv * a.seq_q + kMaxRows - 1) / kMaxRows;
  if (a.heads_kv * row_groups > 65535) return false;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.out == nullptr) return false;
  for (const void* ptr : {a.k, a.v}) {
    if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) return false;
  }
  const int64_t sizes[3] = {a.batch, a.heads_kv, a.seq_kv};
  for (const int64_t* s : {a.k_strides, a.v_strides}) {
    if (s[3] != 1) return false;
    for (int d = 0; d < 3; ++d) {
      if (!vec_stride(sizes[d], s[d])) return false;
    }
  }
  return true;
}

DecodeAttentionPlan plan_decode_attention(const AttentionKernelArgs& a, int device) noexcept {
  DecodeAttentionPlan plan;
  const int64_t rows_per_kv = a.heads_q / a.heads_kv * a.seq_q;
  const int64_t row_groups = (rows_per_kv + kMaxRows - 1) / kMaxRows;
  const int64_t blocks = a.batch * a.heads_kv * row_groups;
  const int64_t kv_end = kv_end_of(a);
  // About 4 blocks per SM (each streams a chunk of at least 32 keys), fewer when the keys run
  // out: more would only add partial results to combine.
  const int64_t want = 4 * static_cast<int64_t>(cuda::multiprocessor_count(device, 132));
  int64_t splits = (want + blocks - 1) / blocks;
  const int64_t max_splits = (kv_end + kKeysPerRound - 1) / kKeysPerRound;
  if (splits > max_splits) splits = max_splits;
  if (splits < 1) splits = 1;
  const int64_t per = (kv_end + splits - 1) / splits;
  plan.chunk = (per + kKeysPerRound - 1) / kKeysPerRound * kKeysPerRound;
  plan.splits = (kv_end + plan.chunk - 1) / plan.chunk;
  if (plan.splits > 1) {
    const int64_t rows = a.batch * a.heads_q * a.seq_q;
    plan.workspace_bytes = static_cast<size_t>(rows * plan.splits * (a.head_dim + 2)) * sizeof(float);
  }
  return plan;
}

Error launch_decode_attention(const AttentionKernelArgs& a, const DecodeAttentionPlan& plan, void* workspace,
                              cudaStream_t stream, const char* function) noexcept {
  if (!decode_attention_takes(a) || plan.splits < 1 || plan.chunk < 1 ||
      (plan.splits > 1 && (workspace == nullptr || plan.workspace_bytes == 0))) {
    return set_last_error(Error::InvalidArgument, function,
                          "decode attention launched on a problem or plan it does not take (seq_q %lld, head dim %lld, "
                          "%lld splits)",
                          static_cast<long long>(a.seq_q), static_cast<long long>(a.head_dim),
                          static_cast<long long>(plan.splits));
  }
  Params p{};
  p.a = a;
  p.group = a.heads_q / a.heads_kv;
  p.rows_per_kv = p.group * a.seq_q;
  const int qr = rows_per_block(p.rows_per_kv);
  p.row_groups = (p.rows_per_kv + kMaxRows - 1) / kMaxRows;
  p.kv_end = kv_end_of(a);
  p.chunk = plan.chunk, p.splits = plan.splits;
  p.ws = static_cast<float*>(workspace);
  // Rows of one KV head beyond kMaxRows go to further row groups; query_row's index assumes
  // kMaxRows rows per group, so a block of qr < kMaxRows rows only ever exists alone.
  const dim3 grid(static_cast<unsigned>(p.splits), static_cast<unsigned>(a.heads_kv * p.row_groups),
                  static_cast<unsigned>(a.batch));
  const bool half = a.dtype == AttnType::F16;
  if (half) {
    launch_typed<__half>(p, qr, grid, stream);
  } else {
    launch_typed<__nv_bfloat16>(p, qr, grid, stream);
  }
  SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
  if (p.splits > 1) {
    const int64_t rows = a.batch * a.heads_q * a.seq_q;
    const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
    if (half) {
      launch_combine<__half>(p, blocks, stream);
    } else {
      launch_combine<__nv_bfloat16>(p, blocks, stream);
    }
    SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
  }
  return Error::Ok;
}

bool decode_attention_enabled() noexcept {
  std::atomic<int>& state = decode_state();
  int s = state.load(std::memory_order_relaxed);
  if (s < 0) {
    const char* v = std::getenv("SLIMCUDA_DECODE_ATTENTION");
    const int read = v != nullptr && std::strcmp(v, "0") == 0 ? 0 : 1;
    state.compare_exchange_strong(s, read, std::memory_order_relaxed);  // an override wins
    s = state.load(std::memory_order_relaxed);
  }
  return s == 1;
}

void set_decode_attention_enabled(bool enabled) noexcept {
  decode_state().store(enabled ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace slimcuda::ops
