// SPDX-License-Identifier: Apache-2.0
#pragma once

// ATen's _embedding_bag on CUDA, with the four outputs ATen's CUDA kernel returns.

#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/embedding/embedding_bag_args.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Enqueues a checked problem (check_embedding_bag) on ctx (the problem's device current)
/// into four new contiguous tensors allocated on ctx, as ATen's CUDA kernel returns them
/// (B bags, n indices, D features); never synchronizes, reads no element on the host:
///   out[0] output [B, D] (sum, mean or max; float accumulation, double for float64);
///   out[1] offset2bag [n] (each index's bag; -1 where no bag reaches it, or for an
///          out-of-range index);
///   out[2] bag_size [offsets_len] (non-padding count of each bag in every mode; with
///          include_last_offset the extra last entry is 0);
///   out[3] max_indices: max mode [B, D] (-1 for an empty bag), else [0].
/// Bag 0 starts at index 0 whatever offsets[0] is and the last bag ends at n, as ATen's
/// CUDA kernel. Bad offsets or indices are clamped on the device (launch_embedding_bag):
/// no memory outside the tensors is read or written.
[[nodiscard]] Error embedding_bag_cuda(const EmbeddingBagProblem& p, const StreamContext& ctx,
                                       std::unique_ptr<SlimTensor> out[4]);

}  // namespace slimcuda::ops
