#!/usr/bin/env python3
"""compare.py CASE_DIR OUT_DIR — `slimcuda run -save OUT_DIR` outputs against the eager
outputs in CASE_DIR (expected_<i>.bin), float32, |got - want| <= 1e-4 + 1e-3 |want|.
Prints one JSON line; exit status 0 on a match."""
import json
import os
import sys

import numpy as np

case, out = sys.argv[1], sys.argv[2]
specs = json.load(open(os.path.join(out, "outputs.json")))
ok, max_abs = True, 0.0
for i, s in enumerate(specs):
    got = np.fromfile(os.path.join(out, s["file"]), dtype=np.float32)
    want = np.fromfile(os.path.join(case, f"expected_{i}.bin"), dtype=np.float32)
    if got.shape != want.shape:
        ok = False
        continue
    d = np.abs(got.astype(np.float64) - want)
    max_abs = max(max_abs, float(d.max()) if d.size else 0.0)
    ok = ok and bool(np.all(d <= 1e-4 + 1e-3 * np.abs(want)))
print(json.dumps({"case": case, "max_abs": max_abs, "pass": ok}))
sys.exit(0 if ok else 1)
