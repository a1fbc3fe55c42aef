// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "csrc/tensor/copy_plan.h"

namespace slimcuda {

/// dst <- src in host memory, element by element with conversion (convert.h); dtypes are
/// ScalarType codes, es their element sizes.
void host_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& plan,
               int64_t numel) noexcept;

}  // namespace slimcuda
