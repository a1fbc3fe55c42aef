// SPDX-License-Identifier: Apache-2.0
#pragma once

// The geometry of one strided copy, passed to kernels by value (about 600 bytes).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "csrc/core/limits.h"

namespace slimcuda {

struct CopyPlan {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t dst_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
};

/// The plan for dst <- src with the given strides (size-1 dimensions dropped).
inline CopyPlan make_plan(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dst_strides,
                          const std::vector<int64_t>& src_strides) {
  CopyPlan p{};
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    p.sizes[p.ndim] = sizes[d];
    p.dst_strides[p.ndim] = dst_strides[d];
    p.src_strides[p.ndim] = src_strides[d];
    ++p.ndim;
  }
  return p;
}

}  // namespace slimcuda
