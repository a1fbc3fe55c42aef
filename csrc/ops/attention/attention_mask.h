// SPDX-License-Identifier: Apache-2.0
#pragma once

// A boolean attention mask (true = attend) as the additive bias cuDNN's SDPA takes.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Enqueues dst[i0,i1,i2,i3] = mask[i0,i1,i2,i3] ? 0 : -inf on `stream` (current device),
/// for sizes[4] with element strides (the mask's may be 0 where it broadcasts). dst_half:
/// float16 when true, else bfloat16. Returns once enqueued.
[[nodiscard]] Error launch_mask_to_bias(void* dst, bool dst_half, const int64_t dst_strides[4], const void* mask,
                                        const int64_t mask_strides[4], const int64_t sizes[4],
                                        cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
