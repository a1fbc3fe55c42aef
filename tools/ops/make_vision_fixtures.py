#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/vision_ops.json: the fixture cases of torchvision's detection ops.

Expected values come from torchvision's CPU kernels (torch.ops.torchvision.*), in the case's
dtype for float32/float64 (the roi ops then match to rounding), from float64 for deform_conv2d
(its GEMM sums in another order), and for the float16/bfloat16 CUDA cases from float32 on the
rounded inputs, rounded once (the CUDA ops accumulate in float).

Feature maps, weights, offsets, masks and biases are generated from the case's seed exactly as
tools/ops/make_op_fixtures.py describes (element j of operand t: (splitmix64(seed * 1000003 +
t * 7919 + j) % 17 - 8) / 8), times the operand's "scale": values that float16 holds exactly.
Boxes, scores and rois are small and stored. Numbers that JSON cannot hold are the strings
"nan", "inf", "-inf".
Usage: python3 tools/ops/make_vision_fixtures.py > testdata/vision_ops.json
"""
import json
import math
import random
import sys

import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision)

MASK = (1 << 64) - 1
DT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16}
# |got - want| <= atol + rtol * |want|.
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}
DEFORM_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10), "float16": (5e-2, 2e-2),
              "bfloat16": (2e-1, 4e-2)}
# The dtypes each device's op covers.
DEVICES = {"cpu": ["float32", "float64"], "cuda": ["float32", "float16", "bfloat16"]}


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def operand(seed, t, spec):
    n = math.prod(spec["sizes"])
    scale = spec.get("scale", 1.0)
    v = [(((splitmix64(seed * 1000003 + t * 7919 + j) % 17) - 8) / 8.0) * scale for j in range(n)]
    return torch.tensor(v, dtype=torch.float64).reshape(spec["sizes"])


def num(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def flat(x):
    return [num(float(v)) for v in x.reshape(-1).tolist()]


def work(dtype):
    """The dtype torchvision's CPU kernel computes the expected values in."""
    return DT[dtype] if dtype in ("float32", "float64") else torch.float32


def finish(x, dtype):
    """A result as the op stores it (float16/bfloat16: rounded once), as float64."""
    return x.to(DT[dtype]).to(torch.float64)


def tol(dtype, table=None):
    a, r = (table or TOL)[dtype]
    return {"atol": a, "rtol": r}


def per_device(base, fn):
    """One case per device and dtype: name_<dtype>_<device>."""
    out = []
    for dev, dtypes in DEVICES.items():
        for dt in dtypes:
            c = dict(base, name=f"{base['name']}_{dt}_{dev}", device=dev, dtype=dt,
                     requires="none" if dev == "cpu" else "gpu")
            c.update(fn(c))
            out.append(c)
    return out


# ---- nms ----

def nms_case(name, dets, scores, iou):
    def fn(c):
        w = work(c["dtype"])
        d = torch.tensor(dets, dtype=torch.float64).reshape(-1, 4).to(DT[c["dtype"]]).to(w)
        s = torch.tensor(scores, dtype=torch.float64).to(DT[c["dtype"]]).to(w)
        keep = torch.ops.torchvision.nms(d, s, iou)
        return {"expected": keep.tolist()}
    return per_device({"name": name, "op": "nms", "dets": dets, "scores": [num(v) for v in scores],
                       "iou_threshold": iou}, fn)


def nms_cases():
    cases = []
    # Ties in score everywhere: kept indices follow the stable descending sort (index order).
    dets = [[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10], [20, 20, 30, 30], [21, 21, 31, 31],
            [50, 50, 52, 52], [0, 0, 10, 10], [5, 5, 15, 15]]
    cases += nms_case("nms_ties", dets, [0.5, 0.5, 0.5, 0.75, 0.75, 0.25, 0.5, 0.5], 0.5)
    cases += nms_case("nms_all_equal_scores", dets, [1.0] * 8, 0.3)
    # IoU exactly at the threshold is kept (suppression needs IoU > threshold): 50 / 100.
    cases += nms_case("nms_iou_equal_threshold", [[0, 0, 10, 10], [0, 0, 10, 5]], [0.9, 0.8], 0.5)
    # IoU 50 / 150 is 0.33333334 in float, above the double threshold 1/3: compared in double.
    cases += nms_case("nms_iou_float_vs_double", [[0, 0, 10, 10], [5, 0, 15, 10]], [0.9, 0.8], 1.0 / 3.0)
    cases += nms_case("nms_nan_score", dets[:4], [0.5, float("nan"), 0.75, 0.5], 0.5)
    cases += nms_case("nms_empty", [], [], 0.5)
    # Degenerate (zero-area) boxes and a threshold that suppresses any overlap.
    cases += nms_case("nms_degenerate", [[3, 3, 3, 3], [0, 0, 4, 4], [2, 2, 6, 6], [4, 4, 4, 8]],
                      [0.25, 0.5, 0.5, 0.75], 0.0)
    # More than 64 and 128 boxes (the CUDA mask's words), quantized scores with ties.
    rng = random.Random(7)
    many, sc = [], []
    for _ in range(200):
        x, y = rng.randint(0, 60), rng.randint(0, 60)
        many.append([x, y, x + rng.randint(4, 24), y + rng.randint(4, 24)])
        sc.append(rng.randint(0, 31) / 32.0)
    cases += nms_case("nms_200_boxes", many, sc, 0.4)
    return cases


