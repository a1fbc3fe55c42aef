// SPDX-License-Identifier: Apache-2.0
#pragma once

// ATen's _embedding_bag (and _embedding_bag_forward_only): the argument checks both devices
// share, on shapes, dtypes and devices only (no element is read here: the CUDA op must not
// synchronize), and the problem they describe.

#include <cstdint>

#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

enum class BagMode : int8_t { Sum = 0, Mean = 1, Max = 2 };

/// A checked embedding bag: weight [num_weights, dim] (float32, float16, bfloat16 or float64,
/// any strides), indices [n] and offsets [offsets_len] (int32 or int64 each, any stride),
/// per_sample_weights [n] of weight's dtype (sum only) or none.
struct EmbeddingBagProblem {
  const SlimTensor* weight = nullptr;
  const SlimTensor* indices = nullptr;
  const SlimTensor* offsets = nullptr;
  const SlimTensor* per_sample_weights = nullptr;  ///< null: none
  BagMode mode = BagMode::Sum;
  bool include_last_offset = false;
  int64_t padding_idx = -1;  ///< an index equal to it is skipped (none can equal a negative one)
  int64_t num_weights = 0, dim = 0, n = 0, offsets_len = 0;
  int64_t num_bags = 0;  ///< offsets_len, less one with include_last_offset
  ScalarType dtype = ScalarType::Float;
  /// The index outputs' dtype: int64 when indices or offsets are int64 (ATen promotes both),
  /// else int32.
  ScalarType index_dtype = ScalarType::Long;
  int device = -1;  ///< CUDA device index (CPU: -1)
};

/// Checks the handles (per_sample_weights may be null or point to null: none; every ret
/// must be non-null), devices (all `device_type`, one CUDA device), dtypes, ranks (weight
/// 2-D; indices, offsets and per_sample_weights 1-D: nn.EmbeddingBag flattens 2-D input
/// before the op), mode (0 sum, 1 mean, 2 max), per_sample_weights only with sum, and
/// include_last_offset with at least one offset. InvalidArgument (NotSupported for a
/// weight dtype slimcuda lacks) with the message recorded.
[[nodiscard]] Error check_embedding_bag(DeviceType device_type, AtenTensorHandle weight, AtenTensorHandle indices,
                                        AtenTensorHandle offsets, int64_t mode, AtenTensorHandle* per_sample_weights,
                                        int32_t include_last_offset, int64_t padding_idx,
                                        AtenTensorHandle* const rets[4], EmbeddingBagProblem* p) noexcept;

}  // namespace slimcuda::ops
