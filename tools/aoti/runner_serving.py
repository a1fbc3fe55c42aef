#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""runner_serving.py MODEL_DIR [SECONDS_PER_POINT] [--runners 1,2,4,8] [--callers 1,2,4,8,16,32] —
PyTorch's own AOTInductor runner serving one .pt2 from many Python threads, to
set beside bench/serving_benchmark's output on the same model (its package:
MODEL_DIR/model.slimcuda from the zoo run).

MODEL_DIR is a zoo model's folder (tools/aoti/export_models.py): model.pt2 and the first
case's inputs. For each runner count N it loads the .pt2 with
torch._inductor.package.load_package(path, num_runners=N) (PyTorch 2.11: aoti_load_package
itself has no num_runners argument; load_package(path, model_name, run_single_threaded,
num_runners, device_index) does: the container's model instances) and drives it from 1..32
threads, each with its own inputs on its own CUDA stream (PyTorch's pool streams are
non-blocking), a call = runner(*inputs) under torch.cuda.stream + that stream's synchronize.
Prints runs/s over all callers and p50/p99 call latency per (runners, callers) in
serving_benchmark's columns ("instances" = num_runners); every caller's last outputs are
compared bit for bit with a single-threaded reference run ("no run": callers that finished no
run within the window, starved of the GIL; not counted as mismatches). Python threads share the GIL:
whatever of the call holds it serialises the callers (that is part of what this measures).
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as zoo  # noqa: E402 - the zoo's file formats, one definition


def load_inputs(model_dir, device):
    meta = json.load(open(os.path.join(model_dir, "meta.json")))
    cd = os.path.join(model_dir, meta["cases"][0]["dir"])
    specs = json.load(open(os.path.join(cd, "inputs.json")))
    return [zoo.read_raw(os.path.join(cd, s["file"]), s["dtype"], s["sizes"]).to(device) for s in specs]


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def drive(runner, inputs, callers, seconds, reference):
    """(runs/s, p50 µs, p99 µs, callers whose last outputs differ from the reference, callers that
    finished no run in the window: starved of the GIL, not wrong)."""
    torch = zoo.torch_mod()
    go, stop = threading.Event(), threading.Event()
    ready = threading.Barrier(callers + 1)
    lat = [[] for _ in range(callers)]
    last = [None] * callers
    errors = []

    def caller(i):
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            mine = [x.clone() for x in inputs]
        stream.synchronize()
        ready.wait()
        go.wait()
        try:
            with torch.no_grad():
                while not stop.is_set():
                    t0 = time.perf_counter()
                    with torch.cuda.stream(stream):
                        out = runner(*mine)
                    stream.synchronize()
                    lat[i].append(time.perf_counter() - t0)
                    last[i] = out
        except Exception as e:  # noqa: BLE001 - reported, and counted as a mismatch
            errors.append(f"caller {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    ready.wait()
    t0 = time.perf_counter()
    go.set()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    for e in errors:
        print(f"runner_serving: {e}", file=sys.stderr)
    all_lat = sorted(x for per in lat for x in per)
    starved = sum(1 for out in last if out is None)
    mismatched = len(errors) + sum(1 for out in last if out is not None and
                                   not all(torch.equal(a, b) for a, b in zip(as_list(out), reference)))
    pick = lambda q: all_lat[min(len(all_lat) - 1, int(q * len(all_lat)))] * 1e6 if all_lat else 0.0  # noqa: E731
    return len(all_lat) / elapsed, pick(0.50), pick(0.99), mismatched, starved


def main():
    p = argparse.ArgumentParser(description="PyTorch's AOTI runner with num_runners=N, 1..32 threads on streams")
    p.add_argument("model_dir")
    p.add_argument("seconds", nargs="?", type=float, default=0.5, help="seconds per point (serving_benchmark's)")
    p.add_argument("--runners", default="1,2,4,8")
    p.add_argument("--callers", default="1,2,4,8,16,32")
    a = p.parse_args()
    torch = zoo.torch_mod()
    if not torch.cuda.is_available():
        print("runner_serving: needs a GPU", file=sys.stderr)
        return 2
    from torch._inductor.package import load_package
    zoo.expose_libtorch_shims()  # a libtorch-free export calls aoti_torch_* from the process
    pt2 = os.path.join(a.model_dir, "model.pt2")
    inputs = load_inputs(a.model_dir, "cuda")
    with torch.no_grad():
        reference = as_list(load_package(pt2, num_runners=1)(*inputs))
    torch.cuda.synchronize()
    print(f"runner_serving {pt2}, {a.seconds:.2f} s per point, torch {torch.__version__}; x1 = runs/s over the "
          "same runner count's one caller")
    print(f"{'instances':>9} {'callers':>7} {'runs/s':>12} {'x1':>6} {'p50 us':>10} {'p99 us':>10} {'mismatch':>9} "
          f"{'no run':>7}")
    failures = 0
    for n in (int(x) for x in a.runners.split(",")):
        runner = load_package(pt2, num_runners=n)
        with torch.no_grad():  # warm-up: first-call costs stay out of the first point
            for _ in range(20):
                runner(*inputs)
        torch.cuda.synchronize()
        one = 0.0
        for callers in (int(x) for x in a.callers.split(",")):
            rate, p50, p99, bad, starved = drive(runner, inputs, callers, a.seconds, reference)
            one = rate if callers == 1 else one
            print(f"{n:>9} {callers:>7} {rate:>12.0f} {rate / one if one else 0:>6.2f} {p50:>10.1f} {p99:>10.1f} "
                  f"{bad:>9} {starved:>7}", flush=True)
            failures += bad
        del runner
    if failures:
        print(f"runner_serving: {failures} callers' outputs differ from the reference", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
