// SPDX-License-Identifier: Apache-2.0
#pragma once

// The scatter family's kernels, one thread per index element (scatter), result position
// (index_put) or output element (masked_scatter, after CUB's prefix sum over the mask), on
// the caller's stream; never synchronizing. Reductions and index_put's accumulate use
// atomics (native adds for float32/64, float16, bfloat16, int32, int64; a compare-and-swap
// loop on the enclosing 32- or 64-bit word for the rest), so floating sums of duplicates
// come out in an unspecified order, as ATen's. Out-of-range indices (and masked_scatter
// positions past the end of source) write nothing: checking them would need a
// synchronization. Plain arguments: no tensor types in nvcc's view.

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/scatter/scatter_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

struct ScatterLaunch {
  ScatterLayout layout;
  const void* index = nullptr;
  const void* src = nullptr;  ///< null: value
  void* out = nullptr;
  int dtype = 0;  ///< ScalarType code
  int es = 0;     ///< element size
  ScatterReduce reduce = ScatterReduce::None;
  bool include_self = true;
  uint8_t value[8] = {};
  uint8_t identity[8] = {};
  int64_t* counts = nullptr;  ///< mean: one counter per element of out (zeroed by the launch)
  int out_rank = 0;           ///< out's layout (mean's division walks it)
  int64_t out_sizes[kMaxDims] = {};
  int64_t out_strides[kMaxDims] = {};
  int64_t out_numel = 0;
};

/// Enqueues the scatter on `stream` (current device): the identity where include_self is
/// false, the writes or reductions, mean's division.
[[nodiscard]] Error launch_scatter(const ScatterLaunch& s, cudaStream_t stream) noexcept;

struct IndexPutLaunch {
  IndexPutLayout layout;
  void* out = nullptr;
  const void* values = nullptr;
  int dtype = 0;
  int es = 0;
  bool accumulate = false;
};

[[nodiscard]] Error launch_index_put(const IndexPutLaunch& s, cudaStream_t stream) noexcept;

struct MaskedScatterLaunch {
  MaskedScatterLayout layout;
  const uint8_t* mask = nullptr;
  const void* source = nullptr;
  void* out = nullptr;  ///< contiguous
  int es = 0;
};

/// Device scratch masked_scatter needs: the mask's prefix sum and CUB's temporary.
[[nodiscard]] Error masked_scatter_scratch_bytes(const MaskedScatterLaunch& s, size_t* bytes) noexcept;

[[nodiscard]] Error launch_masked_scatter(const MaskedScatterLaunch& s, void* scratch, size_t bytes,
                                          cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
