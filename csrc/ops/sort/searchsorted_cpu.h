// SPDX-License-Identifier: Apache-2.0
#pragma once

// searchsorted and bucketize on the CPU (bounds.h's searches).

#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// out[i] = the insertion position of value i (int64, or int32 with out_int32).
[[nodiscard]] Error searchsorted_cpu(const SearchProblem& p, SlimTensor& out);

}  // namespace slimcuda::ops
