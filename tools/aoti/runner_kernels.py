#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""runner_kernels.py MODEL_DIR [--calls 50] — the GPU kernels of one call of PyTorch's own
AOTInductor runner on a zoo model's .pt2 (the model's first case's inputs), from
torch.profiler: for each kernel name, calls per model call and µs per model call, the
largest first, and the sum. Set beside slimcuda's kernels of the same model, from
`ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-summary per-kernel
zoo_runner MODEL_DIR --load pt2 --stream --iterations 20 --warmup 5` (docs/runs/aoti-zoo.md run
10: ncu times each kernel alone, so compare through a kernel both sides share), to say which
op of ours is slower than ATen's where a model misses "≤ 1.0 × PyTorch's runner". Prints one
JSON line per kernel, then one with the totals. Needs a GPU.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as zoo  # noqa: E402 - the zoo's file formats, one definition


def main():
    p = argparse.ArgumentParser(description="PyTorch runner's GPU kernels per call, from torch.profiler")
    p.add_argument("model_dir")
    p.add_argument("--calls", type=int, default=50)
    a = p.parse_args()
    torch = zoo.torch_mod()
    if not torch.cuda.is_available():
        print("runner_kernels: needs a GPU", file=sys.stderr)
        return 2
    zoo.expose_libtorch_shims()
    meta = json.load(open(os.path.join(a.model_dir, "meta.json")))
    cd = os.path.join(a.model_dir, meta["cases"][0]["dir"])
    specs = json.load(open(os.path.join(cd, "inputs.json")))
    inputs = [zoo.read_raw(os.path.join(cd, s["file"]), s["dtype"], s["sizes"]).cuda() for s in specs]
    runner = torch._inductor.aoti_load_package(os.path.join(a.model_dir, "model.pt2"))
    with torch.no_grad():
        for _ in range(20):
            runner(*inputs)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(a.calls):
                runner(*inputs)
            torch.cuda.synchronize()
    total = 0.0
    for name, per_call, us in zoo.kernel_times(prof, a.calls):
        total += us
        print(json.dumps({"kernel": name[:160], "per_call": per_call, "us_per_call": round(us, 2)}))
    print(json.dumps({"model": meta["name"], "calls": a.calls, "gpu_us_per_call": round(total, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
