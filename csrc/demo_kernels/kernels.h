// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "slimcuda/error.h"

namespace slimcuda::kernels {

// Each function enqueues one kernel on `stream` and returns once it is enqueued; launch
// failures come back as Error::Internal. Pointers must be device memory of the stream's
// device (the C ABI checks that before calling).

/// dst[i] = value, i < n.
[[nodiscard]] Error fill_f32(float* dst, size_t n, float value, cudaStream_t stream) noexcept;

/// y[i] = a * x[i] + y[i], i < n.
[[nodiscard]] Error axpy_f32(float* y, const float* x, size_t n, float a, cudaStream_t stream) noexcept;

}  // namespace slimcuda::kernels
