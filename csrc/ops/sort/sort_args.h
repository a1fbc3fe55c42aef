// SPDX-License-Identifier: Apache-2.0
#pragma once

// Argument checks of the sort family (sort, topk, histc, searchsorted, bucketize), shared
// by the CPU and CUDA ops so both devices accept and refuse the same inputs with the same
// codes and messages, and the output layouts ATen's meta functions give (AOTInductor's
// generated code indexes the outputs with those strides).

#include <cstdint>
#include <vector>

#include "csrc/ops/sort/bounds.h"
#include "csrc/ops/sort/row_layout.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// A checked sort or topk: rows of `len` elements along `dim`, the first `k` of each row
/// (in order) written to values (self's dtype) and indices (int64), both with out_sizes
/// and out_strides.
struct SortProblem {
  const SlimTensor* self = nullptr;
  int64_t dim = 0;   ///< wrapped; 0 for a 0-d tensor
  int64_t len = 1;   ///< elements per row (1 for a 0-d tensor)
  int64_t rows = 0;  ///< numel / len (0 when empty)
  int64_t k = 0;     ///< elements kept per row: len for sort
  bool descending = false;
  ScalarType dtype = ScalarType::Float;
  int device = -1;  ///< CUDA device index (CPU: -1)
  std::vector<int64_t> out_sizes, out_strides;
  RowLayout layout;  ///< self's rows and the outputs' (in_step / out_step along dim)
};

/// sort / sort_stable (always stable: ties keep input order). Null handles, a tensor on
/// another device type, dim out of range -> InvalidArgument. Outputs: self's strides when
/// they are non-overlapping and dense, else dense strides in self's stride order (ATen's
/// sort meta).
[[nodiscard]] Error check_sort(DeviceType device_type, AtenTensorHandle self, int64_t dim, bool descending,
                               AtenTensorHandle* ret0, AtenTensorHandle* ret1, SortProblem* p);

/// topk: k in [0, size along dim] (else InvalidArgument "selected index k out of range"),
/// bool self NotSupported (as ATen); outputs contiguous with dim's size k.
[[nodiscard]] Error check_topk(DeviceType device_type, AtenTensorHandle self, int64_t k, int64_t dim, bool largest,
                               AtenTensorHandle* ret0, AtenTensorHandle* ret1, SortProblem* p);

/// A checked histc: `bins` counts over [lo, hi] (from_data: the data's own min and max,
/// computed by the op) of a floating self, as a new [bins] tensor of self's dtype.
struct HistcProblem {
  const SlimTensor* self = nullptr;
  int64_t bins = 0;
  double lo = 0.0, hi = 0.0;
  bool from_data = false;  ///< min == max and self not empty
  ScalarType dtype = ScalarType::Float;
  int device = -1;
  StridedWalk walk;  ///< self in row-major order
};

/// histc: bins > 0, finite min <= max (InvalidArgument otherwise), a floating self
/// (NotSupported otherwise, as ATen's CPU histc).
[[nodiscard]] Error check_histc(DeviceType device_type, AtenTensorHandle self, int64_t bins, double min, double max,
                                AtenTensorHandle* ret0, HistcProblem* p);

/// A checked searchsorted / bucketize: one int64 (or int32) position per value, in a new
/// contiguous tensor of the values' shape (a scalar value: 0-d).
struct SearchProblem {
  const SlimTensor* seq = nullptr;
  const SlimTensor* self = nullptr;  ///< null: the scalar
  const SlimTensor* sorter = nullptr;
  double scalar = 0.0;
  bool out_int32 = false;
  int64_t numel = 0;  ///< values to search
  StridedWalk in_walk;
  SearchArgs args;  ///< data pointers filled by the op
  int device = -1;
  std::vector<int64_t> out_sizes;
};

/// searchsorted (Tensor or, self == nullptr, Scalar `scalar`) with ATen's checks: side
/// "left"/"right" wins over right, right with side "left" is a contradiction; boundaries
/// 1-d or matching the values in all but the last dimension; sorter int64 of boundaries'
/// shape (CPU: its values in range); both operands of one device; bool NotSupported. Values
/// compare in the operands' common dtype (ATen's result_type; a scalar counts as float32
/// against integral boundaries).
[[nodiscard]] Error check_searchsorted(DeviceType device_type, const char* name, AtenTensorHandle seq,
                                       AtenTensorHandle self, double scalar, int32_t out_int32, int32_t right,
                                       const char** side, AtenTensorHandle* sorter, AtenTensorHandle* ret0,
                                       SearchProblem* p);

/// bucketize's own checks before searchsorted's: non-null handles, 1-d boundaries.
[[nodiscard]] Error check_bucketize(AtenTensorHandle self, AtenTensorHandle boundaries);

/// The common dtype ATen's result_type gives two tensors (`a_dims`/`b_dims`: their ranks;
/// a 0-d tensor yields to one with dimensions within a category).
[[nodiscard]] ScalarType search_common_type(ScalarType a, int64_t a_dims, ScalarType b, int64_t b_dims) noexcept;

/// A strided walk over t (contiguous: one dimension of stride 1).
[[nodiscard]] StridedWalk walk_of(const SlimTensor& t) noexcept;

}  // namespace slimcuda::ops
