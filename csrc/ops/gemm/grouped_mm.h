// SPDX-License-Identifier: Apache-2.0
#pragma once

// A grouped matrix product, as mixture-of-experts layers run their experts: the rows of
// `input` [S, K] are sorted by group, `offs` [G] (int32 or int64) holds each group's end
// row, and group g's rows are multiplied by weight[g] [K, N] into out [S, N]. Rows past the
// last offset are zero (transformers::grouped_mm_fallback's definition; aten::_grouped_mm
// leaves them unspecified).

#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// out = a new contiguous [S, N] tensor of input's dtype and device. The group offsets
/// decide the work, so on CUDA they are read back with one synchronization of ctx's
/// stream (as transformers' own fallback does), which cannot happen under CUDA-graph
/// capture (-> NotSupported). Shapes that disagree, offsets that decrease or pass S, a
/// dtype the GEMMs lack, operands on different devices -> InvalidArgument. May throw
/// std::bad_alloc.
[[nodiscard]] Error grouped_mm(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offs,
                               const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);

}  // namespace slimcuda::ops
