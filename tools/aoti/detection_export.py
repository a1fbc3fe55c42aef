# SPDX-License-Identifier: Apache-2.0
"""Export-friendly replacements for the parts of torchvision's detection post-processing that
`torch.export.export` cannot trace (torchvision 0.26, PyTorch 2.11), applied only inside
`patched()`:

    with detection_export.patched():
        ep = torch.export.export(model, ([image],), strict=False)

Each replacement is our own re-implementation of one torchvision function, computing what the
original computes (checked by comparing the patched model's eager outputs with the unpatched
model's: `python3 tools/aoti/detection_export.py`; the one exception in principle is noted at
batched_nms), written without the
Python-level branch or length on a data-dependent size that stopped the export. That is
PyTorch's documented advice for data-dependent shapes: rewrite the branch as tensor
arithmetic, or tell the tracer what holds (`torch._check`). The sizes that really depend on
the data (how many boxes pass a score threshold, how many nms keeps) stay unbacked symbols in
the exported graph: the compiled model returns as many detections as eager does.

What each patch avoids (the guard, where torchvision 0.26 raises it under export):

- `torchvision.ops.boxes.batched_nms`: `boxes.numel() > 4000` (boxes.py:80, which
  implementation to use) and then `boxes.numel() == 0` (boxes.py:97, the early return of the
  coordinate-offset form). Replaced by the offset form alone, defined for no boxes too.
- `torchvision.models.detection._utils.BoxCoder.decode`: `box_sum > 0` (_utils.py:176, the
  number of proposals, data-dependent after the RPN's nms) before reshaping. Replaced by the
  reshape to explicit sizes, which needs no branch.
- `torchvision.ops.poolers._multiscale_roi_align`: `len(rois)` (poolers.py:185, a Python int
  of a data-dependent count), then one `torch.where(levels == level)` + index_put per FPN
  level. Replaced by RoIAlign of every box on every level and a per-box select of its level.
- torchvision::nms's fake kernel (its shape function for tracing): not a guard that stops the
  export but a wrong bound: torchvision's says nms keeps at least 2 boxes, which the exported
  graph then asserts at run time (a model fails where eager keeps 0 or 1). Replaced, for
  the export only, by one that says 0 <= kept <= boxes.
- `torchvision.models.detection.ssd.SSD.postprocess_detections` (SSD and SSDlite): not a guard
  but a compile time: a Python loop over the 90 classes, each with its own score filter (a
  data-dependent size) and top-k, 90 unbacked sizes that took Inductor's CUDA compile past
  400 s. Replaced by one top-k over every class at once and one filter.
- `torchvision.models.detection.roi_heads.paste_masks_in_image` (Mask R-CNN only): a Python
  loop over the detections (a data-dependent count) that resizes each mask to its box's own
  size, `int(box[2] - box[0] + 1)`. Replaced by one gather-based bilinear resampling of every
  mask onto the image.
"""
import contextlib

import torch


def batched_nms(boxes, scores, idxs, iou_threshold):
    """torchvision.ops.boxes.batched_nms: nms within each category (idxs), the kept indices in
    decreasing score order. torchvision picks per-category nms (`_batched_nms_vanilla`) above
    4000 coordinates on the CPU, else the coordinate-offset form; both keep the same boxes.
    Here always the offset form: each category's boxes are moved by idxs * (max coordinate + 1)
    so that boxes of different categories cannot overlap, then one nms. torchvision returns
    early for no boxes because `boxes.max()` of an empty tensor is an error; a 0 appended
    makes the max defined without the branch (boxes are clipped to the image, so their max is
    >= 0 and the offsets are torchvision's whenever there is a box). Where torchvision would
    have run per-category nms instead (over 1000 boxes on the CPU, 25000 on CUDA), the offset
    boxes' rounding could move an IoU that lies within a float ulp of the threshold across it;
    otherwise the kept boxes are the same."""
    max_coordinate = torch.cat([boxes.reshape(-1), boxes.new_zeros(1)]).max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    return torch.ops.torchvision.nms(boxes + offsets[:, None], scores, iou_threshold)


