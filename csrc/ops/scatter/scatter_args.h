// SPDX-License-Identifier: Apache-2.0
#pragma once

// Argument checks of the scatter family (scatter.src_out, scatter.value_out,
// scatter_reduce.two_out, index_put, masked_scatter), shared by the CPU and CUDA ops so both
// devices accept and refuse the same inputs with the same codes and messages (ATen's), and
// the layouts the ops walk (scatter_problem.h). What depends on the data (index values in
// range, a mask's count of true elements) is the ops' own: the CPU checks it, CUDA cannot
// without a synchronization (see docs/fallback-ops.md).

#include <cstdint>
#include <string>
#include <vector>

#include "csrc/ops/scatter/scatter_problem.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// A checked scatter / scatter_reduce into `out` (self's sizes and dtype).
struct ScatterProblem {
  const SlimTensor* out = nullptr;
  const SlimTensor* self = nullptr;
  const SlimTensor* index = nullptr;
  const SlimTensor* src = nullptr;  ///< null: every element gets `value`
  ScatterReduce reduce = ScatterReduce::None;
  bool include_self = true;
  bool copy_self = true;  ///< false: out is self's own view (in place), nothing to copy
  ScalarType dtype = ScalarType::Float;
  int device = -1;           ///< CUDA device index (CPU: -1)
  uint8_t value[8] = {};     ///< scatter.value's value as an element of dtype
  uint8_t identity[8] = {};  ///< the reduction's identity as an element (include_self false)
  ScatterLayout layout;
};

/// scatter.src_out: out = self with src's elements written where index says along dim.
/// Null handles, tensors on another device, out not of self's sizes and dtype, src of
/// another dtype, an index that is not int64/int32, dim out of range, an index larger than
/// self (but along dim) or src, overlapping out/index/src -> InvalidArgument.
[[nodiscard]] Error check_scatter_src(DeviceType device_type, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                      AtenTensorHandle index, AtenTensorHandle src, ScatterProblem* p);

/// scatter.value_out: the same with one value (converted to self's dtype; a finite value the
/// dtype cannot hold -> InvalidArgument, as ATen's checked conversion).
[[nodiscard]] Error check_scatter_value(DeviceType device_type, AtenTensorHandle out, AtenTensorHandle self,
                                        int64_t dim, AtenTensorHandle index, double value, ScatterProblem* p);

/// scatter_reduce.two_out: reduce "sum", "prod", "mean", "amax" or "amin" (else
/// InvalidArgument), include_self as ATen.
[[nodiscard]] Error check_scatter_reduce(DeviceType device_type, AtenTensorHandle out, AtenTensorHandle self,
                                         int64_t dim, AtenTensorHandle index, AtenTensorHandle src, const char* reduce,
                                         int32_t include_self, ScatterProblem* p);

/// One index tensor of an index_put as the op reads it (int64 or int32 values).
struct IndexOperand {
  int self_dim = 0;  ///< the dimension of self it indexes
  const void* data = nullptr;
  bool is64 = true;
  std::vector<int64_t> sizes, strides;
  int mask_vector = -1;  ///< a mask's positions: which of IndexPutProblem::mask_positions
};

/// A checked index_put: out (a new tensor: self's strides when they are non-overlapping and
/// dense, else dense ones in self's order, as ATen's clone) = self, then values written (or
/// added) where the indices say.
struct IndexPutProblem {
  const SlimTensor* self = nullptr;
  const SlimTensor* values = nullptr;
  ScalarType dtype = ScalarType::Float;
  int device = -1;
  bool accumulate = false;
  std::vector<int64_t> out_sizes, out_strides;
  std::vector<IndexOperand> indices;                 ///< the index tensors (a mask's true positions on the CPU)
  std::vector<std::vector<int64_t>> mask_positions;  ///< storage of those positions
  std::vector<int64_t> result_sizes;                 ///< the indexing result's shape
  IndexPutLayout layout;
};

/// index_put: indices[i] NULL (None) or an int64, int32, bool or uint8 tensor; bool masks
/// must match the dimensions they cover. A mask that is the only index and whose values
/// broadcast over its true elements (the "mask form") runs on both devices as a masked
/// write; any other bool index needs the number of true elements: the CPU takes it from
/// the mask, CUDA refuses it (NotSupported: it would need a synchronization). Index tensors
/// broadcast together, values to the indexing result (ATen's shapes and messages). Index
/// values are checked in range by the CPU op (see index_put_cpu).
[[nodiscard]] Error check_index_put(DeviceType device_type, AtenTensorHandle self, const AtenTensorHandle** indices,
                                    int64_t indices_len, AtenTensorHandle values, int32_t accumulate,
                                    AtenTensorHandle* ret0, IndexPutProblem* p);

/// A checked masked_scatter: out (new, contiguous, the broadcast shape of self and mask) =
/// self, then source's elements in order wherever the mask is true.
struct MaskedScatterProblem {
  const SlimTensor* self = nullptr;
  const SlimTensor* mask = nullptr;
  const SlimTensor* source = nullptr;
  ScalarType dtype = ScalarType::Float;
  int device = -1;
  std::vector<int64_t> out_sizes;
  std::vector<int64_t> self_strides;  ///< self broadcast to out_sizes (0 where broadcast)
  MaskedScatterLayout layout;
};

/// masked_scatter: a bool mask (anything else InvalidArgument, as ATen), source of self's
/// dtype, self and mask broadcastable. Whether source has enough elements depends on the
/// mask's values (the CPU op checks it).
[[nodiscard]] Error check_masked_scatter(DeviceType device_type, AtenTensorHandle self, AtenTensorHandle mask,
                                         AtenTensorHandle source, AtenTensorHandle* ret0, MaskedScatterProblem* p);

/// "[2, 3]" for error messages.
[[nodiscard]] std::string shape_text(const std::vector<int64_t>& sizes);

}  // namespace slimcuda::ops
