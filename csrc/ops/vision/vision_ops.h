// SPDX-License-Identifier: Apache-2.0
#pragma once

// torchvision's detection ops (torchvision 0.26 schemas), CPU and CUDA, for the proxy
// executor (csrc/proxy) to call: AOTInductor reaches custom ops through
// aoti_torch_proxy_executor_call_function, so these have no C shims.
//
// Every function dispatches on its tensors' device: all CPU, or all CUDA of one device. ctx:
// for CUDA tensors the caller stream of their device, that device already current; for CPU
// tensors StreamContext::unselected(-1). Outputs are new contiguous tensors on the inputs'
// device, in the given unique_ptrs. Bad input (null output pointers, mixed devices or dtypes,
// wrong ranks or sizes, bad scalars) -> InvalidArgument; a dtype the device does not cover
// (CPU: float32, float64; CUDA: float32, float16, bfloat16, computed in float) ->
// NotSupported; the message is recorded (last_error_message) and warned. Inputs may have any
// strides. May throw std::bad_alloc (call inside c_entry).
//
// All but nms are static-shape: enqueued on ctx's stream, no synchronization. nms's output
// size depends on the data: see nms().

#include <cstdint>
#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor.
/// dets [N, 4] (x1, y1, x2, y2), scores [N]: the int64 indices of the boxes kept, in
/// descending score order (a stable sort: equal scores keep index order; NaN sorts first),
/// each box suppressing the later ones whose IoU with it is > iou_threshold (compared in
/// double). CUDA: sorts and computes the IoU mask on the stream, then synchronizes the stream
/// once (the kept count decides the output's size), runs the greedy pass on the host and
/// uploads the indices on the stream. Refused with NotSupported while the stream is being
/// captured into a CUDA graph (the output size depends on the data).
[[nodiscard]] Error nms(const SlimTensor& dets, const SlimTensor& scores, double iou_threshold,
                        const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);

/// torchvision::roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
/// sampling_ratio, aligned) -> Tensor. input [N, C, H, W], rois [K, 5] (batch index, x1, y1,
/// x2, y2, in input coordinates before spatial_scale), same dtype: out [K, C, pooled_height,
/// pooled_width], each bin the mean of sampling_ratio^2 bilinear samples (sampling_ratio <= 0:
/// ceil(roi size / pooled size) per axis); aligned shifts the roi by half a pixel. A roi
/// whose batch index is not in [0, N) gives zeros (torchvision reads out of bounds).
[[nodiscard]] Error roi_align(const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned,
                              const StreamContext& ctx, std::unique_ptr<SlimTensor>* out);

/// torchvision::roi_pool(input, rois, spatial_scale, pooled_height, pooled_width) ->
/// (Tensor, Tensor): the max over each bin of the rounded roi, and its argmax (int32, h * W +
/// w within the plane; -1 for an empty bin, whose value is 0).
[[nodiscard]] Error roi_pool(const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
                             int64_t pooled_height, int64_t pooled_width, const StreamContext& ctx,
                             std::unique_ptr<SlimTensor>* out, std::unique_ptr<SlimTensor>* argmax);

/// torchvision::ps_roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
/// sampling_ratio) -> (Tensor, Tensor): position-sensitive roi_align (always half-pixel
/// aligned), C = C_out * pooled_height * pooled_width; out [K, C_out, ph, pw] and
/// channel_mapping (int32: the input channel each output element read).
[[nodiscard]] Error ps_roi_align(const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
                                 int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio,
                                 const StreamContext& ctx, std::unique_ptr<SlimTensor>* out,
                                 std::unique_ptr<SlimTensor>* channel_mapping);

/// torchvision::ps_roi_pool(input, rois, spatial_scale, pooled_height, pooled_width) ->
/// (Tensor, Tensor): position-sensitive average pooling; as ps_roi_align's outputs.
[[nodiscard]] Error ps_roi_pool(const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
                                int64_t pooled_height, int64_t pooled_width, const StreamContext& ctx,
                                std::unique_ptr<SlimTensor>* out, std::unique_ptr<SlimTensor>* channel_mapping);

/// torchvision::deform_conv2d(input, weight, offset, mask, bias, stride_h, stride_w, pad_h,
/// pad_w, dilation_h, dilation_w, groups, offset_groups, use_mask) -> Tensor. input [B, Cin,
/// H, W], weight [Cout, Cin / groups, kH, kW], offset [B, 2 * offset_groups * kH * kW, outH,
/// outW] ((dy, dx) per tap), mask [B, offset_groups * kH * kW, outH, outW] (ignored, any
/// shape, unless use_mask), bias [Cout]: out [B, Cout, outH, outW].
[[nodiscard]] Error deform_conv2d(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offset,
                                  const SlimTensor& mask, const SlimTensor& bias, int64_t stride_h, int64_t stride_w,
                                  int64_t pad_h, int64_t pad_w, int64_t dilation_h, int64_t dilation_w, int64_t groups,
                                  int64_t offset_groups, bool use_mask, const StreamContext& ctx,
                                  std::unique_ptr<SlimTensor>* out);

}  // namespace slimcuda::ops
