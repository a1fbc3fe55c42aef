#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare.py CASE_DIR OUT_DIR — outputs saved by `slimcuda run -save OUT_DIR` or
`zoo_runner --save` against the eager outputs of CASE_DIR, in float32. The CLI writes
OUT_DIR/output_<i>.npy (NumPy, the output's dtype; bfloat16 as '<u2' bit patterns); zoo_runner
writes OUT_DIR/outputs.json naming each output's raw file and dtype (float32, float16,
bfloat16, int64, ...: raw row-major bytes of that dtype). CASE_DIR/expected.json lists the
eager outputs (their float32 copies are what is compared). Tolerance: the model's, from CASE_DIR/../meta.json (export_models.py's
TOLERANCES): |got - want| <= atol + rtol |want|. Prints one JSON line; exit status 0 on a match."""
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
