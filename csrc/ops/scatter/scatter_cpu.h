// SPDX-License-Identifier: Apache-2.0
#pragma once

// The scatter family on the CPU: one serial pass in index order (a duplicate index's last
// write wins; reductions apply in that order, as ATen's CPU kernels), elements of any dtype
// through scatter_problem.h's arithmetic. What depends on the data is checked before
// anything is written: index values in range (InvalidArgument, ATen's IndexError text), and
// masked_scatter's source long enough. May throw std::bad_alloc (call inside c_entry).

#include "csrc/ops/scatter/scatter_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// scatter / scatter_reduce: p.out = p.self (unless it is self's view), then the scatter.
[[nodiscard]] Error scatter_cpu(const ScatterProblem& p);

/// index_put into `out` (new, p.out_sizes / p.out_strides): self copied, then the values.
[[nodiscard]] Error index_put_cpu(const IndexPutProblem& p, SlimTensor& out);

/// masked_scatter into `out` (new, contiguous, p.out_sizes): self broadcast, then source.
[[nodiscard]] Error masked_scatter_cpu(const MaskedScatterProblem& p, SlimTensor& out);

}  // namespace slimcuda::ops
