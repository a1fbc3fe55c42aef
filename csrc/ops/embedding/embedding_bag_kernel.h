// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA embedding-bag kernel: one thread per (bag, feature), each reading its bag's
// indices in order (the reduction order of ATen's CUDA kernel, so ties and NaNs resolve
// alike). A segmented reduction from CUB would not keep that order for max, nor write
// offset2bag and bag_size in the same pass; the bags are short rows of one table.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

enum class BagElement : int8_t { Float, Half, BFloat16, Double };

/// Device pointers and element strides of one launch; index tensors are int64 when
/// `*_64` is set, else int32. Outputs are contiguous: output [bags, dim], offset2bag [n],
/// bag_size [>= bags], max_indices [bags, dim] (max mode; else null), all of index type
/// out_64 except output.
struct BagLaunch {
  const void* weight = nullptr;
  int64_t weight_stride0 = 0, weight_stride1 = 0;
  const void* indices = nullptr;
  int64_t indices_stride = 1;
  bool indices_64 = true;
  const void* offsets = nullptr;
  int64_t offsets_stride = 1;
  bool offsets_64 = true;
  const void* per_sample_weights = nullptr;  ///< null: none
  int64_t psw_stride = 1;
  void* output = nullptr;
  void* offset2bag = nullptr;
  void* bag_size = nullptr;
  void* max_indices = nullptr;
  bool out_64 = true;
  int64_t offset2bag_len = 0, bag_size_len = 0;  ///< elements, all set first (-1 and 0)
  int64_t num_weights = 0, dim = 0, n = 0, bags = 0, padding_idx = -1;
  int mode = 0;  ///< 0 sum, 1 mean, 2 max
  BagElement type = BagElement::Float;
};

/// Enqueues the bags on `stream` (current device) and returns once enqueued. Bag b reads
/// indices [b == 0 ? 0 : offsets[b], b + 1 < bags ? offsets[b + 1] : n), as ATen's CUDA
/// kernel, clamped to [0, n] (a decreasing offset gives an empty bag). An index outside
/// [0, num_weights) reads nothing, counts for nothing and is marked -1 in offset2bag (ATen
/// stops the context with a device assertion instead). offset2bag is set to -1 and
/// bag_size to 0 first (cudaMemsetAsync), so entries no bag reaches are defined (ATen's CUDA
/// kernel leaves them uninitialized: bag_size's last entry with include_last_offset, and
/// everything when dim is 0).
[[nodiscard]] Error launch_embedding_bag(const BagLaunch& l, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
