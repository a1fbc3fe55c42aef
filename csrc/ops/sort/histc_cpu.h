// SPDX-License-Identifier: Apache-2.0
#pragma once

// histc on the CPU (histc_edges.h's bins). May throw std::bad_alloc (call inside c_entry).

#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// hist[b] = how many elements fall in bin b (histc_edges.h), in hist's dtype. A range from
/// the data that is not finite (a NaN or infinite element) -> InvalidArgument, as ATen.
[[nodiscard]] Error histc_cpu(const HistcProblem& p, SlimTensor& hist);

}  // namespace slimcuda::ops
