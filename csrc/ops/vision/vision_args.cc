// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/vision/vision_args.h"

#include "csrc/ops/common/op_args.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda::ops {
namespace {

long long ll(int64_t v) noexcept { return static_cast<long long>(v); }

const char* where(const SlimTensor& t) noexcept { return t.device().is_cuda() ? "CUDA" : "CPU"; }

// `t` (argument `what`) is on `first`'s device and has its dtype.
Error same_as(const char* name, const char* what, const SlimTensor& t, const char* first_what,
              const SlimTensor& first) noexcept {
  SLIMCUDA_OP_CHECK(t.device() == first.device(), Error::InvalidArgument,
                    "%s: %s is on %s:%d, %s on %s:%d (all tensors must be on one device)", name, what, where(t),
                    static_cast<int>(t.device().index), first_what, where(first),
                    static_cast<int>(first.device().index));
  SLIMCUDA_OP_CHECK(t.dtype() == first.dtype(), Error::InvalidArgument, "%s: %s is %s, %s is %s (must be equal)", name,
                    what, scalar_type_name(t.dtype()), first_what, scalar_type_name(first.dtype()));
  return Error::Ok;
}

Error rank_is(const char* name, const char* what, const SlimTensor& t, int64_t rank) noexcept {
  SLIMCUDA_OP_CHECK(t.dim() == rank, Error::InvalidArgument, "%s: %s must be %lld-D, got %lld-D", name, what, ll(rank),
                    ll(t.dim()));
  return Error::Ok;
}

// The checks every tensor argument of an op shares: rank, then device and dtype of the first.
Error operand(const char* name, const char* what, const SlimTensor& t, int64_t rank, const char* first_what,
              const SlimTensor& first) noexcept {
  SLIMCUDA_OP_TRY(rank_is(name, what, t, rank));
  return same_as(name, what, t, first_what, first);
}

void copy4(const SlimTensor& t, int64_t out[4]) noexcept {
  for (int d = 0; d < 4; ++d) out[d] = t.strides()[d];
}

}  // namespace

Error vision_type(const char* name, const SlimTensor& t, VisionType* out) noexcept {
  const bool cuda = t.device().is_cuda();
  switch (t.dtype()) {
    case ScalarType::Float:
      *out = VisionType::F32;
      return Error::Ok;
    case ScalarType::Double:
      if (!cuda) {
        *out = VisionType::F64;
        return Error::Ok;
      }
      break;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      if (cuda) {
        *out = t.dtype() == ScalarType::Half ? VisionType::F16 : VisionType::BF16;
        return Error::Ok;
      }
      break;
    default:
      break;
  }
  (void)set_last_error(Error::NotSupported, "%s: dtype %s is not supported on %s (%s)", name,
                       scalar_type_name(t.dtype()), where(t), cuda ? "float32, float16, bfloat16" : "float32, float64");
  return warn_last_error(Error::NotSupported, __FILE__, __LINE__);
}

Error check_roi(const char* name, RoiOp op, const SlimTensor& input, const SlimTensor& rois, double spatial_scale,
                int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio, bool aligned, RoiProblem* p) noexcept {
  SLIMCUDA_OP_TRY(rank_is(name, "input", input, 4));
  SLIMCUDA_OP_TRY(operand(name, "rois", rois, 2, "input", input));
  SLIMCUDA_OP_CHECK(rois.sizes()[1] == 5, Error::InvalidArgument,
                    "%s: rois must be [K, 5] (batch index, x1, y1, x2, y2), got [%lld, %lld]", name,
                    ll(rois.sizes()[0]), ll(rois.sizes()[1]));
  SLIMCUDA_OP_CHECK(pooled_h > 0 && pooled_w > 0, Error::InvalidArgument,
                    "%s: pooled_height and pooled_width must be positive, got %lld and %lld", name, ll(pooled_h),
                    ll(pooled_w));
  SLIMCUDA_OP_TRY(vision_type(name, input, &p->type));
  const int64_t c = input.sizes()[1];
  const bool ps = op == RoiOp::PsAlign || op == RoiOp::PsPool;
  SLIMCUDA_OP_CHECK(!ps || c % (pooled_h * pooled_w) == 0, Error::InvalidArgument,
                    "%s: input channels (%lld) must be a multiple of pooled_height * pooled_width (%lld)", name, ll(c),
                    ll(pooled_h * pooled_w));
  p->op = op;
  p->batch = input.sizes()[0], p->channels = c, p->height = input.sizes()[2], p->width = input.sizes()[3];
  copy4(input, p->in_strides);
  p->rois = rois.sizes()[0];
  p->roi_strides[0] = rois.strides()[0], p->roi_strides[1] = rois.strides()[1];
  p->input = input.data_ptr(), p->roi_data = rois.data_ptr();
  p->spatial_scale = spatial_scale;
  p->pooled_h = pooled_h, p->pooled_w = pooled_w, p->sampling_ratio = sampling_ratio, p->aligned = aligned;
  p->channels_out = ps ? c / (pooled_h * pooled_w) : c;
  return Error::Ok;
}

