// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/scatter/scatter_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? b : 65535);
}

__device__ __forceinline__ int64_t first_item() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ int64_t item_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__device__ void copy_bytes(char* to, const char* from, int es) {
  for (int b = 0; b < es; ++b) to[b] = from[b];
}

// *p = *p (op) *from, atomically, for an element of any dtype.
__device__ void atomic_reduce(char* p, int dtype, int es, ScatterReduce op, const char* from) {
  if (op == ScatterReduce::Sum || op == ScatterReduce::Mean) {
    switch (static_cast<ScalarType>(dtype)) {
      case ScalarType::Float:
        atomicAdd(reinterpret_cast<float*>(p), convert::read_as<float>(from));
        return;
      case ScalarType::Double:
        atomicAdd(reinterpret_cast<double*>(p), convert::read_as<double>(from));
        return;
      case ScalarType::Half:
        atomicAdd(reinterpret_cast<__half*>(p), convert::read_as<__half>(from));
        return;
      case ScalarType::BFloat16:
        atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), convert::read_as<__nv_bfloat16>(from));
        return;
      case ScalarType::Int:
        atomicAdd(reinterpret_cast<int*>(p), convert::read_as<int>(from));
        return;
      case ScalarType::Long:
        atomicAdd(reinterpret_cast<unsigned long long*>(p),
                  static_cast<unsigned long long>(convert::read_as<int64_t>(from)));
        return;
      default:
        break;
    }
  }
  const convert::Wide b = convert::load(from, dtype);
  if (es == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, assumed = 0;
    do {
      assumed = old;
      char buf[8];
      memcpy(buf, &assumed, 8);
      convert::store(buf, dtype, combine(op, convert::load(buf, dtype), b));
      unsigned long long next = 0;
      memcpy(&next, buf, 8);
      old = atomicCAS(w, assumed, next);
    } while (old != assumed);
    return;
  }
  // 1, 2 or 4 bytes: the aligned 32-bit word that holds the element.
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto* w = reinterpret_cast<unsigned int*>(a & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(a & 3u) * 8u;
  const unsigned bits = es == 4 ? 0xffffffffu : ((1u << (es * 8)) - 1u);
  unsigned old = *w, assumed = 0;
  do {
    assumed = old;
    const unsigned cur = assumed >> shift;
    char buf[4];
    memcpy(buf, &cur, 4);
    convert::store(buf, dtype, combine(op, convert::load(buf, dtype), b));
    unsigned v = 0;
    memcpy(&v, buf, 4);
    const unsigned next = (assumed & ~(bits << shift)) | ((v & bits) << shift);
    old = atomicCAS(w, assumed, next);
  } while (old != assumed);
}

// The element of out index element e goes to; false for an index out of range.
__device__ __forceinline__ bool scatter_target(const ScatterLaunch& s, int64_t e, int64_t* out_at, int64_t* src_at,
                                               int64_t* count_at) {
  int64_t ix = 0, o = 0, c = 0;
  scatter_offsets(s.layout, e, &ix, src_at, &o, &c);
  const int64_t v = read_index(s.index, s.layout.index_64, ix);
  if (v < 0 || v >= s.layout.dim_size) return false;
  *out_at = o + v * s.layout.dim_stride;
  *count_at = c + v * s.layout.count_step;
  return true;
}

__global__ void scatter_identity(ScatterLaunch s) {
  char* out = static_cast<char*>(s.out);
  for (int64_t e = first_item(); e < s.layout.numel; e += item_step()) {
    int64_t o = 0, src = 0, c = 0;
    if (scatter_target(s, e, &o, &src, &c)) copy_bytes(out + o * s.es, reinterpret_cast<const char*>(s.identity), s.es);
  }
}

__global__ void scatter_apply(ScatterLaunch s) {
  char* out = static_cast<char*>(s.out);
  const char* src = static_cast<const char*>(s.src);
  for (int64_t e = first_item(); e < s.layout.numel; e += item_step()) {
    int64_t o = 0, at = 0, c = 0;
    if (!scatter_target(s, e, &o, &at, &c)) continue;
    const char* from = src != nullptr ? src + at * s.es : reinterpret_cast<const char*>(s.value);
    if (s.reduce == ScatterReduce::None) {
      copy_bytes(out + o * s.es, from, s.es);
      continue;
    }
    atomic_reduce(out + o * s.es, s.dtype, s.es, s.reduce, from);
    if (s.counts != nullptr) atomicAdd(reinterpret_cast<unsigned long long*>(s.counts + c), 1ull);
  }
}

__global__ void scatter_mean_divide(ScatterLaunch s) {
  char* out = static_cast<char*>(s.out);
  for (int64_t j = first_item(); j < s.out_numel; j += item_step()) {
    const int64_t n = s.counts[j];
    if (n == 0) continue;
    char* at = out + strided_offset(s.out_rank, s.out_sizes, s.out_strides, j) * s.es;
    convert::store(at, s.dtype, mean_of(convert::load(at, s.dtype), n + (s.include_self ? 1 : 0)));
  }
}

__global__ void index_put_kernel(IndexPutLaunch s) {
  char* out = static_cast<char*>(s.out);
  const char* values = static_cast<const char*>(s.values);
  for (int64_t e = first_item(); e < s.layout.numel; e += item_step()) {
    int64_t o = 0, v = 0;
    if (!index_put_target(s.layout, e, &o, &v)) continue;
    if (s.accumulate) {
      atomic_reduce(out + o * s.es, s.dtype, s.es, ScatterReduce::Sum, values + v * s.es);
    } else {
      copy_bytes(out + o * s.es, values + v * s.es, s.es);
    }
  }
}

}  // namespace

Error launch_scatter(const ScatterLaunch& s, cudaStream_t stream) noexcept {
  const int64_t n = s.layout.numel;
  if (n == 0) return Error::Ok;
  if (s.reduce != ScatterReduce::None && !s.include_self) {
    scatter_identity<<<blocks_for(n), kThreads, 0, stream>>>(s);
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
  }
  if (s.counts != nullptr) {
    SLIMCUDA_CUDA_TRY(cudaMemsetAsync(s.counts, 0, static_cast<size_t>(s.out_numel) * sizeof(int64_t), stream));
  }
  scatter_apply<<<blocks_for(n), kThreads, 0, stream>>>(s);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  if (s.counts != nullptr && s.out_numel > 0) {
    scatter_mean_divide<<<blocks_for(s.out_numel), kThreads, 0, stream>>>(s);
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
  }
  return Error::Ok;
}

Error launch_index_put(const IndexPutLaunch& s, cudaStream_t stream) noexcept {
  if (s.layout.numel == 0) return Error::Ok;
  index_put_kernel<<<blocks_for(s.layout.numel), kThreads, 0, stream>>>(s);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
