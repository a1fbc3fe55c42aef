// SPDX-License-Identifier: Apache-2.0
#pragma once

// ATen's _embedding_bag on the CPU, with the four outputs ATen's CPU kernel returns.

#include <memory>

#include "csrc/ops/embedding/embedding_bag_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Runs a checked problem (check_embedding_bag) into four new contiguous CPU tensors, as
/// ATen's CPU kernel returns them (num_bags = B, n indices, D features):
///   out[0] output [B, D]: the sum, mean or max of each bag's rows (padding_idx skipped;
///          per_sample_weights scale each row in sum mode; an empty bag gives zeros);
///          float accumulation (double for float64), one rounding.
///   out[1] offset2bag: [0] in ATen's fast sum path (sum mode, float32/float16/bfloat16
///          weight whose rows are contiguous, padding_idx < 0, contiguous
///          per_sample_weights), else [n], each index's bag (-1 when there is no bag).
///   out[2] bag_size [B]: zeros in sum mode, else each bag's count of non-padding indices.
///   out[3] max_indices: max mode [B, D] (the row each maximum came from, the first one on
///          ties; a NaN met first stays; 0 for an empty bag); mean mode a copy of bag_size;
///          sum mode zeros [B].
/// Bag b holds indices [offsets[b], offsets[b+1]); the last bag ends at n, except that with
/// include_last_offset ATen's fast index path (sum or mean under the conditions above, bar
/// the mode) reduces it only up to the last offset while still counting up to n (a mean
/// divides that sum by the longer count), kept as ATen's CPU kernel does it. Reads the data: offsets[0] != 0,
/// decreasing offsets, an offset past n or an index outside [0, num_weights) -> InvalidArgument, nothing handed out.
/// May throw std::bad_alloc (call inside c_entry).
[[nodiscard]] Error embedding_bag_cpu(const EmbeddingBagProblem& p, std::unique_ptr<SlimTensor> out[4]);

}  // namespace slimcuda::ops
