// SPDX-License-Identifier: Apache-2.0
#pragma once

// The launch shape the selection kernels share (select_kernels.cu, unique_kernels.cu,
// unique_slice_kernels.cu: three translation units, so that nvcc compiles CUB's selection,
// radix sort and merge sort side by side).

#include <cstdint>

namespace slimcuda::ops::select_grid {

constexpr unsigned kThreads = 256;

inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

}  // namespace slimcuda::ops::select_grid

#define SELECT_GRID_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
