#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare.py CASE_DIR OUT_DIR — outputs saved by `slimcuda run -save OUT_DIR` or
`zoo_runner --save` against the eager outputs of CASE_DIR, in float32. The CLI writes
OUT_DIR/output_<i>.npy (NumPy, the output's dtype; bfloat16 as '<u2' bit patterns); zoo_runner
writes OUT_DIR/outputs.json naming each output's raw file and dtype (float32, float16,
bfloat16, int64, ...: raw row-major bytes of that dtype). CASE_DIR/expected.json lists the
eager outputs (their float32 copies are what is compared). Tolerance: the model's, from CASE_DIR/../meta.json (export_models.py's
TOLERANCES): |got - want| <= atol + rtol |want|. A detector's outputs (meta.json "detections":
export_models.py's det_* models) are compared as detections instead (compare_detections).
Prints one JSON line; exit status 0 on a match."""
import json
import os
import sys

import numpy as np


def read_f32(path, dtype):
    """Raw little-endian elements of dtype -> float64 array (bfloat16 decoded by hand)."""
    raw = np.fromfile(path, dtype=np.uint8)
    if dtype == "bfloat16":
        return (raw.view("<u2").astype(np.uint32) << 16).view("<f4").astype(np.float64)
    np_dtype = {"float16": "<f2", "float32": "<f4", "float64": "<f8", "int64": "<i8", "int32": "<i4",
                "int16": "<i2", "int8": "i1", "uint8": "u1", "bool": "?"}[dtype]
    return raw.view(np_dtype).astype(np.float64)


def read_npy_outputs(out, n):
    """OUT_DIR/output_<i>.npy for i < n -> (spec, float64 array) pairs, as read_f32 gives."""
    got = []
    for i in range(n):
        a = np.load(os.path.join(out, f"output_{i}.npy"), allow_pickle=False)
        dtype = "bfloat16" if a.dtype == np.uint16 else str(a.dtype)
        flat = a.reshape(-1)
        if dtype == "bfloat16":
            flat = (flat.astype(np.uint32) << 16).view("<f4")
        got.append(({"file": f"output_{i}.npy", "dtype": dtype, "sizes": list(a.shape)}, flat.astype(np.float64)))
    return got


def compare_detections(got, want, det, tol):
    """A detector's outputs, per image boxes [n, 4], scores [n], labels [n] (and masks
    [n, 1, H, W]) in det["fields"] order, n decided by the data: got and want are lists of
    (sizes, flat float64 array) in output order. The detections are matched, not compared by
    position: each eager detection, highest score first, takes the unmatched one of the same
    label whose box and score are within the tolerance (|d| <= atol + rtol |eager|, the model's
    tolerance, coordinates in pixels), the nearest box. A detection left unmatched on either
    side passes only where rounding decides whether it exists: its score within the score
    tolerance of the model's threshold (det["score_thresh"]), or of the lowest score kept
    when its side holds the per-image cap (det["detections_per_img"]). A matched mask passes
    when at most 1% of its pixels are outside the tolerance (a box edge that rounds to the
    other integer pixel moves the pasted mask there). -> (report dict, pass)."""
    fields = det["fields"]
    k = len(fields)
    atol, rtol = tol["atol"], tol["rtol"]
    thresh, cap = det.get("score_thresh"), det.get("detections_per_img")
    report = {"matched": 0, "unmatched": 0, "borderline": 0, "max_abs_box": 0.0, "max_abs_score": 0.0,
              "max_mask_bad_fraction": 0.0, "counts": [], "pass": True}

    def side(outs, img):
        d = {}
        for i, f in enumerate(fields):
            sizes, a = outs[img * k + i]
            n = sizes[0] if sizes else 0
            d[f] = a.reshape(n, int(np.prod(sizes[1:]))) if f in ("boxes", "masks") else a.reshape(n)
        return d

    def borderline(scores, s):
        if thresh is not None and abs(s - thresh) <= atol + rtol * thresh:
            return True
        return cap is not None and len(scores) >= cap and s <= scores.min() + atol + rtol * abs(scores.min())

    for img in range(det["images"]):
        g, w = side(got, img), side(want, img)
        ng, nw = len(g["scores"]), len(w["scores"])
        report["counts"].append([ng, nw])
        used = np.zeros(ng, bool)
        unmatched_w = []
        for i in np.argsort(-w["scores"], kind="stable"):
            ok = (~used) & (g["labels"] == w["labels"][i])
            db = np.abs(g["boxes"] - w["boxes"][i]).max(axis=1) if ng else np.zeros(0)
            ok &= np.all(np.abs(g["boxes"] - w["boxes"][i]) <= atol + rtol * np.abs(w["boxes"][i]), axis=1)
            ok &= np.abs(g["scores"] - w["scores"][i]) <= atol + rtol * abs(w["scores"][i])
            if not ok.any():
                unmatched_w.append(i)
                continue
            j = int(np.argmin(np.where(ok, db, np.inf)))
            used[j] = True
            report["matched"] += 1
            report["max_abs_box"] = max(report["max_abs_box"], float(db[j]))
            report["max_abs_score"] = max(report["max_abs_score"], float(abs(g["scores"][j] - w["scores"][i])))
            if "masks" in fields:
                dm = np.abs(g["masks"][j] - w["masks"][i])
                bad = float(np.mean(~(dm <= atol + rtol * np.abs(w["masks"][i]))))
                report["max_mask_bad_fraction"] = max(report["max_mask_bad_fraction"], bad)
                if bad > 0.01:
                    report["pass"] = False
        for scores, idx in ((w["scores"], unmatched_w), (g["scores"], np.nonzero(~used)[0])):
            for i in idx:
                if borderline(scores, float(scores[i])):
                    report["borderline"] += 1
                else:
                    report["unmatched"] += 1
                    report["pass"] = False
    return report, report["pass"]


def main():
    case, out = sys.argv[1], sys.argv[2]
    meta = json.load(open(os.path.join(case, "..", "meta.json")))
    tol = meta.get("tolerance", {"name": "float32", "atol": 1e-4, "rtol": 1e-3})
    want_specs = json.load(open(os.path.join(case, "expected.json")))
    if os.path.exists(os.path.join(out, "outputs.json")):  # zoo_runner: raw files
        got_all = [(g, read_f32(os.path.join(out, g["file"]), g["dtype"]))
                   for g in json.load(open(os.path.join(out, "outputs.json")))]
    else:  # slimcuda run -save: .npy files
        n = len([f for f in os.listdir(out) if f.startswith("output_") and f.endswith(".npy")])
        got_all = read_npy_outputs(out, n)
    ok, max_abs, max_rel = len(got_all) == len(want_specs), 0.0, 0.0
    if meta.get("detections") and ok:  # matched as detections, not compared by position
        want_all = [(w["sizes"], read_f32(os.path.join(case, w["float32_file"]), "float32")) for w in want_specs]
        report, ok = compare_detections([(g["sizes"], a) for g, a in got_all], want_all, meta["detections"], tol)
        print(json.dumps(dict(report, case=case, tolerance=tol)))
        return 0 if ok else 1
    for (g, got), w in zip(got_all, want_specs):
        want = read_f32(os.path.join(case, w["float32_file"]), "float32")
        if got.shape != want.shape or list(g["sizes"]) != list(w["sizes"]):
            print(f"compare: {case}: {g['file']}: sizes {g['sizes']}, eager {w['sizes']}", file=sys.stderr)
            ok = False
            continue
        if got.size == 0:
            continue
        d = np.abs(got - want)
        max_abs = max(max_abs, float(np.nanmax(d)) if not np.isnan(d).all() else float("inf"))
        max_rel = max(max_rel, float(np.nanmax(d / np.maximum(np.abs(want), 1e-6))) if not np.isnan(d).all() else float("inf"))
        ok = ok and bool(np.all(d <= tol["atol"] + tol["rtol"] * np.abs(want)))  # NaN fails
    print(json.dumps({"case": case, "tolerance": tol, "max_abs": max_abs, "max_rel": max_rel, "pass": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
