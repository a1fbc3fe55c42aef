#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""load_time.py PT2 ... [--bundle DIR | --slimcuda-cmd 'CMD {pt2} {dir}'] [--repeat 3] — the
same .pt2 files (zoo models, the big model) loaded by PyTorch's loader and by
slimcuda's, each load in a fresh process, and the files each leaves in TMPDIR and /tmp.

PyTorch: a child process imports torch and torch._inductor, initialises CUDA, then times
torch._inductor.aoti_load_package(PT2) (+ synchronize): the load alone, in process.
slimcuda: the command template, {pt2} and {dir} (the .pt2's folder: a zoo model's) filled in;
with --bundle DIR it is `DIR/zoo_runner {dir} --load pt2 --iterations 0`, whose JSON line
carries "load_s" (slimcuda_model_load_file alone, in process; it then also runs and checks
every case). A command whose last JSON line has no "load_s" is timed as a whole process
(start, CUDA initialisation and all: the table says "wall").
Files left: top-level entries of TMPDIR and /tmp that exist after the process ended and did
not before it started (another program writing there at the same time would be counted too).
Prints a Markdown table, then one JSON line per load.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def temp_dirs():
    return sorted({os.path.realpath(p) for p in (os.environ.get("TMPDIR") or "/tmp", "/tmp")})


def temp_entries():
    """Every top-level entry of TMPDIR and /tmp, as full paths."""
    out = set()
    for d in temp_dirs():
        try:
            out.update(os.path.join(d, n) for n in os.listdir(d))
        except OSError:
            pass
    return out


def child_torch(pt2):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import export_models
    export_models.expose_libtorch_shims()  # a libtorch-free export needs it; not the load's cost
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":  # the CUDA context is not the loader's cost
        torch.zeros(1, device=device)
        torch.cuda.synchronize()
    # Nor is importing Inductor: torch._inductor is a lazy module, and its first use would
    # import it inside the timed call (15-20 s on the GPU machine, 2026-12-01, for any model).
    import torch._inductor.package  # noqa: F401
    load = torch._inductor.aoti_load_package
    t0 = time.perf_counter()
    runner = load(pt2)
    if device == "cuda":
        torch.cuda.synchronize()
    print(json.dumps({"load_s": time.perf_counter() - t0}), flush=True)
    del runner
    return 0


def last_json(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return {}


def measure(cmd, env=None):
    """(seconds, how, files left, rc) of one command in a fresh process."""
    before = temp_entries()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    left = sorted(temp_entries() - before)
    got = last_json(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(f"load_time: {' '.join(cmd)}: rc {p.returncode}\n{p.stderr[-2000:]}\n")
    if "load_s" in got:
        return got["load_s"], "in process", left, p.returncode
    return wall, "wall", left, p.returncode


def main():
    p = argparse.ArgumentParser(description="PyTorch's .pt2 load against slimcuda's, and files left behind")
    p.add_argument("pt2", nargs="*")
    p.add_argument("--bundle", help="tools/gpu/bundle.sh's folder: slimcuda's side is its zoo_runner --load pt2")
    p.add_argument("--slimcuda-cmd", help="slimcuda's load command, {pt2} and {dir} filled in")
    p.add_argument("--repeat", type=int, default=3, help="loads per file and loader (median reported)")
    p.add_argument("--child", nargs=2, metavar=("LOADER", "PT2"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child_torch(a.child[1])
    if not a.pt2:
        p.error("no .pt2 given")
    template = a.slimcuda_cmd or os.environ.get("SLIMCUDA_LOAD_CMD")
    envs = {}
    if not template and a.bundle:
        template = shlex.quote(os.path.join(a.bundle, "zoo_runner")) + " {dir} --load pt2 --iterations 0"
        # The bundle's programs find libslimcuda.so.0 and the CUDA runtime in its lib/.
        env = dict(os.environ)
        lib = os.path.join(os.path.abspath(a.bundle), "lib")
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        envs["slimcuda"] = env
    rows = []
    for pt2 in a.pt2:
        pt2 = os.path.abspath(pt2)
        loaders = {"torch": [sys.executable, os.path.abspath(__file__), "--child", "torch", pt2]}
        if template:
            loaders["slimcuda"] = shlex.split(template.format(pt2=shlex.quote(pt2),
                                                              dir=shlex.quote(os.path.dirname(pt2))))
        row = {"pt2": pt2, "bytes": os.path.getsize(pt2)}
        for name, cmd in loaders.items():
            runs = [measure(cmd, envs.get(name)) for _ in range(max(1, a.repeat))]
            for s, how, left, rc in runs:
                print(json.dumps({"pt2": pt2, "loader": name, "seconds": s, "how": how, "rc": rc,
                                  "files_left": left}), file=sys.stderr, flush=True)
            row[name] = {"median_s": statistics.median(r[0] for r in runs), "how": runs[0][1],
                         "files_left": sorted({f for r in runs for f in r[2]}),
                         "failed": sum(1 for r in runs if r[3] != 0)}
        rows.append(row)
    print(f"temp folders watched: {', '.join(temp_dirs())}; {a.repeat} loads per file and loader, medians\n")
    print("| .pt2 | MB | PyTorch load s | slimcuda load s | slimcuda / PyTorch | files left: PyTorch | files left: "
          "slimcuda |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        t, s = r["torch"], r.get("slimcuda")
        name = os.path.join(os.path.basename(os.path.dirname(r["pt2"])), os.path.basename(r["pt2"]))
        ok = s and not s["failed"] and not t["failed"] and t["median_s"]
        ratio = f"{s['median_s'] / t['median_s']:.3f}" if ok else "n/a"  # a failed load has no time
        fails = lambda x: f" ({x['failed']} failed)" if x["failed"] else ""  # noqa: E731
        print(f"| {name} | {r['bytes'] / 1e6:.1f} | {t['median_s']:.3f}{fails(t)} | "
              + (f"{s['median_s']:.3f} ({s['how']}){fails(s)} | {ratio} | " if s else "not run | n/a | ")
              + f"{len(t['files_left'])} | {len(s['files_left']) if s else 'n/a'} |")
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