# ---- roi_align, roi_pool, ps_roi_align, ps_roi_pool ----

ROIS = [[0, 0.0, 0.0, 7.0, 7.0], [1, 1.5, 2.25, 5.75, 6.0], [0, -2.0, -1.5, 3.5, 9.5], [1, 4.0, 4.0, 4.0, 4.0],
        [0, 6.5, 0.25, 9.0, 3.0], [1, 2.0, 5.0, 1.0, 3.0]]


def roi_expected(c):
    w = work(c["dtype"])
    x = operand(c["seed"], 0, c["inputs"][0]).to(DT[c["dtype"]]).to(w)
    r = torch.tensor(c["rois"], dtype=torch.float64).reshape(-1, 5).to(DT[c["dtype"]]).to(w)
    op, ss, ph, pw = c["op"], c["spatial_scale"], c["pooled_height"], c["pooled_width"]
    index = None
    if op == "roi_align":
        y = torch.ops.torchvision.roi_align(x, r, ss, ph, pw, c["sampling_ratio"], c["aligned"])
    elif op == "roi_pool":
        y, index = torch.ops.torchvision.roi_pool(x, r, ss, ph, pw)
    elif op == "ps_roi_align":
        y, index = torch.ops.torchvision.ps_roi_align(x, r, ss, ph, pw, c["sampling_ratio"])
    else:
        y, index = torch.ops.torchvision.ps_roi_pool(x, r, ss, ph, pw)
    d = {"expect_sizes": list(y.shape), "expected": flat(finish(y, c["dtype"])), **tol(c["dtype"])}
    if index is not None:
        d["expected_index"] = index.reshape(-1).tolist()
        d["index_dtype"] = str(index.dtype).replace("torch.", "")
    return d


def roi_case(name, op, sizes, rois, seed, ss=1.0, ph=2, pw=2, sampling_ratio=None, aligned=None, strides=None):
    spec = {"sizes": sizes}
    if strides:
        spec["strides"] = strides
    base = {"name": name, "op": op, "seed": seed, "inputs": [spec], "rois": rois, "spatial_scale": ss,
            "pooled_height": ph, "pooled_width": pw}
    if sampling_ratio is not None:
        base["sampling_ratio"] = sampling_ratio
    if aligned is not None:
        base["aligned"] = aligned
    return per_device(base, roi_expected)


def roi_cases():
    cases = []
    n, c, h, w = 2, 3, 8, 9
    for aligned in (False, True):
        a = "aligned" if aligned else "unaligned"
        cases += roi_case(f"roi_align_{a}_adaptive", "roi_align", [n, c, h, w], ROIS, 21, 1.0, 3, 2, 0, aligned)
        cases += roi_case(f"roi_align_{a}_ratio2_scale", "roi_align", [n, c, h, w], ROIS, 22, 0.625, 2, 3, 2,
                          aligned)
    # A channels-last view (strides NHWC) and a negative sampling ratio (adaptive too).
    cases += roi_case("roi_align_channels_last", "roi_align", [n, c, h, w], ROIS, 23, 1.0, 2, 2, -1, True,
                      strides=[h * w * c, 1, w * c, c])
    cases += roi_case("roi_align_no_rois", "roi_align", [n, c, h, w], [], 24, 1.0, 2, 2, 2, False)
    cases += roi_case("roi_pool_basic", "roi_pool", [n, c, h, w], ROIS, 25, 1.0, 3, 2)
    cases += roi_case("roi_pool_scale", "roi_pool", [n, c, h, w], ROIS, 26, 0.5, 2, 4)
    cp = 2 * 2 * 3  # ps ops: channels = channels_out * pooled_height * pooled_width
    cases += roi_case("ps_roi_align_adaptive", "ps_roi_align", [n, cp, h, w], ROIS, 27, 1.0, 2, 3, 0)
    cases += roi_case("ps_roi_align_ratio2", "ps_roi_align", [n, cp, h, w], ROIS, 28, 0.75, 3, 2, 2)
    cases += roi_case("ps_roi_pool_basic", "ps_roi_pool", [n, cp, h, w], ROIS, 29, 1.0, 2, 3)
    cases += roi_case("ps_roi_pool_scale", "ps_roi_pool", [n, cp, h, w], ROIS, 30, 0.5, 3, 2)
    return cases


