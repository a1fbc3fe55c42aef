// SPDX-License-Identifier: Apache-2.0
#pragma once

// The selection ops on the CPU: the data is at hand, so each output is sized from a count
// and filled in one more pass. Outputs are new tensors in the given unique_ptrs.

#include <memory>

#include "csrc/ops/select/select_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// nonzero (p.size < 0) or nonzero_static: int64 [n or size, ndim] (select_args.h's layout).
[[nodiscard]] Error nonzero_cpu(const NonzeroProblem& p, std::unique_ptr<SlimTensor>* out);

/// masked_select: self's elements where the mask is true, row-major over the broadcast shape.
[[nodiscard]] Error masked_select_cpu(const MaskedSelectProblem& p, std::unique_ptr<SlimTensor>* out);

/// index.Tensor; an index out of range -> InvalidArgument ("index 5 is out of bounds for
/// dimension 0 with size 2"), nothing handed out.
[[nodiscard]] Error index_cpu(const IndexProblem& p, std::unique_ptr<SlimTensor>* out);

/// _unique2 / unique_consecutive: out[0] the values (sorted; consecutive: in order), out[1]
/// the inverse indices (self's shape; [0] unless return_inverse), out[2] the counts ([0]
/// unless return_counts); int64 indices and counts.
[[nodiscard]] Error unique_cpu(const UniqueProblem& p, std::unique_ptr<SlimTensor> out[3]);

/// unique_dim / unique_consecutive with a dim: out[0] the distinct slices (sorted
/// lexicographically unless consecutive; contiguous), out[1] int64 [slices] inverse indices
/// and out[2] int64 counts, both always returned on the CPU (as ATen's CPU kernel does).
[[nodiscard]] Error unique_dim_cpu(const UniqueDimProblem& p, std::unique_ptr<SlimTensor> out[3]);

}  // namespace slimcuda::ops
