// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/device_elements.cuh"
#include "csrc/ops/embedding/embedding_bag_kernel.h"

namespace slimcuda::ops {
namespace {

__device__ __forceinline__ double to_acc(double x) { return x; }
template <typename T>
__device__ __forceinline__ float to_acc(T x) {
  return to_float(x);
}
__device__ __forceinline__ void store_acc(double x, double* out) { *out = x; }
template <typename T>
__device__ __forceinline__ void store_acc(float x, T* out) {
  from_float(x, out);
}

__device__ __forceinline__ int64_t load_index(const void* p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
}

__device__ __forceinline__ void store_index(void* p, bool is64, int64_t i, int64_t v) {
  if (is64) {
    static_cast<int64_t*>(p)[i] = v;
  } else {
    static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  }
}

// [begin, end) of bag b, clamped into [0, n].
__device__ __forceinline__ void bag_range(const BagLaunch& l, int64_t b, int64_t* begin, int64_t* end) {
  int64_t lo = b == 0 ? 0 : load_index(l.offsets, l.offsets_64, b * l.offsets_stride);
  int64_t hi = b + 1 < l.bags ? load_index(l.offsets, l.offsets_64, (b + 1) * l.offsets_stride) : l.n;
  lo = lo < 0 ? 0 : (lo > l.n ? l.n : lo);
  hi = hi < lo ? lo : (hi > l.n ? l.n : hi);
  *begin = lo, *end = hi;
}

template <typename T, typename Acc>
__global__ void embedding_bag(BagLaunch l) {
  const T* weight = static_cast<const T*>(l.weight);
  const T* psw = static_cast<const T*>(l.per_sample_weights);
  const int64_t total = l.bags * l.dim;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = t / l.dim, d = t % l.dim;
    int64_t begin = 0, end = 0;
    bag_range(l, b, &begin, &end);
    Acc acc = 0;
    int64_t count = 0, arg = -1;
    for (int64_t i = begin; i < end; ++i) {
      const int64_t idx = load_index(l.indices, l.indices_64, i * l.indices_stride);
      const bool valid = idx >= 0 && idx < l.num_weights;
      if (d == 0) store_index(l.offset2bag, l.out_64, i, valid ? b : -1);
      if (!valid || idx == l.padding_idx) continue;
      const Acc v = to_acc(weight[idx * l.weight_stride0 + d * l.weight_stride1]);
      if (l.mode == 2) {
        if (count == 0 || v > acc) acc = v, arg = idx;  // first row, then strictly greater (ties keep the first)
      } else {
        acc += psw != nullptr ? to_acc(psw[i * l.psw_stride]) * v : v;
      }
      ++count;
    }
    if (l.mode == 1 && count > 0) acc = acc / static_cast<Acc>(count);
    store_acc(acc, static_cast<T*>(l.output) + t);
    if (d == 0) store_index(l.bag_size, l.out_64, b, count);
    if (l.mode == 2) store_index(l.max_indices, l.out_64, t, arg);
  }
}

template <typename T, typename Acc>
void launch(const BagLaunch& l, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  const int64_t want = (l.bags * l.dim + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  embedding_bag<T, Acc><<<blocks, kThreads, 0, stream>>>(l);
}

}  // namespace

Error launch_embedding_bag(const BagLaunch& l, cudaStream_t stream) noexcept {
  const size_t index_size = l.out_64 ? 8 : 4;
  if (l.offset2bag_len > 0) {
    SLIMCUDA_CUDA_TRY(cudaMemsetAsync(l.offset2bag, 0xFF, static_cast<size_t>(l.offset2bag_len) * index_size, stream));
  }
  if (l.bag_size_len > 0) {
    SLIMCUDA_CUDA_TRY(cudaMemsetAsync(l.bag_size, 0, static_cast<size_t>(l.bag_size_len) * index_size, stream));
  }
  if (l.bags == 0 || l.dim == 0) return Error::Ok;  // nothing to reduce; the set outputs stand
  switch (l.type) {
    case BagElement::Float:
      launch<float, float>(l, stream);
      break;
    case BagElement::Half:
      launch<__half, float>(l, stream);
      break;
    case BagElement::BFloat16:
      launch<__nv_bfloat16, float>(l, stream);
      break;
    case BagElement::Double:
      launch<double, double>(l, stream);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