# ---- deform_conv2d ----

def deform_expected(c):
    ins = [operand(c["seed"], t, s) for t, s in enumerate(c["inputs"])]
    dt = c["dtype"]
    if dt in ("float16", "bfloat16"):
        ins = [x.to(DT[dt]).to(torch.float64) for x in ins]
    o = c
    y = torch.ops.torchvision.deform_conv2d(ins[0], ins[1], ins[2], ins[3], ins[4], o["stride"][0], o["stride"][1],
                                            o["padding"][0], o["padding"][1], o["dilation"][0], o["dilation"][1],
                                            o["groups"], o["offset_groups"], o["use_mask"])
    return {"expect_sizes": list(y.shape), "expected": flat(finish(y, dt)), **tol(dt, DEFORM_TOL)}


def deform_case(name, b, cin, h, w, cout, kh, kw, stride, padding, dilation, groups, offset_groups, use_mask, seed):
    oh = (h + 2 * padding[0] - (dilation[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (w + 2 * padding[1] - (dilation[1] * (kw - 1) + 1)) // stride[1] + 1
    inputs = [{"sizes": [b, cin, h, w]}, {"sizes": [cout, cin // groups, kh, kw]},
              {"sizes": [b, 2 * offset_groups * kh * kw, oh, ow], "scale": 2.5},
              {"sizes": [b, offset_groups * kh * kw, oh, ow] if use_mask else [b, 1]},
              {"sizes": [cout]}]
    base = {"name": name, "op": "deform_conv2d", "seed": seed, "inputs": inputs, "stride": stride,
            "padding": padding, "dilation": dilation, "groups": groups, "offset_groups": offset_groups,
            "use_mask": use_mask}
    return per_device(base, deform_expected)


def deform_cases():
    cases = []
    cases += deform_case("deform_3x3_mask", 2, 4, 6, 7, 3, 3, 3, [1, 1], [1, 1], [1, 1], 1, 1, True, 41)
    cases += deform_case("deform_no_mask", 1, 4, 6, 6, 2, 3, 3, [1, 1], [1, 1], [1, 1], 1, 2, False, 42)
    cases += deform_case("deform_groups_stride_dilation", 2, 4, 9, 8, 6, 3, 2, [2, 1], [1, 2], [2, 1], 2, 2, True, 43)
    cases += deform_case("deform_1x1_offset_groups4", 1, 4, 5, 5, 4, 1, 1, [1, 1], [0, 0], [1, 1], 1, 4, True, 44)
    cases += deform_case("deform_empty_batch", 0, 2, 5, 5, 2, 3, 3, [1, 1], [1, 1], [1, 1], 1, 1, True, 45)
    return cases


def main():
    cases = nms_cases() + roi_cases() + deform_cases()
    doc = {
        "description": (
            "torchvision's detection ops (testdata/vision_ops.json, written by tools/ops/make_vision_fixtures.py "
            "with torch " + torch.__version__.split("+")[0] + " and torchvision " +
            torchvision.__version__.split("+")[0] + " on the CPU), through slimcuda::ops (csrc/ops/vision). Each "
            "case once per device and dtype (name _<dtype>_<device>; cuda: requires gpu). nms: dets [[x1,y1,x2,y2]], "
            "scores, iou_threshold -> expected kept indices (int64). roi ops: inputs[0] the feature map {sizes, "
            "strides (optional)}, rois [[batch, x1, y1, x2, y2]] stored; expected the output row-major, "
            "expected_index the argmax / channel_mapping (index_dtype). deform_conv2d: inputs input weight offset "
            "mask bias. Generated operands: element j of operand t is (splitmix64(seed * 1000003 + t * 7919 + j) "
            "% 17 - 8) / 8 * scale (scale default 1). Compare |got - want| <= atol + rtol * |want|; strings "
            "nan/inf/-inf are those numbers (nan equals nan)."),
        "cases": cases,
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