def box_coder_decode(self, rel_codes, boxes):
    """torchvision BoxCoder.decode: the [N, K*4] regression of the N boxes (concatenated over
    the images) applied to them -> [N, K, 4]. torchvision reshapes with -1 only when N > 0
    (a -1 is ambiguous for no elements); explicit sizes need no branch. Both callers (the
    RPN and the box head) pass rel_codes as [N, K*4]."""
    concat_boxes = torch.cat(boxes, dim=0)
    box_sum = concat_boxes.shape[0]
    codes = rel_codes.shape[-1]
    rel_codes = rel_codes.reshape(box_sum, codes)
    return self.decode_single(rel_codes, concat_boxes).reshape(box_sum, codes // 4, 4)


def multiscale_roi_align(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    """torchvision.ops.poolers._multiscale_roi_align: RoIAlign of each box on the FPN level the
    mapper assigns it. torchvision sizes its result with `len(rois)` and fills it level by level
    with `torch.where(levels == level)` + index_put; here every box is pooled on every level
    (RoIAlign treats each box on its own, so a box's values on its own level are the same)
    and torch.where keeps the values of its level: no count is needed, at L times the pooling
    work (L = 4 levels for the FPN detectors)."""
    from torchvision.ops import roi_align
    from torchvision.ops.poolers import _convert_to_roi_format
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    rois = _convert_to_roi_format(boxes)
    if len(x_filtered) == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes).reshape(-1, 1, 1, 1)
    dtype = x_filtered[0].dtype
    result = None
    for level, (feature, scale) in enumerate(zip(x_filtered, scales)):
        pooled = roi_align(feature, rois, output_size=output_size, spatial_scale=scale,
                           sampling_ratio=sampling_ratio).to(dtype)
        result = pooled if result is None else torch.where(levels == level, pooled, result)
    return result


def paste_masks_in_image(masks, boxes, img_shape, padding=1):
    """torchvision.models.detection.roi_heads.paste_masks_in_image: each M×M mask (M = 28)
    resized bilinearly (align_corners=False) to its box, expanded by one pixel of padding, and
    written into an empty image of img_shape. torchvision loops over the masks in Python and
    resizes each to the box's own integer size; here every image pixel of every mask is
    computed at once, with the same source coordinates and weights as that resize:
    for the pixel (y, x) inside box [x0, y0, x1, y1] (integers) with h = y1 - y0 + 1, the
    source row is (y - y0 + 0.5) * (M' / h) - 0.5 (M' = M + 2 padding, negative -> 0), the
    rows floor(src) and floor(src) + 1 (clamped) weighted by the fraction; columns alike."""
    from torchvision.models.detection.roi_heads import expand_boxes, expand_masks
    masks, scale = expand_masks(masks, padding=padding)
    boxes = expand_boxes(boxes, scale).to(dtype=torch.int64)
    im_h, im_w = img_shape
    n, m = masks.shape[0], masks.shape[-1]
    src = masks[:, 0].reshape(n, m * m)

    def axis(lo, hi, size):
        """Per box and image coordinate along one axis: inside the box, the two source
        indices and their weights (the CPU upsample kernel's arithmetic, in float32)."""
        length = (hi - lo + 1).clamp(min=1)  # torchvision: max(int(box[2] - box[0] + 1), 1)
        pos = torch.arange(size, device=masks.device)[None, :]  # [1, size]
        rel = pos - lo[:, None]  # the pixel's index in the resized mask
        inside = (pos >= lo[:, None].clamp(min=0)) & (pos < (hi[:, None] + 1).clamp(max=size))
        step = torch.full_like(length, m, dtype=torch.float32) / length.to(torch.float32)
        real = (step[:, None] * (rel.to(torch.float32) + 0.5) - 0.5).clamp(min=0)
        i0 = real.floor().to(torch.int64).clamp(max=m - 1)
        w1 = (real - i0.to(torch.float32)).clamp(0, 1)
        i1 = torch.where(i0 < m - 1, i0 + 1, i0)
        i0 = i0.clamp(0, m - 1)  # outside the box the indices are unused: keep them in range
        i1 = i1.clamp(0, m - 1)
        return inside, i0, i1, 1 - w1, w1

    in_y, y0, y1, wy0, wy1 = axis(boxes[:, 1], boxes[:, 3], im_h)
    in_x, x0, x1, wx0, wx1 = axis(boxes[:, 0], boxes[:, 2], im_w)

    def at(rows, cols):
        idx = (rows[:, :, None] * m + cols[:, None, :]).reshape(n, im_h * im_w)
        return torch.gather(src, 1, idx).reshape(n, im_h, im_w)

    # The upsample kernel's order: along the width within each row, then between the rows.
    top = wx0[:, None, :] * at(y0, x0) + wx1[:, None, :] * at(y0, x1)
    bottom = wx0[:, None, :] * at(y1, x0) + wx1[:, None, :] * at(y1, x1)
    value = wy0[:, :, None] * top + wy1[:, :, None] * bottom
    inside = in_y[:, :, None] & in_x[:, None, :]
    return torch.where(inside, value, value.new_zeros(())).to(masks.dtype)[:, None]


def ssd_postprocess_detections(self, head_outputs, image_anchors, image_shapes):
    """torchvision.models.detection.ssd.SSD.postprocess_detections: per image, the decoded
    boxes clipped to the image; per class (1..C-1) the boxes scoring above score_thresh, their
    top topk_candidates in decreasing score, concatenated class after class; batched nms; the
    first detections_per_img. Here the per-class filter and top-k are one top-k over the
    anchors of every class (k = min(topk_candidates, anchors), a static size) and one filter:
    the boxes of a class above the threshold are the leading ones of its top-k, in the same
    order, so the concatenation is torchvision's (equal scores aside, whose order top-k does
    not define either way)."""
    import torch.nn.functional as F
    from torchvision.ops import boxes as box_ops
    bbox_regression = head_outputs["bbox_regression"]
    pred_scores = F.softmax(head_outputs["cls_logits"], dim=-1)
    num_classes = pred_scores.size(-1)
    detections = []
    for boxes, scores, anchors, image_shape in zip(bbox_regression, pred_scores, image_anchors, image_shapes):
        boxes = self.box_coder.decode_single(boxes, anchors)
        boxes = box_ops.clip_boxes_to_image(boxes, image_shape)
        per_class = scores[:, 1:]
        top, idx = per_class.topk(min(self.topk_candidates, per_class.size(0)), dim=0)
        top, idx = top.t(), idx.t()  # class after class, each in decreasing score
        labels = torch.arange(1, num_classes, device=scores.device)[:, None].expand_as(idx)
        above = top > self.score_thresh
        image_scores, image_boxes, image_labels = top[above], boxes[idx[above]], labels[above]
        keep = box_ops.batched_nms(image_boxes, image_scores, image_labels, self.nms_thresh)
        keep = keep[: self.detections_per_img]
        detections.append({"boxes": image_boxes[keep], "scores": image_scores[keep], "labels": image_labels[keep]})
    return detections


def nms_fake(dets, scores, iou_threshold):
    """The shape function of torchvision::nms for tracing (its "fake" kernel): int64 indices,
    as many as the data keeps. torchvision 0.26's own (`_meta_registrations.meta_nms`) makes
    that count with the deprecated `create_unbacked_symint()`, whose lower bound is 2, so the
    exported graph asserts at run time that nms kept at least 2 boxes, and the compiled model
    fails where eager returns 0 or 1 detections. This one has torchvision's checks and the
    bounds that hold: 0 <= kept <= boxes."""
    torch._check(dets.dim() == 2, lambda: f"boxes should be a 2d tensor, got {dets.dim()}D")
    torch._check(dets.size(1) == 4, lambda: f"boxes should have 4 elements in dimension 1, got {dets.size(1)}")
    torch._check(scores.dim() == 1, lambda: f"scores should be a 1d tensor, got {scores.dim()}")
    torch._check(dets.size(0) == scores.size(0), lambda: "boxes and scores should have the same number of rows")
    kept = torch.library.get_ctx().new_dynamic_size()  # lower bound 0
    torch._check(kept <= dets.size(0))
    return dets.new_empty(kept, dtype=torch.long)


@contextlib.contextmanager
def patched():
    """The replacements above in place of torchvision's, restored on exit."""
    import torchvision.models.detection._utils as det_utils
    import torchvision.models.detection.roi_heads as roi_heads
    import torchvision.ops.boxes as boxes
    import torchvision.ops.poolers as poolers
    import torchvision.models.detection.transform as transform
    import torchvision.models.detection.ssd as ssd
    saved = [(ssd.SSD, "postprocess_detections", ssd.SSD.postprocess_detections),
             (boxes, "batched_nms", boxes.batched_nms),
             (det_utils.BoxCoder, "decode", det_utils.BoxCoder.decode),
             (poolers, "_multiscale_roi_align", poolers._multiscale_roi_align),
             (roi_heads, "paste_masks_in_image", roi_heads.paste_masks_in_image),
             (transform, "paste_masks_in_image", transform.paste_masks_in_image)]
    # nms_fake goes on top of the op's fake kernels (the newest one is used) and comes off on
    # exit. Not through torch.library.register_fake: torchvision's C++ registration names
    # torchvision._meta_registrations as the one module allowed to hold its fake kernels.
    from torch._library.fake_impl import Kernel
    fakes = torch._library.simple_registry.singleton.find("torchvision::nms").fake_impl.kernels
    fake = Kernel(nms_fake, "tools/aoti/detection_export.py")
    try:
        fakes.append(fake)
        boxes.batched_nms = batched_nms
        ssd.SSD.postprocess_detections = ssd_postprocess_detections
        det_utils.BoxCoder.decode = box_coder_decode
        poolers._multiscale_roi_align = multiscale_roi_align
        roi_heads.paste_masks_in_image = paste_masks_in_image
        transform.paste_masks_in_image = paste_masks_in_image
        yield
    finally:
        fakes.remove(fake)
        for module, name, value in saved:
            setattr(module, name, value)


def check_eager(names=None, seeds=(101, 7, 8)):
    """The patched model's eager outputs against the unpatched model's, on the CPU, for the
    zoo's detectors (export_models.py's det_* models, built and calibrated as the export
    does) on the zoo's input and more random images: one line per model and image with the
    detections kept and the largest difference of each output (0: bit for bit)."""
    import sys
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import export_models as em
    names = names or [n for n, e in em.ZOO.items() if e[5].get("detection")]
    all_equal = True
    for name in names:
        factory, dtype, in_specs, _, _, opts = em.ZOO[name]
        torch.manual_seed(1234)
        model = em.build(factory, opts.get("kwargs", {})).eval()
        em.calibrate_batchnorm(model, in_specs, "cpu")
        for seed in seeds:
            x = em.make_inputs(in_specs, in_specs[0]["sizes"][0], "cpu", seed)
            with torch.no_grad():
                want = model(*x)
                with patched():
                    got = model(*x)
            diffs = []
            for g, w in zip(got, want):
                if g.shape != w.shape:
                    diffs.append(f"sizes {list(g.shape)} vs {list(w.shape)}")
                    continue
                diffs.append(float((g.double() - w.double()).abs().max()) if g.numel() else 0.0)
            equal = len(got) == len(want) and all(d == 0.0 for d in diffs[:3]) and \
                all(isinstance(d, float) and d <= 1e-5 for d in diffs[3:])  # masks: float32 rounding
            all_equal = all_equal and equal
            print(f"{name} seed {seed}: {want[1].numel()} detections, max |patched - eager| per output "
                  f"{diffs}: {'equal' if equal else 'DIFFERENT'}", flush=True)
    return all_equal


if __name__ == "__main__":
    import sys
    sys.exit(0 if check_eager(sys.argv[1:] or None) else 1)
