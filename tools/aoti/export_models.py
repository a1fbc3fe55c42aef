#!/usr/bin/env python3
"""Export the AOTInductor model zoo for slimcuda (run on the GPU machine: needs PyTorch + CUDA).

For each model: an AOTInductor package for CUDA with libtorch linking disabled, the kernels
embedded in the .so (Triton for the matmuls too: no cuBLAS/cuDNN calls), and the weights in
the .so; fixed seeded inputs; PyTorch-eager reference outputs; and the time per call of
PyTorch's own AOTInductor runner on the same .so and inputs.

  python3 tools/aoti/export_models.py OUT_DIR [--only NAME ...]

OUT_DIR/NAME/ holds model.pt2, meta.json and, per case, inputs.json + input_<i>.bin and
expected_<i>.bin (raw row-major float32). Models are exported in parallel processes.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

INDUCTOR_CONFIGS = {
    "aot_inductor.link_libtorch": False,
    "aot_inductor.embed_kernel_binary": True,
    "aot_inductor.package_constants_in_so": True,
    "max_autotune": True,
    "max_autotune_gemm_backends": "TRITON",
}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 32)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class AttentionBlock(nn.Module):
    """Pre-norm transformer block: layer norm, multi-head self-attention written out with
    matmuls and softmax (no fused SDPA kernel), residual, layer norm, GELU MLP, residual."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax((q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class VisionBlock(nn.Module):
    """Conv-free: per-channel normalization over H and W (reductions), broadcast scale and
    shift, GELU, a channel-mixing linear, global average pooling and a classifier."""

    def __init__(self, channels=16, classes=10):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(1, channels, 1, 1))
        self.shift = nn.Parameter(torch.randn(1, channels, 1, 1))
        self.mix = nn.Linear(channels, channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        mean = x.mean(dim=(2, 3), keepdim=True)
        var = x.var(dim=(2, 3), keepdim=True, unbiased=False)
        y = F.gelu((x - mean) / torch.sqrt(var + 1e-5) * self.scale + self.shift)
        y = self.mix(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2) + x
        return self.head(y.mean(dim=(2, 3)))


class DynamicMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


# name -> (module factory, example input shapes, dynamic batch bounds or None, test batch sizes)
ZOO = {
    "mlp_gelu": (MLP, [(8, 64)], None, [8]),
    "attention_block": (AttentionBlock, [(2, 16, 64)], None, [2]),
    "vision_block": (VisionBlock, [(2, 16, 8, 8)], None, [2]),
    "dynamic_batch_mlp": (DynamicMLP, [(4, 32)], (2, 64), [4, 13, 64]),
}


def write_raw(path, t):
    t.detach().contiguous().cpu().float().numpy().tofile(path)


def export_one(name, out):
    factory, shapes, dynamic, batches = ZOO[name]
    torch.manual_seed(1234)
    model = factory().cuda().eval()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    example = tuple(torch.randn(*s, device="cuda") for s in shapes)
    dynamic_shapes = None
    if dynamic:
        batch = torch.export.Dim("batch", min=dynamic[0], max=dynamic[1])
        dynamic_shapes = ({0: batch},)
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
        pt2 = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(d, "model.pt2"), inductor_configs=INDUCTOR_CONFIGS)
    export_s = time.time() - t0
    cases = []
    for b in batches:
        g = torch.Generator(device="cuda").manual_seed(100 + b)
        inputs = [torch.randn(b, *s[1:], device="cuda", generator=g) for s in shapes]
        with torch.no_grad():
            outputs = model(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        cd = os.path.join(d, f"batch_{b}")
        os.makedirs(cd, exist_ok=True)
        specs = []
        for i, x in enumerate(inputs):
            write_raw(os.path.join(cd, f"input_{i}.bin"), x)
            specs.append({"file": f"input_{i}.bin", "dtype": "float32", "sizes": list(x.shape)})
        with open(os.path.join(cd, "inputs.json"), "w") as f:
            json.dump(specs, f)
        for i, y in enumerate(outputs):
            write_raw(os.path.join(cd, f"expected_{i}.bin"), y)
        cases.append({"dir": f"batch_{b}", "outputs": [list(y.shape) for y in outputs]})
    meta = {
        "name": name,
        "export_seconds": round(export_s, 1),
        "inputs": [{"name": f"arg{i}", "dtype": "float32", "sizes": list(s),
                    "dynamic_dim0": list(dynamic) if dynamic else None} for i, s in enumerate(shapes)],
        "outputs": [{"name": f"out{i}", "dtype": "float32", "sizes": shp,
                     "dynamic_dim0": list(dynamic) if dynamic else None}
                    for i, shp in enumerate(cases[-1]["outputs"])],
        "cases": cases,
    }
    if dynamic:  # declare the bound, not the last case's size
        for spec in meta["inputs"] + meta["outputs"]:
            spec["sizes"][0] = dynamic[1]
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"export: {name}: {export_s:.0f} s", flush=True)


def time_torch_runner(out, names, iterations):
    """PyTorch's own AOTInductor runner on the same .so and inputs: seconds per call + sync."""
    # The .so was built without libtorch linking: it calls aoti_torch_* from the process.
    # Put libtorch's copies in the global scope, as slimcuda's are in its process.
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    for so in ("libtorch_cpu.so", "libtorch_cuda.so"):
        if os.path.exists(os.path.join(lib, so)):
            ctypes.CDLL(os.path.join(lib, so), mode=ctypes.RTLD_GLOBAL)
    results = {}
    for name in names:
        d = os.path.join(out, name)
        meta = json.load(open(os.path.join(d, "meta.json")))
        try:
            runner = torch._inductor.aoti_load_package(os.path.join(d, "model.pt2"))
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            results[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        case = meta["cases"][0]
        cd = os.path.join(d, case["dir"])
        specs = json.load(open(os.path.join(cd, "inputs.json")))
        import numpy as np
        inputs = [torch.from_numpy(np.fromfile(os.path.join(cd, s["file"]), dtype=np.float32).reshape(s["sizes"])).cuda()
                  for s in specs]
        expected = torch.from_numpy(np.fromfile(os.path.join(cd, "expected_0.bin"), dtype=np.float32)).cuda()
        with torch.no_grad():
            got = runner(*inputs)
            got = got[0] if isinstance(got, (tuple, list)) else got
            err = (got.flatten().float() - expected).abs().max().item()
            for _ in range(200):  # the same warm-up as zoo_runner
                runner(*inputs)
            torch.cuda.synchronize()
            times = []
            for _ in range(iterations):
                t0 = time.perf_counter()
                runner(*inputs)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
        times.sort()
        results[name] = {"torch_runner_us_median": times[len(times) // 2] * 1e6,
                         "torch_runner_us_mean": sum(times) / len(times) * 1e6, "max_abs_vs_eager": err}
    with open(os.path.join(out, "torch_runner.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("export: torch runner timings: " + json.dumps(results), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--only", nargs="*", default=list(ZOO))
    p.add_argument("--one", help=argparse.SUPPRESS)  # a worker process
    p.add_argument("--time-runner", type=int, default=0, help="PyTorch runner timing iterations")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.one:
        export_one(a.one, a.out)
        return
    if a.time_runner:
        time_torch_runner(a.out, a.only, a.time_runner)
        return
    procs = [subprocess.Popen([sys.executable, __file__, a.out, "--one", n]) for n in a.only]
    failed = [n for n, pr in zip(a.only, procs) if pr.wait() != 0]
    if failed:
        sys.exit(f"export failed: {failed}")


if __name__ == "__main__":
    main()
