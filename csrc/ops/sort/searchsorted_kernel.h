// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA searchsorted / bucketize: one thread per value, bounds.h's binary search in its
// row. Hand-written: thrust::lower_bound / upper_bound (the vectorized forms) search one
// sorted range, whereas ATen's op searches a row per leading index of batched boundaries,
// through an optional sorter, left or right: one call per row, each with a permutation
// iterator, would be needed. Plain arguments: no tensor types in nvcc's view.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/bounds.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

struct SearchLaunch {
  SearchArgs args;           ///< the boundaries (and sorter) on the device
  const void* in = nullptr;  ///< null: the scalar
  int in_dtype = 0, in_es = 0;
  StridedWalk in_walk;
  double scalar = 0.0;
  int64_t n = 0;        ///< values
  void* out = nullptr;  ///< [n] int64, or int32 with out_int32
  bool out_int32 = false;
};

/// Enqueues the searches on `stream` (current device); never synchronizes. Sorter values
/// out of range are clamped into the row (the CPU op refuses them; checking here would
/// need a synchronization).
[[nodiscard]] Error launch_searchsorted(const SearchLaunch& s, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
