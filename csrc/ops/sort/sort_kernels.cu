// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_sort.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/sort/order_key.h"
#include "csrc/ops/sort/sort_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? b : 65535);
}

// Segment r starts at r * len.
struct SegmentStart {
  int64_t len;
  __host__ __device__ int64_t operator()(int64_t r) const { return r * len; }
};

// Keys widened to 32 or 64 bits: two CUB instantiations instead of four (8- and 16-bit
// keys cost extra radix passes, not extra compile time).
template <typename K>
__global__ void gather_keys(SortLaunch s, K* keys, int64_t* pos) {
  const int64_t n = s.rows * s.len;
  const char* in = static_cast<const char*>(s.in);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / s.len, i = e % s.len;
    int64_t in_at = 0, out_at = 0;
    row_start(s.layout, r, &in_at, &out_at);
    keys[e] = static_cast<K>(directed_key(in + (in_at + i * s.layout.in_step) * s.es, s.dtype, s.es, s.descending));
    pos[e] = i;
  }
}

// The first k of each sorted segment: the element copied bit for bit from the input.
__global__ void write_rows(SortLaunch s, const int64_t* sorted_pos) {
  const int64_t n = s.rows * s.k;
  const char* in = static_cast<const char*>(s.in);
  char* out = static_cast<char*>(s.values);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / s.k, j = e % s.k;
    const int64_t src = sorted_pos != nullptr ? sorted_pos[r * s.len + j] : j;
    int64_t in_at = 0, out_at = 0;
    row_start(s.layout, r, &in_at, &out_at);
    const char* from = in + (in_at + src * s.layout.in_step) * s.es;
    char* to = out + (out_at + j * s.layout.out_step) * s.es;
    for (int b = 0; b < s.es; ++b) to[b] = from[b];
    s.indices[out_at + j * s.layout.out_step] = src;
  }
}

struct Carve {
  size_t keys_bytes, pos_bytes, temp_bytes;
};

size_t align256(size_t n) { return (n + 255) & ~size_t{255}; }

template <typename K>
cudaError_t segmented_sort(const SortLaunch& s, void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                           const int64_t* pos_in, int64_t* pos_out, cudaStream_t stream) {
  auto begin = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), SegmentStart{s.len});
  auto end = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(1), SegmentStart{s.len});
  return cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, keys_in, keys_out, pos_in, pos_out, s.rows * s.len,
                                                   s.rows, begin, end, stream);
}

bool wide_keys(const SortLaunch& s) { return s.es > 4; }

// Sizes of the scratch parts: keys in and out, positions in and out, CUB's temporary.
Error carve(const SortLaunch& s, Carve* c) {
  const size_t n = static_cast<size_t>(s.rows * s.len);
  c->keys_bytes = align256(n * (wide_keys(s) ? 8 : 4));
  c->pos_bytes = align256(n * sizeof(int64_t));
  c->temp_bytes = 0;
  const cudaError_t e =
      wide_keys(s) ? segmented_sort<uint64_t>(s, nullptr, c->temp_bytes, nullptr, nullptr, nullptr, nullptr, nullptr)
                   : segmented_sort<uint32_t>(s, nullptr, c->temp_bytes, nullptr, nullptr, nullptr, nullptr, nullptr);
  SLIMCUDA_CUDA_TRY(e);
  c->temp_bytes = align256(c->temp_bytes);
  return Error::Ok;
}

bool trivial(const SortLaunch& s) { return s.len <= 1; }

}  // namespace

Error sort_scratch_bytes(const SortLaunch& s, size_t* bytes) noexcept {
  *bytes = 0;
  if (s.rows == 0 || s.k == 0 || trivial(s)) return Error::Ok;
  Carve c{};
  SLIMCUDA_RETURN_IF_ERROR(carve(s, &c));
  *bytes = 2 * c.keys_bytes + 2 * c.pos_bytes + c.temp_bytes;
  return Error::Ok;
}

Error launch_sort(const SortLaunch& s, void* scratch, size_t bytes, cudaStream_t stream) noexcept {
  if (s.rows == 0 || s.k == 0) return Error::Ok;
  if (trivial(s)) {  // one element per row: itself, at position 0
    write_rows<<<blocks_for(s.rows * s.k), kThreads, 0, stream>>>(s, nullptr);
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
    return Error::Ok;
  }
  Carve c{};
  SLIMCUDA_RETURN_IF_ERROR(carve(s, &c));
  char* p = static_cast<char*>(scratch);
  void* keys_in = p;
  void* keys_out = p + c.keys_bytes;
  auto* pos_in = reinterpret_cast<int64_t*>(p + 2 * c.keys_bytes);
  auto* pos_out = reinterpret_cast<int64_t*>(p + 2 * c.keys_bytes + c.pos_bytes);
  void* temp = p + 2 * c.keys_bytes + 2 * c.pos_bytes;
  size_t temp_bytes = bytes - (2 * c.keys_bytes + 2 * c.pos_bytes);
  const unsigned blocks = blocks_for(s.rows * s.len);
  cudaError_t e;
  if (wide_keys(s)) {
    gather_keys<uint64_t><<<blocks, kThreads, 0, stream>>>(s, static_cast<uint64_t*>(keys_in), pos_in);
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
    e = segmented_sort<uint64_t>(s, temp, temp_bytes, static_cast<const uint64_t*>(keys_in),
                                 static_cast<uint64_t*>(keys_out), pos_in, pos_out, stream);
  } else {
    gather_keys<uint32_t><<<blocks, kThreads, 0, stream>>>(s, static_cast<uint32_t*>(keys_in), pos_in);
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
    e = segmented_sort<uint32_t>(s, temp, temp_bytes, static_cast<const uint32_t*>(keys_in),
                                 static_cast<uint32_t*>(keys_out), pos_in, pos_out, stream);
  }
  SLIMCUDA_CUDA_TRY(e);
  write_rows<<<blocks_for(s.rows * s.k), kThreads, 0, stream>>>(s, pos_out);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
