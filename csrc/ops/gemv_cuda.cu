// SPDX-License-Identifier: Apache-2.0
// The small-m GEMV (gemv_cuda.h). Memory-bound by design: every weight byte is read once,
// 16 bytes per load, streamed past L1; x (at most 8 rows) is reused from registers across
// the rows a warp owns and from L1 across the warps of a block.
//
// Work split: a warp owns R consecutive weight rows (output columns j) and reduces them
// over k for all m inputs at once, so each loaded weight vector serves m products. Where
// the rows alone give too few warps to keep the HBM busy (n = 2048), S = 2 or 4 warps of a
// block share the rows, each a slice of k, and add their sums in shared memory: no split-K
// workspace, no second kernel. Block: 4 warps; grid: (ceil(n / rows per block), batch).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/ops/device_elements.cuh"
#include "csrc/ops/gemv_cuda.h"

namespace slimcuda::ops {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kVec = 8;  // elements per 16-byte load

struct Params {
  int64_t m, n, k;
  const uint4* x;
  int64_t x_batch, x_row;  // in 16-byte vectors
  const uint4* w;
  int64_t w_batch, w_row;  // in 16-byte vectors
  const void* self;
  int64_t self_strides[3];
  float alpha, beta;
  void* out;
  int64_t out_strides[3];
  GemmEpilogue act;
  int splits;  // S: warps sharing a row group, each a slice of k
};

// A weight vector, read once: not kept in L1 (nothing else in the block reads it), and the
// L2 asked to fetch the whole 256-byte line (the neighbouring lanes' vectors).
__device__ __forceinline__ uint4 load_streamed(const uint4* p) {
  uint4 v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
#else
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
#endif
  return v;
}

// Eight packed elements as floats (exact: both formats widen without rounding).
__device__ __forceinline__ void widen(const uint4& v, __nv_bfloat16, float (&f)[kVec]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ void widen(const uint4& v, __half, float (&f)[kVec]) {
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

// Sums V values (a power of two, at most 32) over the warp with V - 1 + log2(32 / V)
// shuffles instead of 5 V: at each step a lane keeps half of its values and trades the other
// half with its partner (a reduce-scatter). Afterwards v[0] holds the warp's sum of value
// *index, which every lane with the same index holds alike. One step per template instance,
// so that every index is a constant (a loop left rolled put v in local memory).
template <int V, int Step = 0>
__device__ __forceinline__ void warp_reduce_scatter(float (&v)[V], int lane, int* index) {
  static_assert(V >= 1 && V <= 32 && (V & (V - 1)) == 0, "V must be a power of two <= 32");
  if constexpr (Step < 5) {
    constexpr int kOffset = 16 >> Step, kCount = V >> Step;
    if constexpr (kCount > 1) {
      constexpr int kHalf = kCount / 2;
      const bool upper = (lane & kOffset) != 0;
#pragma unroll
      for (int i = 0; i < kHalf; ++i) {
        const float send = upper ? v[i] : v[i + kHalf];
        const float keep = upper ? v[i + kHalf] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, kOffset);
      }
      if (upper) *index += kHalf;
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], kOffset);
    }
    warp_reduce_scatter<V, Step + 1>(v, lane, index);
  }
}

__device__ __forceinline__ float activate(float v, GemmEpilogue act) {
  if (act == GemmEpilogue::Relu) return v > 0.0f ? v : 0.0f;
  if (act == GemmEpilogue::GeluTanh) return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  return v;
}

