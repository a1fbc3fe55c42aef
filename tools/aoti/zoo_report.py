#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""zoo_report.py WORK [LIBRARY_SYMBOLS] — the zoo run's tables as Markdown on stdout (run_zoo.sh
calls it after every phase, so a run cut off still leaves what it measured).

Reads WORK/status.jsonl (one {"variant", "status"} per export: exported, failed, skipped),
WORK/failures.jsonl (one {"variant", "failed": what} per failed export, conversion, check or timing),
WORK/results.jsonl (zoo_runner's lines: checks without timing, and timing runs),
WORK/torch_runner.json (export_models.py --time-runner), and each WORK/VARIANT/meta.json and
shims.json; LIBRARY_SYMBOLS is `nm -D --defined-only` of libslimcuda.so, one name a line (the
shims it exports).
"""
import json
import os
import sys


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except ValueError:
                        pass  # a line cut off mid-write
    except OSError:
        pass
    return rows


def reference_note(meta):
    """Where the expected outputs are not plain eager (export_models.reference_of), say so."""
    ref = meta.get("reference", "eager")
    return "" if ref == "eager" else f" (reference: {ref})"


def fmt(v):
    return "n/a" if v is None else f"{v:.2e}"


def worst(cases, key):
    vals = [c.get(key) for c in cases if c.get(key) is not None]
    return max(vals) if vals else None


def stream_cell(stream, graphs, r):
    """The caller-stream column; a CUDA-graph run says how many runs its graphs served."""
    cell = "yes" if stream else "no"
    if graphs:
        g = r.get("graphs", {})
        cell += f", graphs ({g.get('replays', 0)} replays, {g.get('fallbacks', 0)} fallbacks)"
    return cell


def main():
    work = sys.argv[1]
    have = set()
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        have = set(open(sys.argv[2]).read().split())
    status = {r["variant"]: r["status"] for r in load_jsonl(os.path.join(work, "status.jsonl"))}
    failures = {}
    for r in load_jsonl(os.path.join(work, "failures.jsonl")):
        failures.setdefault(r["variant"], []).append(r["failed"])
    torch_t = load_json(os.path.join(work, "torch_runner.json"), {})
    # The timing run of a (variant, stream) replaces its check run: both check every case.
    runs = {}
    for r in load_jsonl(os.path.join(work, "results.jsonl")):
        key = (r.get("model"), bool(r.get("stream")), r.get("load", "package"), bool(r.get("graphs_on")))
        if key not in runs or r.get("slimcuda_us_median"):
            runs[key] = r
    metas = {}
    for name in sorted(os.listdir(work)):
        meta = load_json(os.path.join(work, name, "meta.json"), None)
        if meta is not None:
            metas[name] = meta

    print("| model | recipe | weights | dtype | load | caller stream | cases | max abs err | max rel err | "
          "tolerance (atol, rtol) | slimcuda µs/call | PyTorch runner µs/call | ratio | runner max abs err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (model, stream, load, graphs), r in sorted(runs.items(), key=lambda kv: (kv[0][0] or "", kv[0][1], kv[0][3])):
        meta = metas.get(model, {})
        t = torch_t.get(model, {})
        tu, su = t.get("torch_runner_us_median"), r.get("slimcuda_us_median") or 0
        ratio = f"{su / tu:.3f}" if tu and su else ("not timed" if not su else t.get("error", "n/a")[:60])
        tol = r.get("tolerance", {})
        cases = r.get("cases", [])
        verdict = "" if r.get("pass") else " **(fail)**"
        runner = fmt(t.get("max_abs_vs_eager")) + ("" if t.get("pass", True) else " (fail)")
        print(f"| {model}{verdict} | {meta.get('recipe', '?')} | {meta.get('weights', 'so')} | "
              f"{r.get('dtype', '?')} | {load} | {stream_cell(stream, graphs, r)} | {len(cases)} | "
              f"{fmt(worst(cases, 'max_abs'))} | {fmt(worst(cases, 'max_rel'))} | "
              f"{tol.get('name', '?')}: {tol.get('atol', 0):g}, {tol.get('rtol', 0):g}{reference_note(meta)} | {su:.1f} | "
              f"{'n/a' if tu is None else f'{tu:.1f}'} | {ratio} | {runner} |")
    if failures:
        print()
        print("Failed (the log above each says why):\n")
        print("| model | failed |")
        print("|---|---|")
        for name, what in sorted(failures.items()):
            print(f"| {name} | {'; '.join(what)} |")
    print()
    print("| model | status | recipe | weights | attention | export s | PyTorch runner vs eager | "
          "undefined aoti_torch_* shims | ATen fallbacks | missing from libslimcuda.so |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in sorted(set(metas) | set(status)):
        meta = metas.get(name, {})
        shims = load_json(os.path.join(work, name, "shims.json"), [])
        # CUDA fallbacks by their op name; a CPU dry run's as cpu:NAME
        fb = [s.replace("aoti_torch_cuda_", "").replace("aoti_torch_cpu_", "cpu:") for s in shims
              if s.startswith(("aoti_torch_cuda_", "aoti_torch_cpu_"))]
        missing = [s for s in shims if have and s not in have]
        t = torch_t.get(name, {})
        runner = (t.get("error", "")[:60] if "error" in t else
                  f"{fmt(t.get('max_abs_vs_eager'))} {'ok' if t.get('pass') else 'FAIL'}" if t else "")
        print(f"| {name} | {status.get(name, 'exported' if meta else '?')} | {meta.get('recipe', '')} | "
              f"{meta.get('weights', '')} | {meta.get('attention') or ''} | {meta.get('export_seconds', '')} | "
              f"{runner} | "
              f"{len(shims)} | {' '.join(fb) or '—'} | {' '.join(missing) or ('—' if have else 'n/a')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
