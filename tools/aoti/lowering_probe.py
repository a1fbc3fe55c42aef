#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""lowering_probe.py OUT_DIR [CASE_SUBSTRING ...] — does AOTInductor lower an op to its own
generated kernel, or fall back (an aoti_torch_cpu_* shim, or the proxy executor with an
extern-kernel node in <stem>.wrapper.json)? Exports tiny CPU models (libtorch-free default
recipe) calling F.interpolate(mode="bicubic") and F.grid_sample, and prints one JSON line per
export: the fallback shims and proxy calls its wrapper .cpp names, the extern-kernel node
targets of any <stem>.wrapper.json, and the generated kernels' names. docs/fallback-ops.md
("Lowered, not fallbacks") has the result for PyTorch 2.11.
"""
import json
import re
import sys
import zipfile

import torch
import torch.nn.functional as F

CONFIG = {"aot_inductor.link_libtorch": False, "aot_inductor.embed_kernel_binary": True}


class Bicubic(torch.nn.Module):
    def __init__(self, align_corners, scale):
        super().__init__()
        self.align_corners, self.scale = align_corners, scale

    def forward(self, x):
        if self.scale:
            return F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=self.align_corners)
        return F.interpolate(x, size=(11, 7), mode="bicubic", align_corners=self.align_corners)


class GridSample(torch.nn.Module):
    def __init__(self, mode, padding, align_corners):
        super().__init__()
        self.mode, self.padding, self.align_corners = mode, padding, align_corners

    def forward(self, x, grid):
        return F.grid_sample(x, grid, mode=self.mode, padding_mode=self.padding, align_corners=self.align_corners)


def cases():
    x = torch.randn(2, 3, 8, 6)
    for ac in (True, False):
        for scale in (True, False):
            yield f"bicubic_ac{int(ac)}_{'scale' if scale else 'size'}", Bicubic(ac, scale), (x,)
    grid = torch.rand(2, 5, 4, 2) * 2.4 - 1.2  # partly outside [-1, 1]: the padding modes matter
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for ac in (True, False):
                yield f"grid_{mode}_{padding}_ac{int(ac)}", GridSample(mode, padding, ac), (x, grid)


def evidence(path):
    z = zipfile.ZipFile(path)
    names = z.namelist()
    wrapper = "".join(z.read(n).decode() for n in names if n.endswith(".wrapper.cpp"))
    kernels = "".join(z.read(n).decode() for n in names if n.endswith(".kernel.cpp"))
    calls = sorted(set(re.findall(r"\baoti_torch_(?:cpu_\w+|cuda_\w+|proxy_executor_\w+)", wrapper)))
    targets = []
    for n in names:
        if n.endswith(".wrapper.json"):
            targets += [node.get("target") for node in json.loads(z.read(n)).get("nodes", [])]
    return {"fallback_calls": calls, "extern_nodes": targets,
            "kernels": sorted(set(re.findall(r'extern "C"\s+void\s+(\w+)\(', kernels)))}


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out, only = sys.argv[1], sys.argv[2:]
    torch.manual_seed(0)
    for name, model, args in cases():
        if only and not any(o in name for o in only):
            continue
        path = f"{out}/{name}.pt2"
        ep = torch.export.export(model, args)
        torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs=CONFIG)
        print(json.dumps(dict(case=name, torch=torch.__version__, **evidence(path))), flush=True)


if __name__ == "__main__":
    main()
