// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>

#include <type_traits>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/sort/histc_edges.h"
#include "csrc/ops/sort/searchsorted_kernel.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
__device__ T value_at(const SearchLaunch& s, int64_t i) {
  if (s.in == nullptr) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(s.scalar);  // not reached: a scalar compares as floating
    } else {
      return round_as(s.scalar, s.args.common);
    }
  }
  const char* at = static_cast<const char*>(s.in) + walk_offset(s.in_walk, i) * s.in_es;
  if constexpr (std::is_integral_v<T>) {
    return convert::load(at, s.in_dtype).i;
  } else {
    return as_common_float(at, s.in_dtype, s.args.common);
  }
}

template <typename T>
__global__ void searchsorted(SearchLaunch s) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < s.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = s.args.seq_one_row ? 0 : i / s.args.in_row_len;
    const int64_t pos = search_row<T>(s.args, row, value_at<T>(s, i));
    if (s.out_int32) {
      static_cast<int32_t*>(s.out)[i] = static_cast<int32_t>(pos);
    } else {
      static_cast<int64_t*>(s.out)[i] = pos;
    }
  }
}

}  // namespace

Error launch_searchsorted(const SearchLaunch& s, cudaStream_t stream) noexcept {
  if (s.n == 0) return Error::Ok;
  const int64_t want = (s.n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want < 65535 ? want : 65535);
  if (s.args.common_floating) {
    searchsorted<double><<<blocks, kThreads, 0, stream>>>(s);
  } else {
    searchsorted<int64_t><<<blocks, kThreads, 0, stream>>>(s);
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
