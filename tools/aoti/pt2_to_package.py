#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Convert an AOTInductor package (.pt2) into a slimcuda model package (.slimcuda).

  python3 tools/aoti/pt2_to_package.py MODEL_DIR PACK_TOOL

MODEL_DIR holds model.pt2 and meta.json (tools/aoti/export_models.py). The .pt2 is a zip;
its compiled model is data/aotinductor/model/<hash>.wrapper.so (or <hash>.so). This writes
MODEL_DIR/manifest.json — one CUDA library, method "forward", the inputs' and outputs'
dtypes as meta.json states them (float32, float16, bfloat16, int64, ...), sizes, dynamism (a dynamic batch dimension becomes dynamic-bounded, the other
dimensions fixed through min_sizes) and device — and runs PACK_TOOL (//csrc/package:pack)
to write MODEL_DIR/model.slimcuda. Prints the shims the .so needs (nm -D -u; also written to
MODEL_DIR/shims.json, as the export does).
"""
import json
import os
import subprocess
import sys
import zipfile


def spec(t):
    s = {"name": t["name"], "dtype": t["dtype"], "sizes": t["sizes"], "device": "cuda", "device_index": -1}
    if t.get("dynamic_dim0"):
        lo, hi = t["dynamic_dim0"]
        s["dynamism"] = "dynamic_bounded"
        s["sizes"] = [hi] + t["sizes"][1:]
        s["min_sizes"] = [lo] + t["sizes"][1:]
    return s


DTYPES = {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16"}


def main():
    model_dir, pack = sys.argv[1], sys.argv[2]
    meta = json.load(open(os.path.join(model_dir, "meta.json")))
    for t in meta["inputs"] + meta["outputs"]:
        if t["dtype"] not in DTYPES:
            sys.exit(f"{model_dir}: {t['name']}: dtype {t['dtype']} has no slimcuda package name")
    with zipfile.ZipFile(os.path.join(model_dir, "model.pt2")) as z:
        sos = [n for n in z.namelist() if n.endswith(".so") and "/aotinductor/" in n]
        if len(sos) != 1:
            sys.exit(f"{model_dir}: want one compiled .so in the .pt2, found {sos}")
        with open(os.path.join(model_dir, "model.so"), "wb") as f:
            f.write(z.read(sos[0]))
    undefined = subprocess.run(["nm", "-D", "-u", os.path.join(model_dir, "model.so")], capture_output=True,
                               text=True).stdout.split()
    shims = sorted({s for s in undefined if s.startswith("aoti_torch")})
    manifest = {"libraries": [{"device": "cuda", "so": "model.so", "methods": [{
        "name": "forward", "inputs": [spec(t) for t in meta["inputs"]],
        "outputs": [spec(t) for t in meta["outputs"]]}]}]}
    with open(os.path.join(model_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(model_dir, "shims.json"), "w") as f:
        json.dump(shims, f)
    subprocess.run([pack, os.path.join(model_dir, "manifest.json"), os.path.join(model_dir, "model.slimcuda")],
                   check=True)
    print(f"pack: {meta['name']}: {os.path.getsize(os.path.join(model_dir, 'model.slimcuda'))} bytes, "
          f"{len(shims)} shims: {' '.join(shims)}")


if __name__ == "__main__":
    main()
