// SPDX-License-Identifier: Apache-2.0
#pragma once

// Cumulative sums and products along one dimension (ATen's cumsum and cumprod) on the CPU.

#include <cstdint>
#include <memory>

#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

enum class ScanOp : int8_t { Sum, Prod };

/// out[..., i, ...] = self[..., 0, ...] op ... op self[..., i, ...] along `dim` (negative
/// counts from the end; a 0-d tensor takes 0 or -1), as a new contiguous CPU tensor in
/// *out. Its dtype is *dtype when given (self is converted to it first, as ATen does), else
/// int64 for integral and bool self, else self's. Integers accumulate in int64 (wrapping
/// like ATen's), floating types in double, each result rounded once. Null handles, a
/// non-CPU tensor, an unknown dtype or a dim out of range -> InvalidArgument with the
/// message recorded; may throw std::bad_alloc (call inside c_entry).
[[nodiscard]] Error cumulative_cpu(ScanOp op, AtenTensorHandle self, int64_t dim, const int32_t* dtype,
                                   std::unique_ptr<SlimTensor>* out);

}  // namespace slimcuda::ops
