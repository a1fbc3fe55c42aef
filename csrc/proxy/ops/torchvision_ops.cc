// SPDX-License-Identifier: Apache-2.0
// torchvision's custom ops (detection's post-processing and pooling), reached through the
// proxy executor; the ops themselves are csrc/ops/vision/'s. Schemas as torchvision 0.26
// registers them.
#include "csrc/ops/vision/vision_ops.h"
#include "csrc/proxy/registry.h"

namespace slimcuda::proxy {
namespace {

Error nms(ProxyCall* c) {
  c->results.resize(1);
  return ops::nms(*c->tensor(0), *c->tensor(1), c->args[2].f, c->ctx, &c->results[0]);
}

Error roi_align(ProxyCall* c) {
  c->results.resize(1);
  return ops::roi_align(*c->tensor(0), *c->tensor(1), c->args[2].f, c->args[3].i, c->args[4].i, c->args[5].i,
                        c->args[6].b, c->ctx, &c->results[0]);
}

Error roi_pool(ProxyCall* c) {
  c->results.resize(2);
  return ops::roi_pool(*c->tensor(0), *c->tensor(1), c->args[2].f, c->args[3].i, c->args[4].i, c->ctx, &c->results[0],
                       &c->results[1]);
}

Error ps_roi_align(ProxyCall* c) {
  c->results.resize(2);
  return ops::ps_roi_align(*c->tensor(0), *c->tensor(1), c->args[2].f, c->args[3].i, c->args[4].i, c->args[5].i, c->ctx,
                           &c->results[0], &c->results[1]);
}

Error ps_roi_pool(ProxyCall* c) {
  c->results.resize(2);
  return ops::ps_roi_pool(*c->tensor(0), *c->tensor(1), c->args[2].f, c->args[3].i, c->args[4].i, c->ctx,
                          &c->results[0], &c->results[1]);
}

Error deform_conv2d(ProxyCall* c) {
  c->results.resize(1);
  const auto i = [c](size_t k) { return c->args[k].i; };
  return ops::deform_conv2d(*c->tensor(0), *c->tensor(1), *c->tensor(2), *c->tensor(3), *c->tensor(4), i(5), i(6), i(7),
                            i(8), i(9), i(10), i(11), i(12), c->args[13].b, c->ctx, &c->results[0]);
}

}  // namespace

std::vector<ProxyOp> torchvision_ops() {
  return {
      {"torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor", nms},
      {"torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
       "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
       roi_align},
      {"torchvision::roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
       "SymInt pooled_width) -> (Tensor, Tensor)",
       roi_pool},
      {"torchvision::ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
       "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
       ps_roi_align},
      {"torchvision::ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
       "SymInt pooled_width) -> (Tensor, Tensor)",
       ps_roi_pool},
      {"torchvision::deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
       "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, "
       "SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
       deform_conv2d},
  };
}

}  // namespace slimcuda::proxy
