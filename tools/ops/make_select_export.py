#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/select/select_ops_cpu.pt2 and testdata/select_export.json: a real CPU export
(PyTorch's AOTInductor, libtorch-free: link_libtorch False, kernels embedded) of a model that
calls every data-dependent selection op slimcuda implements, and its inputs and eager outputs.

The wrapper calls aoti_torch_cpu_nonzero, _masked_select and _index_Tensor (a bool mask) as C
shims, and aten::_unique2 and aten::unique_consecutive through the proxy executor (no C shim:
nodes in the archive's <stem>.json). csrc/c_api/select_export_test.cc loads it through the
C ABI and compares every output (sizes and values) with PyTorch's.

Run with the C++ compiler made portable (AVX2, no zmm registers; tools/check_fixture_isa.sh):
  CXX=tools/aoti/portable_cxx.sh ATEN_CPU_CAPABILITY=avx2 python3 tools/ops/make_select_export.py testdata
"""
import json
import os
import shutil
import sys
import tempfile
import zipfile

import torch


class Select(torch.nn.Module):
    def forward(self, x):
        values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        runs, run_inverse, run_counts = torch.unique_consecutive(x, return_inverse=True, return_counts=True)
        positive = x > 0
        return (values, inverse, counts, runs, run_inverse, run_counts, torch.nonzero(positive),
                torch.masked_select(x, x > 0.5), x[positive] * 2)


def encode(t):
    return {"dtype": str(t.dtype).replace("torch.", ""), "sizes": list(t.shape),
            "values": [float(v) for v in t.reshape(-1).tolist()]}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "testdata"
    example = torch.tensor([[0.5, -1.0, 0.5, 2.0, 0.0], [2.0, 2.0, -0.25, 0.0, 3.0]])
    # Another input than the example: other output sizes than those the export saw.
    x = torch.tensor([[1.0, 1.0, -2.0, 0.75, 0.75, 4.0], [0.0, -0.0, 0.25, 0.25, 1.0, -3.0]])
    model = Select().eval()
    ep = torch.export.export(model, (example,), dynamic_shapes=({0: torch.export.Dim("rows", max=64),
                                                                 1: torch.export.Dim("cols", max=64)},))
    tmp = tempfile.mkdtemp()
    try:
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(tmp, "select_ops_cpu.pt2"),
            inductor_configs={"aot_inductor.link_libtorch": False, "aot_inductor.embed_kernel_binary": True,
                              "aot_inductor.package_cpp_only": False})
        names = zipfile.ZipFile(path).namelist()
        assert any(n.endswith(".json") and "aotinductor" in n and "metadata" not in n for n in names), names
        os.makedirs(os.path.join(out_dir, "select"), exist_ok=True)
        shutil.copy(path, os.path.join(out_dir, "select", "select_ops_cpu.pt2"))
    finally:
        shutil.rmtree(tmp)
    with torch.no_grad():
        outs = model(x)
    doc = {
        "description": (
            "A real CPU export (testdata/select/select_ops_cpu.pt2, PyTorch " + torch.__version__.split("+")[0] +
            ", written with this file by tools/ops/make_select_export.py) calling nonzero, masked_select and "
            "index.Tensor (C shims) and _unique2 and unique_consecutive (proxy executor); inputs and PyTorch's "
            "eager outputs (dtype, sizes, values row-major), compared exactly. Read by "
            "csrc/c_api/select_export_test.cc."),
        "cases": [{"name": "select_ops_cpu_export", "op": "export", "requires": "none",
                   "pt2": "select/select_ops_cpu.pt2", "inputs": [encode(x)], "outputs": [encode(o) for o in outs]}],
    }
    with open(os.path.join(out_dir, "select_export.json"), "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ": "))
        f.write("\n")


if __name__ == "__main__":
    main()