Error check_nms(const SlimTensor& dets, const SlimTensor& scores, double iou_threshold, NmsProblem* p) noexcept {
  const char* name = "nms";
  SLIMCUDA_OP_TRY(rank_is(name, "dets", dets, 2));
  SLIMCUDA_OP_CHECK(dets.sizes()[1] == 4, Error::InvalidArgument,
                    "nms: dets must be [N, 4] (x1, y1, x2, y2), got [%lld, %lld]", ll(dets.sizes()[0]),
                    ll(dets.sizes()[1]));
  SLIMCUDA_OP_TRY(operand(name, "scores", scores, 1, "dets", dets));
  SLIMCUDA_OP_CHECK(scores.sizes()[0] == dets.sizes()[0], Error::InvalidArgument,
                    "nms: dets has %lld boxes, scores %lld (must be equal)", ll(dets.sizes()[0]),
                    ll(scores.sizes()[0]));
  SLIMCUDA_OP_TRY(vision_type(name, dets, &p->type));
  p->n = dets.sizes()[0];
  p->boxes = dets.data_ptr(), p->scores = scores.data_ptr();
  p->box_strides[0] = dets.strides()[0], p->box_strides[1] = dets.strides()[1];
  p->score_stride = scores.strides()[0];
  p->iou_threshold = iou_threshold;
  return Error::Ok;
}

