#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Export a small model with its weights outside the library and unpack what slimcuda needs.

  python3 tools/aoti/export_weights_example.py DIR [cpu|cuda] [mixed]

Exports Linear(16, 32) -> relu -> Linear(32, 8, no bias) with AOTInductor
(package_constants_in_so=False, package_constants_on_disk_format="binary_blob",
link_libtorch=False) to DIR/model.pt2 and writes beside it x.bin (the float32 input
[4, 16]), y.bin (eager PyTorch's output [4, 8]) and, unpacked from data/aotinductor/model/,
model.so, wrapper.cpp, weights.blob and device (the metadata's AOTI_DEVICE_KEY).

`mixed` exports Mixed instead (cuda only): Linear(16, 32) -> relu, plus a tensor attribute
that stays on the CPU when the module moves to the GPU (as torchvision's AnchorGenerator keeps
its cell anchors), copied to the GPU in forward: the export has a CPU constant in a CUDA
model (PyTorch's mixed-device constants); y.bin is [4, 32]. The script fails if the wrapper
declares no CPU constant. SLIMCUDA_PT2_CUDA_MIXED=DIR/model.pt2 for pt2_load_test. Then:

  # the .pt2 itself, through the loader (cuda: on the GPU machine)
  SLIMCUDA_PT2_CUDA_WEIGHTS="$PWD/DIR/model.pt2" SLIMCUDA_REQUIRE_GPU=1 pt2_load_test
  bazel test //csrc/c_api:pt2_load_test //go/slimcuda:slimcuda_test \
      --test_env=SLIMCUDA_PT2_CUDA_WEIGHTS="$PWD/DIR/model.pt2" --nocache_test_results
  # the unpacked parts, through attach_constants directly
  bazel test //csrc/model:constants_test --test_env=SLIMCUDA_PT2_EXPORT_DIR="$PWD/DIR" --nocache_test_results
"""
import json
import os
import sys
import zipfile

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 8, bias=False)

    def forward(self, x):
        return torch.relu(self.l1(x)) @ self.l2.weight.t()


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        # Neither a parameter nor a buffer: .to(device) leaves it on the CPU, and export lifts
        # it as a CPU tensor constant.
        self.offsets = torch.arange(32, dtype=torch.float32) / 8 - 2

    def forward(self, x):
        return torch.relu(self.l1(x)) + self.offsets.to(x.device)


def main():
    args = sys.argv[1:]
    mixed = args[-1:] == ["mixed"]
    if mixed:
        args = args[:-1]
    if len(args) not in (1, 2) or (len(args) == 2 and args[1] not in ("cpu", "cuda")) or \
            (mixed and args[1:] != ["cuda"]):
        sys.exit(__doc__)
    out, device = args[0], args[1] if len(args) == 2 else "cpu"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = (Mixed() if mixed else Model()).eval().to(device)
    x = torch.randn(4, 16, device=device)
    with torch.no_grad():
        y = model(x)
    ep = torch.export.export(model, (x,))
    package = os.path.join(out, "model.pt2")
    torch._inductor.aoti_compile_and_package(ep, package_path=package, inductor_configs={
        "aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "binary_blob",
        "aot_inductor.link_libtorch": False,
        "aot_inductor.embed_kernel_binary": True,
    })
    wanted = {".wrapper.so": "model.so", ".wrapper.cpp": "wrapper.cpp", "_weights.blob": "weights.blob"}
    with zipfile.ZipFile(package) as z:
        names = [n for n in z.namelist() if "/data/aotinductor/model/" in "/" + n]
        for suffix, target in wanted.items():
            found = [n for n in names if n.endswith(suffix)]
            if len(found) != 1:
                sys.exit(f"{package}: want one *{suffix}, found {found}")
            with open(os.path.join(out, target), "wb") as f:
                f.write(z.read(found[0]))
        meta = [n for n in names if n.endswith(".wrapper_metadata.json")]
        key = json.loads(z.read(meta[0]))["AOTI_DEVICE_KEY"] if meta else device
    with open(os.path.join(out, "device"), "w") as f:
        f.write(key)
    if mixed:
        with open(os.path.join(out, "wrapper.cpp")) as f:
            cpu = [line.strip() for line in f if "constants_info_[" in line and "device_type_cpu" in line]
        if not cpu:
            sys.exit(f"{package}: the wrapper declares no CPU constant: not a mixed-device export")
        print(f"{package}: CPU constants: {cpu}")
    x.cpu().numpy().tofile(os.path.join(out, "x.bin"))
    y.cpu().numpy().tofile(os.path.join(out, "y.bin"))
    print(f"{out}: model.so, wrapper.cpp, weights.blob ({os.path.getsize(os.path.join(out, 'weights.blob'))} bytes), "
          f"device {key}, x.bin, y.bin")


if __name__ == "__main__":
    main()
