#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""shim_coverage.py — the table of PyTorch's CUDA fallback shims (docs/fallback-shims.md):
every `aoti_torch_cuda_*` function PyTorch's generated c_shim_cuda.h declares, whether
libslimcuda.so exports it, and which zoo models' exports call it.

  python3 tools/aoti/shim_coverage.py --header .../aoti_torch/generated/c_shim_cuda.h
      (--library-symbols FILE | --library libslimcuda.so | --exports tools/exports.txt)
      [--zoo WORK ...] [--zoo-doc docs/runs/aoti-zoo.md] [--note SHIM=TEXT ...] [--source TEXT] > out.md

What a zoo model needs comes from the export's shims.json (`nm -D -u` of its .so, written by
export_models.py into WORK/VARIANT/): CUDA exports name aoti_torch_cuda_* directly; a CPU dry
run's aoti_torch_cpu_X is listed under aoti_torch_cuda_X, marked "(CPU dry run)", because a
CUDA export of the same model may lower the op differently (e.g. attention: the CPU export calls
_scaled_dot_product_flash_attention_for_cpu). --zoo-doc reads the fallbacks of the last measured
run from docs/runs/aoti-zoo.md's per-model table ("ATen fallbacks" column) for runs without their
WORK folder. Shims a zoo export needs outside c_shim_cuda.h (shim.h's core ones, CPU-only
fallbacks) are listed after the table.
"""
import argparse
import json
import os
import re
import subprocess
import sys

DECL = re.compile(r"AOTI_TORCH_EXPORT\s+AOTITorchError\s+(aoti_torch_cuda_\w+)\s*\(([^;]*)\)\s*;", re.S)


def header_shims(path):
    """name -> number of parameters, in the header's order."""
    text = open(path).read()
    return {m.group(1): len([p for p in m.group(2).split(",") if p.strip()]) for m in DECL.finditer(text)}


def library_symbols(a):
    if a.library_symbols:
        return set(open(a.library_symbols).read().split())
    if a.library:
        nm = subprocess.run(["nm", "-D", "--defined-only", a.library], capture_output=True, text=True, check=True)
        return {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    return set(open(a.exports).read().split())


def zoo_needs(dirs):
    """(variant -> set of undefined aoti_torch_* names, variant -> device) from WORK folders."""
    needs, devices = {}, {}
    for work in dirs:
        for name in sorted(os.listdir(work)):
            p = os.path.join(work, name, "shims.json")
            if not os.path.exists(p):
                continue
            shims = json.load(open(p))
            needs[name] = {s for s in shims if s.startswith("aoti_torch")}
            try:
                devices[name] = json.load(open(os.path.join(work, name, "meta.json"))).get("device", "cuda")
            except (OSError, ValueError):
                devices[name] = "cuda"
    return needs, devices


def doc_needs(path):
    """The ATen fallbacks of the first per-model table in docs/runs/aoti-zoo.md (the last run)."""
    needs, cols = {}, None
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols is None:
            if "ATen fallbacks" in cells and cells and cells[0] == "model":
                cols = cells
            continue
        if not line.startswith("|"):
            break
        if set(cells[0]) <= set("-"):
            continue
        fb = cells[cols.index("ATen fallbacks")]
        needs[cells[0]] = {"aoti_torch_cuda_" + w for w in fb.split() if w != "—"}
    return needs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--header", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--library-symbols", help="a file of symbol names (nm -D --defined-only of libslimcuda.so)")
    g.add_argument("--library", help="libslimcuda.so (read with nm -D --defined-only)")
    g.add_argument("--exports", help="tools/exports.txt")
    p.add_argument("--zoo", nargs="*", default=[], help="zoo WORK folders (VARIANT/shims.json)")
    p.add_argument("--zoo-doc", help="docs/runs/aoti-zoo.md: the last measured run's fallbacks")
    p.add_argument("--zoo-doc-label", default="last GPU run in docs/runs/aoti-zoo.md")
    p.add_argument("--note", action="append", default=[], help="SHIM=TEXT, shown in the table")
    p.add_argument("--source", default="", help="where the zoo figures come from (printed)")
    a = p.parse_args()

    decls = header_shims(a.header)
    if not decls:
        sys.exit(f"shim_coverage.py: no aoti_torch_cuda_* declarations in {a.header}")
    have = library_symbols(a)
    notes = dict(n.split("=", 1) for n in a.note)
    needs, devices = zoo_needs(a.zoo)
    doc = doc_needs(a.zoo_doc) if a.zoo_doc else {}

    users = {name: [] for name in decls}  # shim -> ["model", "model (CPU dry run)", ...]
    outside = {}  # needed aoti_torch_* names that are not CUDA fallbacks -> users
    for model, shims in sorted(needs.items()):
        cpu = devices.get(model) == "cpu"
        for s in sorted(shims):
            cuda = s.replace("aoti_torch_cpu_", "aoti_torch_cuda_", 1) if cpu else s
            label = f"{model} (CPU dry run)" if cpu else model
            if cuda in users:
                users[cuda].append(label)
            elif s.startswith("aoti_torch_cuda_") or s.startswith("aoti_torch_cpu_") or s not in have:
                outside.setdefault(s, []).append(label)
    for model, shims in sorted(doc.items()):
        for s in sorted(shims):
            label = f"{model} ({a.zoo_doc_label})"
            (users[s] if s in users else outside.setdefault(s, [])).append(label)

    implemented = [s for s in decls if s in have]
    needed = [s for s in decls if users[s]]
    needed_missing = [s for s in needed if s not in have]
    print("# PyTorch's CUDA fallback shims in slimcuda\n")
    print("Generated by `tools/aoti/shim_coverage.py` (do not edit by hand; `tools/aoti/run_zoo.sh` "
          "regenerates it as `fallback-shims.md` in its report folder). "
          f"Header: PyTorch's generated `c_shim_cuda.h`{' — ' + a.source if a.source else ''}.\n")
    print(f"- {len(decls)} CUDA fallback shims in the header; **{len(implemented)} implemented** by "
          f"libslimcuda.so; {len(needed)} needed by at least one zoo export, "
          f"**{len(needed_missing)} of them missing**" + (": " + ", ".join(f"`{s}`" for s in needed_missing)
                                                         if needed_missing else "") + ".")
    extra = sorted(s for s in have if s.startswith("aoti_torch_cuda_") and s not in decls)
    if extra:
        print(f"- libslimcuda.so also exports {len(extra)} `aoti_torch_cuda_*` names the header does not "
              f"declare: {', '.join(f'`{s}`' for s in extra)}.")
    print("- \"CPU dry run\": the model's CPU export (`--device cpu`) calls `aoti_torch_cpu_X`; the CUDA export "
          "may call `aoti_torch_cuda_X` or lower the op another way. Only GPU runs are a measurement.\n")
    print("| shim | params | implemented | zoo exports that call it | note |")
    print("|---|---|---|---|---|")
    for s, nparams in decls.items():
        print(f"| `{s.replace('aoti_torch_cuda_', '')}` | {nparams} | {'yes' if s in have else 'no'} | "
              f"{', '.join(users[s]) or ''} | {notes.get(s, notes.get(s.replace('aoti_torch_cuda_', ''), ''))} |")
    if outside:
        print("\nNeeded by zoo exports but not in `c_shim_cuda.h` (CPU-only fallbacks, or core shims "
              "libslimcuda.so lacks):\n")
        print("| symbol | in libslimcuda.so | zoo exports |")
        print("|---|---|---|")
        for s, who in sorted(outside.items()):
            print(f"| `{s}` | {'yes' if s in have else 'no'} | {', '.join(who)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