// M: m rounded up to a power of two (rows i >= m are neither read nor written); R: weight
// rows per warp, chosen so R * M <= 32 sums fit one reduce-scatter and each x vector read
// from L1 serves R rows; U: k steps in flight per lane, so that R * U = 8 weight loads (4 KiB
// per warp) are outstanding at once.
template <typename T, int M, int R>
__global__ void __launch_bounds__(kThreads) gemv_kernel(Params p) {
  constexpr int U = 8 / R;
  constexpr int V = M * R;
  __shared__ float partial[kWarps][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int slice = warp % p.splits, group = warp / p.splits;
  const int64_t b = blockIdx.y;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * (kWarps / p.splits) + group) * R;
  const int64_t kc = p.k / kVec;  // vectors per row

  const uint4* wrow[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    // Rows past n read the last row again (no divergent loads) and are not written.
    const int64_t row = row0 + r < p.n ? row0 + r : p.n - 1;
    wrow[r] = p.w + b * p.w_batch + row * p.w_row;
  }
  const uint4* xrow = p.x + b * p.x_batch;

  float acc[R][M];
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int i = 0; i < M; ++i) acc[r][i] = 0.0f;
  }
  const int64_t step = 32 * static_cast<int64_t>(p.splits);
  for (int64_t c0 = slice * 32 + lane; c0 < kc; c0 += step * U) {
    // Every weight load of this round first, then the products: R * U loads in flight.
    uint4 wv[U][R];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + u * step;
#pragma unroll
      for (int r = 0; r < R; ++r) wv[u][r] = c < kc ? load_streamed(wrow[r] + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t c = c0 + u * step;
      if (c >= kc) break;
      float wf[R][kVec];
#pragma unroll
      for (int r = 0; r < R; ++r) widen(wv[u][r], T{}, wf[r]);
#pragma unroll
      for (int i = 0; i < M; ++i) {
        if (i >= p.m) break;
        float xf[kVec];
        widen(__ldg(xrow + i * p.x_row + c), T{}, xf);
#pragma unroll
        for (int r = 0; r < R; ++r) {
#pragma unroll
          for (int e = 0; e < kVec; ++e) acc[r][i] = fmaf(wf[r][e], xf[e], acc[r][i]);
        }
      }
    }
  }

  float v[V];
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int i = 0; i < M; ++i) v[r * M + i] = acc[r][i];
  }
  int idx = 0;
  warp_reduce_scatter<V>(v, lane, &idx);
  // With V < 32 values, 32 / V lanes hold each sum; the one whose remaining bits are 0 writes.
  const bool holder = (lane & (32 / V - 1)) == 0;
  float sum = v[0];
  if (p.splits > 1) {
    if (holder) partial[warp][idx] = sum;
    __syncthreads();
    if (slice != 0) return;
    for (int s = 1; s < p.splits; ++s) sum += partial[warp + s][idx];
  }
  if (!holder) return;
  const int r = idx / M, i = idx % M;
  const int64_t row = row0 + r;
  if (row >= p.n || i >= p.m) return;
  float out = p.alpha * sum;
  if (p.self != nullptr) {
    out += p.beta * to_float(static_cast<const T*>(
                        p.self)[b * p.self_strides[0] + i * p.self_strides[1] + row * p.self_strides[2]]);
  }
  from_float(activate(out, p.act),
             &static_cast<T*>(p.out)[b * p.out_strides[0] + i * p.out_strides[1] + row * p.out_strides[2]]);
}

template <typename T, int M, int R>
void launch_typed(const Params& p, int64_t batch, int device, cudaStream_t stream) {
  // Enough warps to keep every SM's memory pipe busy (16 per SM, 4 KiB in flight each):
  // warps share rows (S = 2, 4) while the rows alone give fewer and each lane keeps at
  // least two vectors of k per slice.
  const int64_t warps = (p.n + R - 1) / R;
  const int64_t want = 16 * static_cast<int64_t>(cuda::multiprocessor_count(device, 132));
  const int64_t kc = p.k / kVec;
  Params q = p;
  q.splits = 1;
  while (q.splits < kWarps && warps * q.splits < want && kc >= 2 * 32 * (2 * q.splits)) q.splits *= 2;
  const int64_t rows_per_block = static_cast<int64_t>(kWarps / q.splits) * R;
  const dim3 grid(static_cast<unsigned>((p.n + rows_per_block - 1) / rows_per_block), static_cast<unsigned>(batch));
  gemv_kernel<T, M, R><<<grid, kThreads, 0, stream>>>(q);
}

