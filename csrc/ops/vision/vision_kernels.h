// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA kernels of the detection ops (vision_kernels.cu, nms_kernels.cu). Every launch
// enqueues on `stream` (of the current device) and returns once enqueued; element types
// F32, F16 and BF16, computed in float.

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/vision/vision_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// p.out (and p.index) for every output element: one thread per element, the arithmetic of
/// vision_math.h (hand-written: no NVIDIA library samples rois).
[[nodiscard]] Error launch_roi(const RoiProblem& p, cudaStream_t stream) noexcept;

/// p.out for every output element: one thread per element summing its taps directly
/// (hand-written: no library does deformable sampling; an im2col + cuBLASLt GEMM would reuse
/// samples across output channels).
[[nodiscard]] Error launch_deform_conv2d(const DeformProblem& p, cudaStream_t stream) noexcept;

/// nms, step 1: keys[i] = score i as float (NaN made the one positive NaN, -0 made +0, so
/// the radix sort orders them as ATen does) and order[i] = i.
[[nodiscard]] Error launch_nms_keys(const NmsProblem& p, float* keys, int64_t* order, cudaStream_t stream) noexcept;

/// nms, step 2: CUB's stable descending radix sort of (keys, order) pairs, n <= INT32_MAX.
/// temp null: *temp_bytes gets the scratch size it needs, nothing is enqueued.
[[nodiscard]] Error nms_sort(void* temp, size_t* temp_bytes, const float* keys_in, float* keys_out,
                             const int64_t* order_in, int64_t* order_out, int64_t n, cudaStream_t stream) noexcept;

/// 64-bit words per row of the nms suppression mask.
[[nodiscard]] constexpr int64_t nms_mask_words(int64_t n) noexcept { return (n + 63) / 64; }

/// nms, step 3: boxes gathered in sorted order (`sorted`: 5 floats per box, x1 y1 x2 y2 and
/// area), then mask[r * words + w] bit b set when sorted box 64 * w + b comes after box r and
/// their IoU is > p.iou_threshold (in double). Words before r's own are not written.
[[nodiscard]] Error launch_nms_mask(const NmsProblem& p, const int64_t* order, float* sorted, uint64_t* mask,
                                    cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
