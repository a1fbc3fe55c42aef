#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""On the GPU machine: checks testdata/ops.json's integer histc cases (rule
"aten_cuda_integral") against torch.histc on CUDA. make_op_fixtures.py computes their expected
counts from ATen's CUDA rule without a GPU (its CPU histc refuses integers); this is the check
that the rule is ATen's. Prints one line per case and "N passed, N failed".

Usage: python3 tools/gpu/histc_integral_check.py [testdata/ops.json]
"""
import json
import sys

import torch

DTYPES = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
          "uint8": torch.uint8}


def operand(c):
    x = torch.tensor([float(v) for v in c["input_values"]], dtype=torch.float64).reshape(c["sizes"])
    x = x.to(DTYPES[c["dtype"]]).cuda()
    if "strides" not in c:
        return x
    span = 1 + sum((sz - 1) * st for sz, st in zip(c["sizes"], c["strides"]))
    v = torch.zeros(span, dtype=x.dtype, device="cuda").as_strided(c["sizes"], c["strides"])
    v.copy_(x)
    return v


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "testdata/ops.json"
    cases = [c for c in json.load(open(path))["cases"] if c.get("rule") == "aten_cuda_integral"]
    passed = failed = 0
    for c in cases:
        got = torch.histc(operand(c), c["bins"], c["min"], c["max"])
        ok = got.dtype == DTYPES[c["dtype"]] and [float(v) for v in got.cpu().tolist()] == c["expected"]
        print(f"{c['name']}: {'ok' if ok else 'MISMATCH'} torch {got.cpu().tolist()} fixture {c['expected']}")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
