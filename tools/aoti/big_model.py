#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""big_model.py OUT_DIR [--gib 5] [--width 16384] [--dtype float32|bfloat16] — a model of more
than 4 GiB (run on the GPU machine): a synthetic stack of square Linear layers (no bias, ReLU
between them) with more than 4 GiB of weights, exported with the weights in the archive
(aot_inductor.package_constants_in_so=False + package_constants_on_disk_format="binary_blob",
as export_models.py's --weights archive: 2.11 writes no weights at all without the blob format).

OUT_DIR/big/ gets what export_models.py writes for a zoo model, so zoo_runner and compare.py
read it unchanged: model.pt2, meta.json (name "big", the dtype's tolerance, one case),
batch_4/inputs.json + input_0.bin + input_0.npy, expected.json + expected_0.bin +
expected_0.f32.bin (the eager output). Then it loads the .pt2 with PyTorch's own loader
(torch._inductor.aoti_load_package) in this process, runs it once, checks it against eager,
and prints one JSON line: weights GiB, export seconds, load seconds and GB/s, run seconds,
device memory used by the loaded model (cudaMemGetInfo before and after), the error against
eager, and files the load left in TMPDIR and /tmp. --skip-export loads an existing OUT_DIR/big.

  slimcuda side (the .pt2 loader's hook): zoo_runner OUT_DIR/big --load pt2 --iterations 1
  load times side by side: python3 tools/aoti/load_time.py OUT_DIR/big/model.pt2 ...
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as zoo  # noqa: E402 - the zoo's file formats and tolerances, one definition
from load_time import temp_entries  # noqa: E402

BATCH = 4


def build(width, layers, dtype, device):
    torch = zoo.torch_mod()
    nn = torch.nn

    class Stack(nn.Module):
        """layers × Linear(width, width, bias=False), ReLU between: weights = layers·width²."""

        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(width, width, bias=False) for _ in range(layers))

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i + 1 < len(self.layers):
                    x = torch.relu(x)
            return x

    with torch.device(device):  # initialise on the GPU: seconds, where the CPU takes minutes
        torch.manual_seed(1234)
        model = Stack()
        for layer in model.layers:  # Kaiming: activations keep their scale through the ReLUs
            nn.init.normal_(layer.weight, std=(2.0 / width) ** 0.5)
    return model.to(dtype).eval()


def export(out, a):
    torch = zoo.torch_mod()
    dtype = zoo.dtype_of(a.dtype)
    elem = torch.tensor([], dtype=dtype).element_size()
    layers = max(1, -(-int(a.gib * 2**30) // (a.width * a.width * elem)))  # ceil: at least a.gib
    d = os.path.join(out, "big")
    os.makedirs(os.path.join(d, f"batch_{BATCH}"), exist_ok=True)
    model = build(a.width, layers, dtype, a.device)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    x = torch.randn(BATCH, a.width, device=a.device, generator=torch.Generator(a.device).manual_seed(7)).to(dtype)
    with torch.no_grad():
        y = model(x)
    cd = os.path.join(d, f"batch_{BATCH}")
    zoo.write_raw(os.path.join(cd, "input_0.bin"), x)
    zoo.write_npy(os.path.join(cd, "input_0.npy"), x)
    with open(os.path.join(cd, "inputs.json"), "w") as f:
        json.dump([{"file": "input_0.bin", "dtype": a.dtype, "sizes": list(x.shape)}], f)
    zoo.write_raw(os.path.join(cd, "expected_0.bin"), y)
    zoo.write_raw(os.path.join(cd, "expected_0.f32.bin"), y.float())
    expected = [{"file": "expected_0.bin", "float32_file": "expected_0.f32.bin", "dtype": a.dtype,
                 "sizes": list(y.shape), "max_abs": float(y.float().abs().max())}]
    with open(os.path.join(cd, "expected.json"), "w") as f:
        json.dump(expected, f)
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(d, "model.pt2"),
            inductor_configs=dict(zoo.RECIPES["default"], **zoo.WEIGHTS["archive"]))
    export_s = time.time() - t0
    meta = {
        "name": "big", "model": "big", "factory": f"{layers} x Linear({a.width}, {a.width}, bias=False)",
        "dtype": a.dtype, "recipe": "default", "weights": "archive", "device": a.device,
        "torch": torch.__version__, "export_seconds": round(export_s, 1), "weights_bytes": weights,
        "has_convolution": False, "tolerance": zoo.tolerance_for(a.dtype, False, a.device),
        "inputs": [{"name": "arg0", "dtype": a.dtype, "sizes": list(x.shape), "dynamic_dim0": None}],
        "outputs": [{"name": "out0", "dtype": a.dtype, "sizes": list(y.shape), "dynamic_dim0": None}],
        "cases": [{"dir": f"batch_{BATCH}", "outputs": expected}],
    }
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    del model, ep
    if a.device == "cuda":  # PyTorch's loader measured next, without the export's blocks held
        torch.cuda.empty_cache()
    return d


def load_and_run(d, device):
    """PyTorch's loader on d/model.pt2: load seconds, one run checked against eager."""
    torch = zoo.torch_mod()
    meta = json.load(open(os.path.join(d, "meta.json")))
    case = os.path.join(d, meta["cases"][0]["dir"])
    spec = json.load(open(os.path.join(case, "inputs.json")))[0]
    x = zoo.read_raw(os.path.join(case, spec["file"]), spec["dtype"], spec["sizes"]).to(device)
    out = meta["cases"][0]["outputs"][0]
    want = zoo.read_raw(os.path.join(case, out["float32_file"]), "float32", out["sizes"])
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    zoo.expose_libtorch_shims()  # the export is libtorch-free: PyTorch's loader needs this first
    free_before = torch.cuda.mem_get_info()[0] if device == "cuda" else 0
    before = temp_entries()
    t0 = time.perf_counter()
    runner = torch._inductor.aoti_load_package(os.path.join(d, "model.pt2"))
    sync()
    load_s = time.perf_counter() - t0
    left = sorted(temp_entries() - before)
    used = (free_before - torch.cuda.mem_get_info()[0]) if device == "cuda" else None
    t0 = time.perf_counter()
    with torch.no_grad():
        got = runner(x)
    sync()
    run_s = time.perf_counter() - t0
    got = got[0] if isinstance(got, (tuple, list)) else got
    max_abs, max_rel, ok = zoo.compare(got.float().cpu(), want, meta["tolerance"])
    gb = meta.get("weights_bytes", 0) / 1e9
    return {"model": "big", "weights_gib": round(meta.get("weights_bytes", 0) / 2**30, 3),
            "layers": meta["factory"], "dtype": meta["dtype"], "export_s": meta.get("export_seconds"),
            "pt2_bytes": os.path.getsize(os.path.join(d, "model.pt2")),
            "torch_load_s": round(load_s, 3), "torch_load_gb_per_s": round(gb / load_s, 3) if load_s else None,
            "torch_run_s": round(run_s, 4), "torch_device_bytes_after_load": used,
            "max_abs_vs_eager": max_abs, "max_rel_vs_eager": max_rel, "pass": ok,
            "tolerance": meta["tolerance"], "temp_files_left_by_load": left}


def main():
    p = argparse.ArgumentParser(description="the > 4 GiB model: export, PyTorch's load and one run")
    p.add_argument("out")
    p.add_argument("--gib", type=float, default=5.0, help="weights at least this many GiB")
    p.add_argument("--width", type=int, default=16384, help="each layer is width x width")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: a small dry run")
    p.add_argument("--skip-export", action="store_true", help="load OUT_DIR/big as it is")
    a = p.parse_args()
    d = os.path.join(a.out, "big") if a.skip_export else export(a.out, a)
    print(json.dumps(load_and_run(d, a.device)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
