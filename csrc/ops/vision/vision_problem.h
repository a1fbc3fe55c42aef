// SPDX-License-Identifier: Apache-2.0
#pragma once

// The checked arguments of torchvision's detection ops, as plain data that the CPU code and
// the CUDA kernels (nvcc) both read: pointers, sizes and element strides, no SlimTensor.

#include <cstdint>

// What both compilers see as callable from host and device code.
#ifdef __CUDACC__
#define SLIMCUDA_VISION_HD __host__ __device__ __forceinline__
#else
#define SLIMCUDA_VISION_HD inline
#endif

namespace slimcuda::ops {

/// The element types the ops cover (CPU: F32, F64; CUDA: F32, F16, BF16).
enum class VisionType : int8_t { F32, F64, F16, BF16 };

enum class RoiOp : int8_t { Align, Pool, PsAlign, PsPool };

/// roi_align, roi_pool, ps_roi_align and ps_roi_pool: input [N, C, H, W] and rois [K, 5]
/// (batch index, x1, y1, x2, y2) of one type, read through their strides; out and index
/// (argmax or channel_mapping, int32) contiguous [K, channels_out, pooled_h, pooled_w].
struct RoiProblem {
  RoiOp op = RoiOp::Align;
  VisionType type = VisionType::F32;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t in_strides[4] = {0, 0, 0, 0};
  int64_t rois = 0;
  int64_t roi_strides[2] = {0, 0};
  const void* input = nullptr;
  const void* roi_data = nullptr;
  double spatial_scale = 1.0;
  int64_t pooled_h = 1, pooled_w = 1;
  int64_t sampling_ratio = 0;  ///< <= 0: adaptive (ceil(roi size / pooled size) per bin)
  bool aligned = false;
  int64_t channels_out = 0;  ///< C (roi_align, roi_pool) or C / (pooled_h * pooled_w)
  void* out = nullptr;
  int32_t* index = nullptr;  ///< null for roi_align
  [[nodiscard]] SLIMCUDA_VISION_HD int64_t out_numel() const noexcept {
    return rois * channels_out * pooled_h * pooled_w;
  }
};

/// deform_conv2d: input [B, Cin, H, W], weight [Cout, Cin / groups, kH, kW], offset
/// [B, 2 * offset_groups * kH * kW, outH, outW], mask [B, offset_groups * kH * kW, outH, outW]
/// (read only when use_mask), bias [Cout], all one type and read through their strides; out
/// contiguous [B, Cout, outH, outW].
struct DeformProblem {
  VisionType type = VisionType::F32;
  int64_t batch = 0, c_in = 0, height = 0, width = 0, c_out = 0, kh = 1, kw = 1, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1, offset_groups = 1;
  bool use_mask = false;
  const void* input = nullptr;
  const void* weight = nullptr;
  const void* offset = nullptr;
  const void* mask = nullptr;
  const void* bias = nullptr;
  int64_t in_strides[4] = {0, 0, 0, 0}, w_strides[4] = {0, 0, 0, 0}, off_strides[4] = {0, 0, 0, 0},
          mask_strides[4] = {0, 0, 0, 0};
  int64_t bias_stride = 1;
  void* out = nullptr;
  [[nodiscard]] SLIMCUDA_VISION_HD int64_t out_numel() const noexcept { return batch * c_out * out_h * out_w; }
};

/// nms: boxes [N, 4] (x1, y1, x2, y2) and scores [N] of one type, read through their strides.
struct NmsProblem {
  VisionType type = VisionType::F32;
  int64_t n = 0;
  const void* boxes = nullptr;
  const void* scores = nullptr;
  int64_t box_strides[2] = {0, 0};
  int64_t score_stride = 1;
  double iou_threshold = 0.0;
};

}  // namespace slimcuda::ops
