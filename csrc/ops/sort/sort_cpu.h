// SPDX-License-Identifier: Apache-2.0
#pragma once

// sort and topk on the CPU: one stable sort per row by order_key.h's keys, into tensors the
// shim allocated with the problem's layout. May throw std::bad_alloc (call inside c_entry).

#include "csrc/ops/sort/sort_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// The first p.k elements of each row in sorted order (ascending, or descending), ties in
/// input order: values (self's dtype, bits copied) and their int64 positions along dim.
[[nodiscard]] Error sort_cpu(const SortProblem& p, SlimTensor& values, SlimTensor& indices);

}  // namespace slimcuda::ops
