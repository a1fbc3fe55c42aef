// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/copy_plan.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// Enqueues dst <- src (device memory of the current device) on `stream`: a tiled transpose
/// when the plan is a same-dtype 2-D transpose, else the general strided, converting
/// kernel. dtypes are ScalarType codes, es their element sizes. Returns once enqueued.
[[nodiscard]] Error launch_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es,
                                const CopyPlan& plan, int64_t numel, cudaStream_t stream) noexcept;

}  // namespace slimcuda
