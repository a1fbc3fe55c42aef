// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "csrc/core/limits.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// Checks untrusted shape input as the shims receive it: 0 <= ndim <= kMaxDims, sizes
/// non-null when ndim > 0, sizes >= 0, strides (may be null: contiguous) >= 0. Records
/// a message on failure.
[[nodiscard]] Error check_shape(int64_t ndim, const int64_t* sizes, const int64_t* strides) noexcept;

/// Elements of storage that a view with these sizes/strides at `offset` touches:
/// 0 if any size is 0, else offset + 1 + sum((size-1)*stride). Overflow of int64 ->
/// InvalidArgument. Inputs must have passed check_shape; strides null = contiguous.
[[nodiscard]] Error required_elements(int64_t ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                                      int64_t* out) noexcept;

/// required_elements * element_size, overflow-checked against int64.
[[nodiscard]] Error required_bytes(int64_t ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                                   size_t element_size, int64_t* out) noexcept;

/// Row-major strides for `sizes` (a size-0 or size-1 dimension still gets a stride).
[[nodiscard]] std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);

/// Whether the view is row-major contiguous (strides of size-1 dimensions do not matter).
[[nodiscard]] bool is_contiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) noexcept;

/// Number of elements (product of sizes; callers validated that it fits).
[[nodiscard]] int64_t numel_of(const std::vector<int64_t>& sizes) noexcept;

/// c10's is_non_overlapping_and_dense: the elements fill a block of storage exactly once, in
/// some order of the dimensions (size-0 and size-1 dimensions ignored).
[[nodiscard]] bool is_non_overlapping_and_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

/// ATen's infer_dense_strides (the layout of an op's output "like" an input that is not
/// dense): dense strides in the order of `strides` (a stable insertion sort by stride, the
/// smaller size first on equal strides, stride-0 dimensions kept where they are).
[[nodiscard]] std::vector<int64_t> dense_strides_like(const std::vector<int64_t>& sizes,
                                                      const std::vector<int64_t>& strides);

}  // namespace slimcuda
