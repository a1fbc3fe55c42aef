#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference outputs for the demo model (models/demo), in exact rational arithmetic.

Writes testdata/demo_model.json: the model's inputs and expected outputs for a few batch
sizes, and the error cases, read by the C++ and Go model tests. The weights follow
models/demo/demo_weights.h; every value is exact in float32, so the expected outputs are
what any correct implementation computes, bit for bit.

Usage: python3 tools/demo/reference.py > testdata/demo_model.json
"""
import json
from fractions import Fraction as F

K_IN, K_HIDDEN, K_OUT, K_MAX_BATCH = 16, 32, 8, 64


def w1(i, j): return F((i * 31 + j * 17) % 23 - 11, 64)
def b1(j): return F((j * 7) % 5 - 2, 16)
def w2(i, j): return F((i * 13 + j * 7) % 19 - 9, 32)
def b2(j): return F(j % 3 - 1, 8)


def c_mod(a, n):
    """C's % (truncates toward zero), as in demo_weights.h."""
    r = abs(a) % n
    return r if a >= 0 else -r


def check_c_semantics():
    # Every operand above is non-negative, so C's % and Python's % agree; keep it so.
    for i in range(K_HIDDEN):
        for j in range(K_HIDDEN):
            assert c_mod(i * 31 + j * 17, 23) == (i * 31 + j * 17) % 23


def model_input(batch, seed):
    return [F(((b * K_IN + i + seed) * 5) % 11 - 5, 8) for b in range(batch) for i in range(K_IN)]


def forward(x, batch):
    y = []
    for b in range(batch):
        h = []
        for j in range(K_HIDDEN):
            acc = b1(j) + sum(x[b * K_IN + i] * w1(i, j) for i in range(K_IN))
            h.append(max(acc, F(0)))
        for j in range(K_OUT):
            y.append(b2(j) + sum(h[i] * w2(i, j) for i in range(K_HIDDEN)))
    return y


def exact_float32(v):
    # All values are multiples of 2**-14 below 2**10 in magnitude: exact in float32.
    assert (v * 2**14).denominator == 1 and abs(v) < 2**10, v
    return float(v)


def run_case(name, batch, seed, device, requires="none", layout="contiguous"):
    x = model_input(batch, seed)
    return {"name": name, "op": "run", "requires": requires, "device": device, "batch": batch,
            "layout": layout, "input": [exact_float32(v) for v in x],
            "expect_output": [exact_float32(v) for v in forward(x, batch)]}


def main():
    check_c_semantics()
    cases = [
        run_case("run_cpu_batch_4", 4, 0, "cpu"),
        run_case("run_cpu_batch_1", 1, 3, "cpu"),
        run_case("run_cpu_batch_64_at_the_bound", 64, 1, "cpu"),
        run_case("run_cpu_transposed_input", 5, 2, "cpu", layout="transposed"),
        run_case("run_auto_batch_7", 7, 4, "auto"),
        run_case("run_cuda_batch_4", 4, 0, "cuda", requires="gpu"),
        run_case("run_cuda_batch_64_at_the_bound", 64, 1, "cuda", requires="gpu"),
        run_case("run_cuda_transposed_input", 5, 2, "cuda", requires="gpu", layout="transposed"),
        run_case("run_cuda_on_caller_stream", 9, 5, "cuda_caller_stream", requires="gpu"),
        {"name": "run_rejects_batch_beyond_bound", "op": "run_bad", "device": "cpu", "requires": "none",
         "sizes": [65, 16], "dtype": "float32", "input_device": "model", "expect": "InvalidArgument",
         "message": "shape [65, 16], want at most [64, 16]"},
        {"name": "run_rejects_empty_batch", "op": "run_bad", "device": "cpu", "requires": "none",
         "sizes": [0, 16], "dtype": "float32", "input_device": "model", "expect": "InvalidArgument",
         "message": "at least [1, 16]"},
        {"name": "run_rejects_wrong_dtype", "op": "run_bad", "device": "cpu", "requires": "none",
         "sizes": [4, 16], "dtype": "float64", "input_device": "model", "expect": "InvalidArgument",
         "message": "dtype float64, want float32"},
        {"name": "run_rejects_wrong_rank", "op": "run_bad", "device": "cpu", "requires": "none",
         "sizes": [64], "dtype": "float32", "input_device": "model", "expect": "InvalidArgument",
         "message": "rank 1, want 2"},
        {"name": "run_rejects_wrong_feature_size", "op": "run_bad", "device": "cpu", "requires": "none",
         "sizes": [4, 15], "dtype": "float32", "input_device": "model", "expect": "InvalidArgument",
         "message": "want at most [64, 16] and at least [1, 16]"},
        {"name": "run_rejects_cpu_tensor_for_cuda_model", "op": "run_bad", "device": "cuda", "requires": "gpu",
         "sizes": [4, 16], "dtype": "float32", "input_device": "cpu", "expect": "InvalidArgument",
         "message": "want cuda:0"},
        {"name": "run_rejects_cuda_tensor_for_cpu_model", "op": "run_bad", "device": "cpu", "requires": "gpu",
         "sizes": [4, 16], "dtype": "float32", "input_device": "cuda", "expect": "InvalidArgument",
         "message": "want cpu"},
        {"name": "load_cpu", "op": "load", "device": "cpu", "requires": "none", "expect": "Ok",
         "expect_device": "cpu"},
        {"name": "load_auto_without_gpu_is_cpu", "op": "load", "device": "auto", "requires": "no_gpu",
         "expect": "Ok", "expect_device": "cpu"},
        {"name": "load_auto_with_gpu_is_cuda", "op": "load", "device": "auto", "requires": "gpu",
         "expect": "Ok", "expect_device": "cuda"},
        {"name": "load_cuda_without_gpu", "op": "load", "device": "cuda", "requires": "no_gpu",
         "expect": "NotSupported", "message": "no CUDA device"},
        {"name": "load_cuda", "op": "load", "device": "cuda", "requires": "gpu", "expect": "Ok",
         "expect_device": "cuda"},
    ]
    doc = {"description": "The demo model (models/demo, packed as demo.slimcuda): runs with exact expected "
                          "outputs (computed by tools/demo/reference.py in rational arithmetic; compare exactly "
                          "or within 1e-6), inputs the runner must reject, and loads. device: cpu, cuda, auto "
                          "(CUDA when a GPU is there), cuda_caller_stream (CUDA with a non-blocking caller "
                          "stream selected). layout transposed: the input is a [batch, 16] view with strides "
                          "[1, batch] of a [16, batch] tensor. Read by csrc/c_api/model_test.cc and "
                          "go/slimcuda/model_test.go.",
           "cases": cases}
    print("{")
    print('  "description": ' + json.dumps(doc["description"]) + ",")
    print('  "cases": [')
    print(",\n".join("    " + json.dumps(c) for c in cases))
    print("  ]")
    print("}")


if __name__ == "__main__":
    main()
