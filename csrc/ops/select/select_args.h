// SPDX-License-Identifier: Apache-2.0
#pragma once

// Argument checks and output layouts of the data-dependent selection ops, shared by the CPU
// and CUDA versions so both refuse the same input with the same codes and lay their outputs
// out alike: nonzero, nonzero_static, masked_select, index.Tensor (advanced indexing) and
// unique (_unique2, unique_consecutive). Failures record the message (ATen's wording where
// ATen has one) and warn it.

#include <cstdint>
#include <vector>

#include "csrc/ops/select/select_problem.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// nonzero / nonzero_static: self's elements in row-major order.
struct NonzeroProblem {
  const SlimTensor* self = nullptr;
  int device = -1;  ///< CUDA device index (CPU: -1)
  NonzeroScan scan;
  int64_t size = -1;  ///< nonzero_static's row count (-1: nonzero)
  int64_t fill = -1;  ///< nonzero_static's fill value
};

/// Checks self (not null, on `type`, at most kSelectMaxDims dimensions) and ret0; for
/// nonzero_static (static_size >= 0 or any value but kNoStaticSize) the size too.
constexpr int64_t kNoStaticSize = INT64_MIN;
[[nodiscard]] Error check_nonzero(DeviceType type, const char* op, AtenTensorHandle self, int64_t static_size,
                                  int64_t fill_value, AtenTensorHandle* ret0, NonzeroProblem* p);

/// The output layout of nonzero / nonzero_static with `rows` rows: [rows, ndim] int64,
/// column-major (strides (1, rows)) as PyTorch's meta functions give it, except CPU
/// nonzero_static, row-major (its CPU meta).
void nonzero_layout(DeviceType type, const NonzeroProblem& p, int64_t rows, std::vector<int64_t>* sizes,
                    std::vector<int64_t>* strides);
/// The coordinate writer for that layout into `out`.
[[nodiscard]] CoordsWrite coords_write(const NonzeroProblem& p, int64_t rows, const std::vector<int64_t>& strides,
                                       int64_t* out);

/// masked_select: self and mask (bool) broadcast together; the output is 1-D of self's dtype.
struct MaskedSelectProblem {
  const SlimTensor* self = nullptr;
  int device = -1;
  Walk self_walk;    ///< self over the broadcast shape (stride 0 where it broadcasts)
  NonzeroScan mask;  ///< the mask over the broadcast shape
  int es = 1;
};

[[nodiscard]] Error check_masked_select(DeviceType type, AtenTensorHandle self, AtenTensorHandle mask,
                                        AtenTensorHandle* ret0, MaskedSelectProblem* p);

/// index.Tensor: per dimension of self, what indexes it once bool / uint8 masks are
/// expanded into their nonzero columns.
struct IndexProblem {
  const SlimTensor* self = nullptr;
  int device = -1;
  /// The bool / uint8 index tensors, each as a scan (their nonzero coordinates are the
  /// indices of the dimensions they cover).
  std::vector<NonzeroScan> masks;
  /// Per self dimension: -1 not indexed, else the index tensor (dim_tensor) or the mask
  /// (dim_mask >= 0) and its column (dim_column).
  std::vector<const SlimTensor*> dim_tensor;
  std::vector<int> dim_mask, dim_column;
};

[[nodiscard]] Error check_index(DeviceType type, AtenTensorHandle self, const AtenTensorHandle** indices,
                                int64_t indices_len, AtenTensorHandle* ret0, IndexProblem* p);

/// With the masks' nonzero counts known (counts[m]) and their coordinates at coords[m]
/// (int64 [count, ndim] column-major, on the op's device): the indices broadcast together
/// (InvalidArgument "shape mismatch" when they do not), the output's sizes and strides (PyTorch's
/// meta function: self's stride order where self is not empty) and the gather, its out
/// pointer left to the caller. May throw std::bad_alloc.
[[nodiscard]] Error index_layout(const IndexProblem& p, const std::vector<int64_t>& counts,
                                 const std::vector<const int64_t*>& coords, IndexGather* g,
                                 std::vector<int64_t>* out_sizes, std::vector<int64_t>* out_strides);

/// _unique2 (sorted or not: always sorted here) and unique_consecutive (dim None).
struct UniqueProblem {
  const SlimTensor* self = nullptr;
  int device = -1;
  const char* op = "";
  Walk walk;
  int64_t n = 0;
  int es = 1;
  int dtype = 0;  ///< ScalarType code
  bool floating = false;
  bool consecutive = false;  ///< unique_consecutive: runs of equal values, no sort
  bool return_inverse = false, return_counts = false;
};

[[nodiscard]] Error check_unique(const char* op, const SlimTensor& self, bool consecutive, bool return_inverse,
                                 bool return_counts, UniqueProblem* p);

/// unique_dim / unique_consecutive with a dim: whole slices along `dim`.
struct UniqueDimProblem {
  const SlimTensor* self = nullptr;
  int device = -1;
  const char* op = "";
  int64_t dim = 0;  ///< wrapped
  SliceScan scan;
  bool return_inverse = false, return_counts = false;
};

/// Checks self (at least 1-D; dim in range, ATen's messages; no zero-size dimension but dim
/// itself, "There are 0 sized dimensions, and they aren't selected, so unique cannot be
/// applied").
[[nodiscard]] Error check_unique_dim(const char* op, const SlimTensor& self, int64_t dim, bool consecutive,
                                     bool return_inverse, bool return_counts, UniqueDimProblem* p);

/// The values' layout with `groups` slices: self's sizes with dim's replaced, contiguous;
/// *rest walks one output slice (self's other dimensions at the output's strides).
void unique_dim_layout(const UniqueDimProblem& p, int64_t groups, std::vector<int64_t>* sizes,
                       std::vector<int64_t>* strides, Walk* rest);

}  // namespace slimcuda::ops
