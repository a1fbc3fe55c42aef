// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/vision/vision_ops.h"

#include <vector>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/vision/nms_cuda.h"
#include "csrc/ops/vision/vision_args.h"
#include "csrc/ops/vision/vision_cpu.h"
#include "csrc/ops/vision/vision_kernels.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

// Where the outputs go: the first input's device, and ctx moved onto it for a CUDA tensor.
struct Place {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  StreamContext ctx = StreamContext::unselected(-1);
};

Error place_of(const SlimTensor& t, const StreamContext& ctx, Place* out) noexcept {
  if (!t.device().is_cuda()) return Error::Ok;
  out->type = DeviceType::CUDA;
  out->index = t.device().index;
  SLIMCUDA_OP_TRY(ctx.on_device(out->index, &out->ctx));
  return Error::Ok;
}

Error new_contiguous(ScalarType dtype, const Place& at, const std::vector<int64_t>& sizes,
                     std::unique_ptr<SlimTensor>* out) {
  return new_tensor(dtype, at.type, at.index, sizes, contiguous_strides(sizes), at.ctx, out);
}

// The four roi ops: checks, outputs, then the device's loop or kernel.
Error roi_op(const char* name, RoiOp op, const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
             int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio, bool aligned, const StreamContext& ctx,
             std::unique_ptr<SlimTensor>* out, std::unique_ptr<SlimTensor>* index) {
  SLIMCUDA_OP_CHECK(out != nullptr && (op == RoiOp::Align || index != nullptr), Error::InvalidArgument,
                    "%s: null output pointer", name);
  RoiProblem p;
  SLIMCUDA_OP_TRY(check_roi(name, op, input, rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned, &p));
  Place at;
  SLIMCUDA_OP_TRY(place_of(input, ctx, &at));
  const std::vector<int64_t> sizes = {p.rois, p.channels_out, pooled_h, pooled_w};
  SLIMCUDA_OP_TRY(new_contiguous(input.dtype(), at, sizes, out));
  p.out = (*out)->data_ptr();
  if (op != RoiOp::Align) {
    SLIMCUDA_OP_TRY(new_contiguous(ScalarType::Int, at, sizes, index));
    p.index = static_cast<int32_t*>((*index)->data_ptr());
  }
  if (at.type == DeviceType::CUDA) {
    SLIMCUDA_OP_TRY(launch_roi(p, at.ctx.stream()));
  } else {
    roi_cpu(p);
  }
  return Error::Ok;
}

}  // namespace

Error nms(const SlimTensor& dets, const SlimTensor& scores, double iou_threshold, const StreamContext& ctx,
          std::unique_ptr<SlimTensor>* out) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "nms: null output pointer");
  NmsProblem p;
  SLIMCUDA_OP_TRY(check_nms(dets, scores, iou_threshold, &p));
  Place at;
  SLIMCUDA_OP_TRY(place_of(dets, ctx, &at));
  if (at.type == DeviceType::CUDA) return nms_cuda(p, at.ctx, out);
  const std::vector<int64_t> keep = nms_cpu(p);
  SLIMCUDA_OP_TRY(new_contiguous(ScalarType::Long, at, {static_cast<int64_t>(keep.size())}, out));
  for (size_t i = 0; i < keep.size(); ++i) static_cast<int64_t*>((*out)->data_ptr())[i] = keep[i];
  return Error::Ok;
}

Error roi_align(const SlimTensor& input, const SlimTensor& rois, double spatial_scale, int64_t pooled_height,
                int64_t pooled_width, int64_t sampling_ratio, bool aligned, const StreamContext& ctx,
                std::unique_ptr<SlimTensor>* out) {
  return roi_op("roi_align", RoiOp::Align, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                aligned, ctx, out, nullptr);
}

Error roi_pool(const SlimTensor& input, const SlimTensor& rois, double spatial_scale, int64_t pooled_height,
               int64_t pooled_width, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out,
               std::unique_ptr<SlimTensor>* argmax) {
  return roi_op("roi_pool", RoiOp::Pool, input, rois, spatial_scale, pooled_height, pooled_width, 0, false, ctx, out,
                argmax);
}

Error ps_roi_align(const SlimTensor& input, const SlimTensor& rois, double spatial_scale, int64_t pooled_height,
                   int64_t pooled_width, int64_t sampling_ratio, const StreamContext& ctx,
                   std::unique_ptr<SlimTensor>* out, std::unique_ptr<SlimTensor>* channel_mapping) {
  return roi_op("ps_roi_align", RoiOp::PsAlign, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                true, ctx, out, channel_mapping);
}

Error ps_roi_pool(const SlimTensor& input, const SlimTensor& rois, double spatial_scale, int64_t pooled_height,
                  int64_t pooled_width, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out,
                  std::unique_ptr<SlimTensor>* channel_mapping) {
  return roi_op("ps_roi_pool", RoiOp::PsPool, input, rois, spatial_scale, pooled_height, pooled_width, 0, false, ctx,
                out, channel_mapping);
}

Error deform_conv2d(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offset, const SlimTensor& mask,
                    const SlimTensor& bias, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                    int64_t dilation_h, int64_t dilation_w, int64_t groups, int64_t offset_groups, bool use_mask,
                    const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "deform_conv2d: null output pointer");
  DeformProblem p;
  const int64_t stride[2] = {stride_h, stride_w}, pad[2] = {pad_h, pad_w}, dilation[2] = {dilation_h, dilation_w};
  SLIMCUDA_OP_TRY(
      check_deform(input, weight, offset, mask, bias, stride, pad, dilation, groups, offset_groups, use_mask, &p));
  Place at;
  SLIMCUDA_OP_TRY(place_of(input, ctx, &at));
  SLIMCUDA_OP_TRY(new_contiguous(input.dtype(), at, {p.batch, p.c_out, p.out_h, p.out_w}, out));
  p.out = (*out)->data_ptr();
  if (at.type == DeviceType::CUDA) return launch_deform_conv2d(p, at.ctx.stream());
  deform_conv2d_cpu(p);
  return Error::Ok;
}

}  // namespace slimcuda::ops
