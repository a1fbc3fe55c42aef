#!/usr/bin/env python3
"""compare.py CASE_DIR OUT_DIR — outputs saved by `slimcuda run -save OUT_DIR` (or
`zoo_runner --save`) against the eager outputs of CASE_DIR, in float32: OUT_DIR/outputs.json
names each output's file and dtype (float32, float16, bfloat16, int64, ...: raw row-major
bytes of that dtype), CASE_DIR/expected.json the eager outputs (their float32 copies are what
is compared). Tolerance: the model's, from CASE_DIR/../meta.json (export_models.py's
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


def main():
    case, out = sys.argv[1], sys.argv[2]
    meta = json.load(open(os.path.join(case, "..", "meta.json")))
    tol = meta.get("tolerance", {"name": "float32", "atol": 1e-4, "rtol": 1e-3})
    got_specs = json.load(open(os.path.join(out, "outputs.json")))
    want_specs = json.load(open(os.path.join(case, "expected.json")))
    ok, max_abs, max_rel = len(got_specs) == len(want_specs), 0.0, 0.0
    for g, w in zip(got_specs, want_specs):
        got = read_f32(os.path.join(out, g["file"]), g["dtype"])
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