Error check_deform(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offset, const SlimTensor& mask,
                   const SlimTensor& bias, const int64_t stride[2], const int64_t pad[2], const int64_t dilation[2],
                   int64_t groups, int64_t offset_groups, bool use_mask, DeformProblem* p) noexcept {
  const char* name = "deform_conv2d";
  SLIMCUDA_OP_TRY(rank_is(name, "input", input, 4));
  SLIMCUDA_OP_TRY(operand(name, "weight", weight, 4, "input", input));
  SLIMCUDA_OP_TRY(operand(name, "offset", offset, 4, "input", input));
  if (use_mask) SLIMCUDA_OP_TRY(operand(name, "mask", mask, 4, "input", input));
  SLIMCUDA_OP_TRY(operand(name, "bias", bias, 1, "input", input));
  SLIMCUDA_OP_CHECK(stride[0] > 0 && stride[1] > 0 && dilation[0] > 0 && dilation[1] > 0, Error::InvalidArgument,
                    "deform_conv2d: stride (%lld, %lld) and dilation (%lld, %lld) must be positive", ll(stride[0]),
                    ll(stride[1]), ll(dilation[0]), ll(dilation[1]));
  SLIMCUDA_OP_CHECK(pad[0] >= 0 && pad[1] >= 0, Error::InvalidArgument,
                    "deform_conv2d: padding (%lld, %lld) must be non-negative", ll(pad[0]), ll(pad[1]));
  const int64_t b = input.sizes()[0], c_in = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  const int64_t c_out = weight.sizes()[0], kh = weight.sizes()[2], kw = weight.sizes()[3];
  SLIMCUDA_OP_CHECK(groups > 0 && offset_groups > 0, Error::InvalidArgument,
                    "deform_conv2d: groups (%lld) and offset_groups (%lld) must be positive", ll(groups),
                    ll(offset_groups));
  SLIMCUDA_OP_CHECK(kh > 0 && kw > 0, Error::InvalidArgument, "deform_conv2d: an empty kernel (%lld x %lld)", ll(kh),
                    ll(kw));
  SLIMCUDA_OP_CHECK(weight.sizes()[1] * groups == c_in && c_out % groups == 0, Error::InvalidArgument,
                    "deform_conv2d: weight [%lld, %lld, ...] does not fit %lld input channels in %lld groups",
                    ll(c_out), ll(weight.sizes()[1]), ll(c_in), ll(groups));
  SLIMCUDA_OP_CHECK(c_in % offset_groups == 0, Error::InvalidArgument,
                    "deform_conv2d: input channels (%lld) must be a multiple of offset_groups (%lld)", ll(c_in),
                    ll(offset_groups));
  const int64_t out_h = (h + 2 * pad[0] - (dilation[0] * (kh - 1) + 1)) / stride[0] + 1;
  const int64_t out_w = (w + 2 * pad[1] - (dilation[1] * (kw - 1) + 1)) / stride[1] + 1;
  SLIMCUDA_OP_CHECK(h + 2 * pad[0] >= dilation[0] * (kh - 1) + 1 && w + 2 * pad[1] >= dilation[1] * (kw - 1) + 1,
                    Error::InvalidArgument, "deform_conv2d: the output would be empty (%lld x %lld)", ll(out_h),
                    ll(out_w));
  const int64_t taps = offset_groups * kh * kw;
  SLIMCUDA_OP_CHECK(offset.sizes()[0] == b && offset.sizes()[1] == 2 * taps && offset.sizes()[2] == out_h &&
                        offset.sizes()[3] == out_w,
                    Error::InvalidArgument,
                    "deform_conv2d: offset must be [%lld, %lld, %lld, %lld], got [%lld, %lld, %lld, %lld]", ll(b),
                    ll(2 * taps), ll(out_h), ll(out_w), ll(offset.sizes()[0]), ll(offset.sizes()[1]),
                    ll(offset.sizes()[2]), ll(offset.sizes()[3]));
  SLIMCUDA_OP_CHECK(!use_mask || (mask.sizes()[0] == b && mask.sizes()[1] == taps && mask.sizes()[2] == out_h &&
                                  mask.sizes()[3] == out_w),
                    Error::InvalidArgument, "deform_conv2d: mask must be [%lld, %lld, %lld, %lld]", ll(b), ll(taps),
                    ll(out_h), ll(out_w));
  SLIMCUDA_OP_CHECK(bias.sizes()[0] == c_out, Error::InvalidArgument,
                    "deform_conv2d: bias has %lld elements, weight %lld output channels", ll(bias.sizes()[0]),
                    ll(c_out));
  SLIMCUDA_OP_TRY(vision_type(name, input, &p->type));
  p->batch = b, p->c_in = c_in, p->height = h, p->width = w, p->c_out = c_out, p->kh = kh, p->kw = kw;
  p->out_h = out_h, p->out_w = out_w;
  p->stride_h = stride[0], p->stride_w = stride[1], p->pad_h = pad[0], p->pad_w = pad[1];
  p->dil_h = dilation[0], p->dil_w = dilation[1], p->groups = groups, p->offset_groups = offset_groups;
  p->use_mask = use_mask;
  p->input = input.data_ptr(), p->weight = weight.data_ptr(), p->offset = offset.data_ptr();
  p->mask = use_mask ? mask.data_ptr() : nullptr, p->bias = bias.data_ptr();
  copy4(input, p->in_strides);
  copy4(weight, p->w_strides);
  copy4(offset, p->off_strides);
  if (use_mask) copy4(mask, p->mask_strides);
  p->bias_stride = bias.strides()[0];
  return Error::Ok;
}

}  // namespace slimcuda::ops
