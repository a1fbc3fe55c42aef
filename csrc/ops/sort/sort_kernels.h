// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA sort behind sort and topk: each row's keys (order_key.h) and positions gathered
// into contiguous segments, sorted by CUB's DeviceSegmentedSort (stable), then the first k
// of each segment written through the outputs' strides. Plain arguments: no tensor types
// in nvcc's view.

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/row_layout.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

struct SortLaunch {
  const void* in = nullptr;
  void* values = nullptr;
  int64_t* indices = nullptr;
  int dtype = 0;  ///< ScalarType code
  int es = 0;     ///< element size
  int64_t rows = 0, len = 0, k = 0;
  bool descending = false;
  RowLayout layout;
};

/// Device scratch bytes launch_sort needs for `s` (0: nothing to do but the copy-out).
[[nodiscard]] Error sort_scratch_bytes(const SortLaunch& s, size_t* bytes) noexcept;

/// Enqueues the sort on `stream` (current device) with `scratch` of sort_scratch_bytes;
/// never synchronizes.
[[nodiscard]] Error launch_sort(const SortLaunch& s, void* scratch, size_t bytes, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
