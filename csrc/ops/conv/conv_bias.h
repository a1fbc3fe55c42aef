// SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-channel bias add of a convolution whose cuDNN graph could not fuse it.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Element type of launch_add_channel_bias's tensors.
enum class BiasElement : int8_t { Float, Half, BFloat16 };

/// Enqueues out[i] += bias[c(i) * bias_stride] on `stream` (current device) for the n
/// elements of a packed output, where c(i) = (i / inner) % channels: inner is the product of
/// the spatial sizes for a contiguous (NCHW) output and 1 for a channels-last one. Sums in
/// float32. Returns once enqueued.
[[nodiscard]] Error launch_add_channel_bias(void* out, const void* bias, BiasElement type, int64_t n, int64_t channels,
                                            int64_t inner, int64_t bias_stride, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