template <typename T>
void launch_for(const Params& p, int64_t batch, int device, cudaStream_t stream) {
  if (p.m <= 1) {
    launch_typed<T, 1, 1>(p, batch, device, stream);
  } else if (p.m <= 2) {
    launch_typed<T, 2, 2>(p, batch, device, stream);
  } else if (p.m <= 4) {
    launch_typed<T, 4, 2>(p, batch, device, stream);
  } else {
    launch_typed<T, 8, 4>(p, batch, device, stream);
  }
}

bool vector_aligned(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

std::atomic<int>& gemv_state() {
  static std::atomic<int> state{-1};  // -1: SLIMCUDA_GEMV not read yet; 0 off; 1 on
  return state;
}

}  // namespace

bool gemv_takes(const GemvArgs& a) noexcept {
  if (a.type != GemmElement::Half && a.type != GemmElement::BFloat16) return false;
  if (a.m < 1 || a.m > kGemvMaxM || a.n < 1 || a.k < kVec || a.k % kVec != 0) return false;
  // The grid's limits: blocks along n in x (2^31 - 1), the batch in y.
  if (a.batch < 1 || a.batch > 65535 || a.n > 0x7fffffff) return false;
  if (a.x == nullptr || a.w == nullptr || a.out == nullptr) return false;
  if (!vector_aligned(a.x) || !vector_aligned(a.w)) return false;
  // Strides that are never used may be anything: x's row stride for m == 1, w's for n == 1,
  // the batch strides for batch == 1.
  if (a.m > 1 && a.x_row_stride % kVec != 0) return false;
  if (a.n > 1 && a.w_row_stride % kVec != 0) return false;
  if (a.batch > 1 && (a.x_batch_stride % kVec != 0 || a.w_batch_stride % kVec != 0)) return false;
  return true;
}

Error launch_gemv(const GemvArgs& a, int device, cudaStream_t stream, const char* function) noexcept {
  if (!gemv_takes(a)) {
    return set_last_error(Error::InvalidArgument, function,
                          "GEMV launched on a problem it does not take (m %lld k %lld)", static_cast<long long>(a.m),
                          static_cast<long long>(a.k));
  }
  Params p{};
  p.m = a.m, p.n = a.n, p.k = a.k;
  p.x = static_cast<const uint4*>(a.x);
  p.x_batch = a.batch > 1 ? a.x_batch_stride / kVec : 0;
  p.x_row = a.m > 1 ? a.x_row_stride / kVec : 0;
  p.w = static_cast<const uint4*>(a.w);
  p.w_batch = a.batch > 1 ? a.w_batch_stride / kVec : 0;
  p.w_row = a.n > 1 ? a.w_row_stride / kVec : 0;
  p.self = a.self;
  for (int d = 0; d < 3; ++d) p.self_strides[d] = a.self_strides[d], p.out_strides[d] = a.out_strides[d];
  if (a.batch == 1) p.self_strides[0] = p.out_strides[0] = 0;
  p.alpha = a.alpha, p.beta = a.beta;
  p.out = a.out;
  p.act = a.act;
  if (a.type == GemmElement::Half) {
    launch_for<__half>(p, a.batch, device, stream);
  } else {
    launch_for<__nv_bfloat16>(p, a.batch, device, stream);
  }
  SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
  return Error::Ok;
}

bool gemv_enabled() noexcept {
  std::atomic<int>& state = gemv_state();
  int s = state.load(std::memory_order_relaxed);
  if (s < 0) {
    const char* v = std::getenv("SLIMCUDA_GEMV");
    const int read = v != nullptr && std::strcmp(v, "0") == 0 ? 0 : 1;
    // A concurrent set_gemv_enabled wins over the variable.
    state.compare_exchange_strong(s, read, std::memory_order_relaxed);
    s = state.load(std::memory_order_relaxed);
  }
  return s == 1;
}

void set_gemv_enabled(bool enabled) noexcept { gemv_state().store(enabled ? 1 : 0, std::memory_order_relaxed); }

}  // namespace slimcuda::ops
