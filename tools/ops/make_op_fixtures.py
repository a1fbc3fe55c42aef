#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/ops.json: the shared fixture cases of the ATen fallback ops.

Expected values come from PyTorch (CPU is enough: the values are the ops' definitions; the
GPU machine's PyTorch gives the same numbers). float32 cases are computed in float64 and
compared with a float32 tolerance; float16/bfloat16 cases by PyTorch in that dtype.

Inputs are not stored: every operand is generated from the case's seed (see `values`),
the same way in C++ (csrc/ops/ops_fixtures_test.cc) and Go (go/internal/opsfixture):
    element j (row-major over the operand's logical sizes) of operand number t (its
    position in the case's "inputs" list) is (splitmix64(seed * 1000003 + t * 7919 + j)
    % 17 - 8) / 8, a multiple of 1/8 in [-1, 1] that float32, TF32, float16 and bfloat16
    all hold exactly.
Usage: python3 tools/ops/make_op_fixtures.py > testdata/ops.json
"""
import json
import sys

import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1

# Per-dtype tolerances: |got - want| <= atol + rtol * |want|.
TOL = {"float32": (1e-5, 1e-5), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}
# GELU: CPU uses the exact erf form, CUDA (cuBLASLt's epilogue) the tanh form; each device
# has its own expected values.
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def values(seed, t, n):
    return [((splitmix64(seed * 1000003 + t * 7919 + j) % 17) - 8) / 8.0 for j in range(n)]


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def operand(seed, t, spec, dtype):
    """The logical tensor (float64) of one operand spec."""
    if spec.get("fill") == "nan":
        v = [float("nan")] * numel(spec["sizes"])
    else:
        v = values(seed, t, numel(spec["sizes"]))
    return torch.tensor(v, dtype=torch.float64).reshape(spec["sizes"])


def rounded(x, dtype):
    return x.to(DTYPES[dtype]).to(torch.float64)


def flat(x):
    return [float(v) for v in x.reshape(-1).tolist()]


def gemm_expected(c, device):
    dt = c["dtype"]
    ins = [operand(c["seed"], i, s, dt) for i, s in enumerate(c["inputs"])]
    work = torch.float64 if dt == "float32" else DTYPES[dt]
    ins = [x.to(work) for x in ins]
    fn, beta, alpha = c["fn"], c.get("beta", 1.0), c.get("alpha", 1.0)
    if fn == "mm":
        y = torch.mm(ins[0], ins[1])
    elif fn == "bmm":
        y = torch.bmm(ins[0], ins[1])
    elif fn == "addmm":
        y = torch.addmm(ins[0], ins[1], ins[2], beta=beta, alpha=alpha)
    elif fn == "baddbmm":
        y = torch.baddbmm(ins[0], ins[1], ins[2], beta=beta, alpha=alpha)
    elif fn == "addmm_activation":
        y = torch.addmm(ins[0], ins[1], ins[2], beta=beta, alpha=alpha)
        if c["use_gelu"]:
            y = F.gelu(y, approximate="tanh" if device == "cuda" else "none")
        else:
            y = F.relu(y)
    else:
        raise ValueError(fn)
    return y


def conv_expected(c, device):
    dt = c["dtype"]
    ins = [operand(c["seed"], i, s, dt) for i, s in enumerate(c["inputs"])]
    work = torch.float64 if dt == "float32" else DTYPES[dt]
    ins = [x.to(work) for x in ins]
    bias = ins[2] if len(ins) > 2 else None
    return torch.ops.aten.convolution(ins[0], ins[1], bias, c["stride"], c["padding"], c["dilation"],
                                      bool(c["transposed"]), c["output_padding"], c["groups"])


CASES = []


def gemm(name, fn, dtype, inputs, out=None, seed=1, **kw):
    CASES.append(dict(name=name, op="gemm", fn=fn, dtype=dtype, seed=seed, inputs=inputs,
                      **({"out": out} if out else {}), **kw))


def conv(name, dtype, inputs, stride, padding, dilation, transposed=0, output_padding=None, groups=1, seed=1,
         **kw):
    sp = len(inputs[0]["sizes"]) - 2
    CASES.append(dict(name=name, op="convolution", dtype=dtype, seed=seed, inputs=inputs, stride=stride,
                      padding=padding, dilation=dilation, transposed=transposed,
                      output_padding=output_padding if output_padding is not None else [0] * sp, groups=groups,
                      **kw))


def T(sizes, **kw):
    return dict(sizes=sizes, **kw)


def transposed(sizes):
    """A view of sizes [.., r, c] whose last two dimensions are swapped in memory."""
    if len(sizes) == 2:
        return dict(sizes=sizes, strides=[1, sizes[0]])
    b, r, c = sizes
    return dict(sizes=sizes, strides=[r * c, 1, r])


def build():
    for dt in ["float32", "float16", "bfloat16"]:
        gemm(f"mm_{dt}_3x4x5", "mm", dt, [T([3, 4]), T([4, 5])], seed=11)
        gemm(f"addmm_{dt}_bias_row", "addmm", dt, [T([5]), T([3, 4]), T([4, 5])], seed=12)
        gemm(f"bmm_{dt}_2x3x4x5", "bmm", dt, [T([2, 3, 4]), T([2, 4, 5])], seed=13)
        gemm(f"addmm_activation_{dt}_relu", "addmm_activation", dt, [T([6]), T([4, 8]), T([8, 6])], use_gelu=0,
             seed=14)
        conv(f"conv2d_{dt}_bias", dt, [T([2, 3, 5, 5]), T([4, 3, 3, 3]), T([4])], [1, 1], [1, 1], [1, 1], seed=15)
    f = "float32"
    gemm("mm_float32_mat1_transposed", "mm", f, [transposed([3, 4]), T([4, 5])], seed=21)
    gemm("mm_float32_mat2_transposed", "mm", f, [T([3, 4]), transposed([4, 5])], seed=22)
    gemm("mm_float32_both_transposed", "mm", f, [transposed([5, 7]), transposed([7, 2])], seed=23)
    gemm("mm_float32_out_transposed", "mm", f, [T([3, 4]), T([4, 5])], out=dict(strides=[1, 3]), seed=24)
    gemm("mm_float32_out_padded_rows", "mm", f, [T([3, 4]), T([4, 5])], out=dict(strides=[8, 1]), seed=25)
    gemm("mm_float32_k1", "mm", f, [T([4, 1]), T([1, 3])], seed=26)
    gemm("mm_float32_17x33x9", "mm", f, [T([17, 33]), T([33, 9])], seed=27)
    gemm("addmm_float32_full_self_beta_alpha", "addmm", f, [T([3, 5]), T([3, 4]), T([4, 5])], beta=0.5, alpha=2.0,
         seed=31)
    gemm("addmm_float32_self_column", "addmm", f, [T([3, 1]), T([3, 4]), T([4, 5])], seed=32)
    gemm("addmm_float32_self_1xN", "addmm", f, [T([1, 5]), T([3, 4]), T([4, 5])], seed=33)
    gemm("addmm_float32_self_scalar", "addmm", f, [T([]), T([3, 4]), T([4, 5])], seed=34)
    gemm("addmm_float32_beta0_ignores_nan_self", "addmm", f, [T([3, 5], fill="nan"), T([3, 4]), T([4, 5])],
         beta=0.0, seed=35)
    gemm("addmm_float32_bias_alpha_half", "addmm", f, [T([5]), T([3, 4]), T([4, 5])], alpha=0.5, seed=36)
    gemm("addmm_float32_transposed_weight", "addmm", f, [T([6]), T([4, 8]), transposed([8, 6])], seed=37)
    gemm("bmm_float32_batch2_transposed", "bmm", f, [T([3, 2, 4]), transposed([3, 4, 5])], seed=41)
    gemm("bmm_float32_out_transposed", "bmm", f, [T([2, 3, 4]), T([2, 4, 5])], out=dict(strides=[15, 1, 3]),
         seed=42)
    gemm("baddbmm_float32_full_self", "baddbmm", f, [T([2, 3, 5]), T([2, 3, 4]), T([2, 4, 5])], beta=0.25,
         alpha=1.5, seed=43)
    gemm("baddbmm_float32_self_row", "baddbmm", f, [T([5]), T([2, 3, 4]), T([2, 4, 5])], seed=44)
    gemm("baddbmm_float32_beta0_ignores_nan_self", "baddbmm", f, [T([2, 3, 5], fill="nan"), T([2, 3, 4]),
                                                                 T([2, 4, 5])], beta=0.0, seed=45)
    gemm("baddbmm_bfloat16_self_row", "baddbmm", "bfloat16", [T([5]), T([2, 3, 4]), T([2, 4, 5])], seed=46)
    gemm("addmm_activation_float32_gelu", "addmm_activation", f, [T([6]), T([4, 8]), T([8, 6])], use_gelu=1,
         seed=51)
    gemm("addmm_activation_float32_gelu_full_self", "addmm_activation", f, [T([4, 6]), T([4, 8]), T([8, 6])],
         use_gelu=1, beta=0.5, seed=52)
    gemm("addmm_activation_bfloat16_gelu", "addmm_activation", "bfloat16", [T([6]), T([4, 8]), T([8, 6])],
         use_gelu=1, seed=53)

    conv("conv1d_float32", f, [T([2, 3, 9]), T([4, 3, 3]), T([4])], [1], [0], [1], seed=61)
    conv("conv1d_float32_stride2_pad2_dil2_nobias", f, [T([1, 2, 11]), T([3, 2, 3])], [2], [2], [2], seed=62)
    conv("conv2d_float32_stride2_pad1", f, [T([1, 3, 7, 6]), T([2, 3, 3, 3]), T([2])], [2, 2], [1, 1], [1, 1],
         seed=63)
    conv("conv2d_float32_dilation2", f, [T([1, 2, 7, 7]), T([3, 2, 3, 3]), T([3])], [1, 1], [0, 0], [2, 2], seed=64)
    conv("conv2d_float32_rect_kernel_asym_stride", f, [T([2, 2, 6, 8]), T([3, 2, 2, 3])], [1, 2], [1, 0], [1, 1],
         seed=65)
    conv("conv2d_float32_groups2", f, [T([1, 4, 5, 5]), T([6, 2, 3, 3]), T([6])], [1, 1], [1, 1], [1, 1], groups=2,
         seed=66)
    conv("conv2d_float32_depthwise", f, [T([2, 3, 5, 5]), T([3, 1, 3, 3]), T([3])], [1, 1], [1, 1], [1, 1],
         groups=3, seed=67)
    conv("conv2d_float32_1x1_nobias", f, [T([2, 8, 3, 3]), T([4, 8, 1, 1])], [1, 1], [0, 0], [1, 1], seed=68)
    conv("conv2d_float32_channels_last", f,
         [dict(sizes=[2, 3, 4, 5], strides=[60, 1, 15, 3]), T([4, 3, 3, 3]), T([4])], [1, 1], [1, 1], [1, 1],
         seed=69)
    conv("conv3d_float32", f, [T([1, 2, 4, 5, 4]), T([3, 2, 3, 3, 2]), T([3])], [1, 1, 1], [1, 1, 0], [1, 1, 1],
         seed=70)
    conv("conv_transpose2d_float32_stride2_outpad1", f, [T([1, 3, 3, 4]), T([3, 2, 3, 3]), T([2])], [2, 2], [1, 1],
         [1, 1], transposed=1, output_padding=[1, 1], seed=71)
    conv("conv_transpose2d_float32_groups2_nobias", f, [T([1, 4, 3, 3]), T([4, 3, 2, 2])], [1, 1], [0, 0], [1, 1],
         transposed=1, groups=2, seed=72)
    conv("conv_transpose1d_float32_dil2", f, [T([2, 2, 5]), T([2, 3, 3]), T([3])], [3], [1], [2], transposed=1,
         output_padding=[1], seed=73)
    conv("conv_weight_transposed_view_float32", f,
         [T([1, 2, 4, 4]), dict(sizes=[3, 2, 2, 2], strides=[1, 3, 12, 6]), T([3])], [1, 1], [0, 0], [1, 1],
         seed=74)


def bad_cases():
    """Bad input: same code on both devices (the checks are shared), plus CPU tensors
    handed to the CUDA ops, which run without a GPU (the check precedes any CUDA call)."""
    out = []
    f = "float32"
    base = dict(op="gemm_error", requires="none")
    for dev in ["cpu", "cuda"]:
        req = "none" if dev == "cpu" else "gpu"
        out += [
            dict(name=f"mm_null_out_{dev}", fn="mm", device=dev, null="out", dtypes=[f, f, f],
                 sizes=[[3, 5], [3, 4], [4, 5]], expect="InvalidArgument", message="null out"),
            dict(name=f"mm_null_mat2_{dev}", fn="mm", device=dev, null="mat2", dtypes=[f, f, f],
                 sizes=[[3, 5], [3, 4], [4, 5]], expect="InvalidArgument", message="null mat2"),
            dict(name=f"mm_dtype_mismatch_{dev}", fn="mm", device=dev, dtypes=[f, f, "float16"],
                 sizes=[[3, 5], [3, 4], [4, 5]], expect="InvalidArgument", message="dtype"),
            dict(name=f"mm_inner_mismatch_{dev}", fn="mm", device=dev, dtypes=[f, f, f],
                 sizes=[[3, 5], [3, 4], [3, 5]], expect="InvalidArgument", message="cannot be multiplied"),
            dict(name=f"mm_out_shape_{dev}", fn="mm", device=dev, dtypes=[f, f, f],
                 sizes=[[3, 4], [3, 4], [4, 5]], expect="InvalidArgument", message="out has shape"),
            dict(name=f"mm_float64_{dev}", fn="mm", device=dev, dtypes=["float64"] * 3,
                 sizes=[[3, 5], [3, 4], [4, 5]], expect="NotSupported", message="float64"),
            dict(name=f"addmm_self_not_broadcastable_{dev}", fn="addmm", device=dev, dtypes=[f] * 4,
                 sizes=[[3, 5], [4], [3, 4], [4, 5]], expect="InvalidArgument", message="broadcast"),
            dict(name=f"bmm_2d_operand_{dev}", fn="bmm", device=dev, dtypes=[f] * 3,
                 sizes=[[2, 3, 5], [3, 4], [2, 4, 5]], expect="InvalidArgument", message="3-D"),
            dict(name=f"conv_null_weight_{dev}", fn="convolution", device=dev, null="weight", dtypes=[f, f],
                 sizes=[[1, 3, 5, 5], [4, 3, 3, 3]], expect="InvalidArgument", message="null weight"),
            dict(name=f"conv_channel_mismatch_{dev}", fn="convolution", device=dev, dtypes=[f, f],
                 sizes=[[1, 3, 5, 5], [4, 2, 3, 3]], expect="InvalidArgument", message="input channels"),
            dict(name=f"conv_groups_zero_{dev}", fn="convolution", device=dev, dtypes=[f, f], groups=0,
                 sizes=[[1, 3, 5, 5], [4, 3, 3, 3]], expect="InvalidArgument", message="groups"),
            dict(name=f"conv_kernel_too_large_{dev}", fn="convolution", device=dev, dtypes=[f, f],
                 sizes=[[1, 3, 2, 2], [4, 3, 3, 3]], padding=[0, 0], expect="InvalidArgument", message="larger"),
        ]
        for c in out[-12:]:
            c.update(base, requires=req)
    for fn, sizes in [("mm", [[3, 5], [3, 4], [4, 5]]), ("addmm", [[3, 5], [5], [3, 4], [4, 5]]),
                      ("bmm", [[2, 3, 5], [2, 3, 4], [2, 4, 5]]),
                      ("baddbmm", [[2, 3, 5], [5], [2, 3, 4], [2, 4, 5]]),
                      ("addmm_activation", [[5], [3, 4], [4, 5]]), ("convolution", [[1, 3, 5, 5], [4, 3, 3, 3]])]:
        out.append(dict(base, name=f"{fn}_cuda_given_cpu_tensors", fn=fn, device="cuda", tensors_on="cpu",
                        dtypes=[f] * len(sizes), sizes=sizes, expect="InvalidArgument", message="CPU tensor"))
    return out


def main():
    build()
    cases = []
    for c in CASES:
        for dev in ["cpu", "cuda"]:
            d = dict(c)
            d["name"] = c["name"] + "_" + dev
            d["device"] = dev
            d["requires"] = "none" if dev == "cpu" else "gpu"
            y = gemm_expected(c, dev) if c["op"] == "gemm" else conv_expected(c, dev)
            if c["dtype"] == "float32":
                y = y.to(torch.float64)
            else:
                y = y.to(torch.float64)
            d["expect"] = "Ok"
            d["expect_sizes"] = list(y.shape)
            d["expected"] = flat(y)
            d["atol"], d["rtol"] = TOL[c["dtype"]]
            if c.get("use_gelu") and dev == "cuda" and c["dtype"] == "float32":
                d["atol"] = 1e-4  # cuBLASLt's tanh GELU in float vs the float64 tanh reference
            cases.append(d)
    cases += bad_cases()
    doc = {
        "description": (
            "The ATen fallback ops (testdata/ops.json, written by tools/ops/make_op_fixtures.py with PyTorch "
            + torch.__version__.split("+")[0] + " on the CPU). op gemm: fn mm|addmm|bmm|baddbmm|addmm_activation "
            "(aoti_torch_<device>_<fn>_out, or _addmm_activation); op convolution: aoti_torch_<device>_convolution; "
            "each value case once per device (name suffix _cpu: the CPU reference, requires none; _cuda: the CUDA "
            "op, requires gpu). inputs, in the shim's argument order (gemm: [self] mat1 mat2; convolution: input "
            "weight [bias]): {sizes, strides (optional, element strides over a storage just large enough, zero "
            "filled), fill: nan (optional)}; element j (row-major over sizes) of operand t is "
            "(splitmix64(seed * 1000003 + t * 7919 + j) % 17 - 8) / 8. out (gemm _out ops): {strides} for the "
            "out tensor (default contiguous), pre-filled with -7. expected: the result in row-major order, "
            "compared as |got - want| <= atol + rtol * |want| (float32 1e-5/1e-5 against a float64 reference, "
            "float16 1e-2/1e-2, bfloat16 5e-2/2e-2). GELU is exact (erf) on the CPU and tanh on CUDA, as ATen's "
            "kernels; the CUDA cases carry the tanh values. op gemm_error: bad input (sizes/dtypes per tensor, "
            "first the out or the convolution input; null names the handle passed as NULL; tensors_on cpu: "
            "CPU tensors into a CUDA op) -> expect (error name), message (a substring of the last error). "
            "Read by csrc/ops/ops_fixtures_test.cc (C++) and go/internal/opsfixture/ops_test.go (Go)."),
        "cases": cases,
    }
    out = json.dumps(doc, indent=None, separators=(",", ": "))
    # One case per line keeps diffs readable.
    out = out.replace('"cases": [{', '"cases": [\n  {').replace("}, {\"name\"", "},\n  {\"name\"")
    sys.stdout.write(out.replace(']}', ']\n}') if out.endswith(']}') else out)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
