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
import math
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
    # An operand whose strides alias (a stride 0: an expanded weight) holds what was written
    # last through its view, as the tests store it.
    ins = [stored_operand(c["seed"], i, s) if 0 in s.get("strides", []) else operand(c["seed"], i, s, dt)
           for i, s in enumerate(c["inputs"])]
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
    # An empty inner dimension (k == 0): no product, out = act(beta * self), or zeros.
    gemm("mm_float32_k0", "mm", f, [T([3, 0]), T([0, 4])], seed=28)
    gemm("addmm_float32_k0_bias_beta_alpha", "addmm", f, [T([4]), T([3, 0]), T([0, 4])], beta=0.5, alpha=2.0,
         seed=29)
    gemm("addmm_activation_float32_k0_relu", "addmm_activation", f, [T([4]), T([3, 0]), T([0, 4])], use_gelu=0,
         seed=30)
    gemm("addmm_activation_float32_k0_gelu", "addmm_activation", f, [T([3, 4]), T([3, 0]), T([0, 4])], use_gelu=1,
         seed=38)
    gemm("baddbmm_bfloat16_k0_full_self", "baddbmm", "bfloat16", [T([2, 3, 5]), T([2, 3, 0]), T([2, 0, 5])],
         beta=0.25, seed=47)
    gemm("baddbmm_float32_k0_beta0_ignores_nan_self", "baddbmm", f,
         [T([2, 3, 5], fill="nan"), T([2, 3, 0]), T([2, 0, 5])], beta=0.0, seed=48)
    gemm("mm_float32_k0_out_transposed", "mm", f, [T([3, 0]), T([0, 4])], out=dict(strides=[1, 3]), seed=49)
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
    # The GEMMs of an exported nn.LSTM(32, 64, num_layers=2, batch_first=True) + Linear(64, 10)
    # head at batch 2 (the zoo's lstm: the default CUDA export calls mm_out for every step and
    # the layer-1 input projection, addmm_out for the head), with the operands as the
    # generated wrapper passes them: a step's hidden state is a [2, 64] view at storage offset
    # step * 128 of the [16, 2, 64] sequence buffer, the weights are transposed views
    # (W.t(): strides [1, 64]), the head reads y[:, -1] (offset 15 * 128).
    gemm("mm_float32_lstm_step", "mm", f, [T([2, 64], strides=[64, 1], offset=1920), transposed([64, 256])],
         seed=81)
    gemm("mm_float32_lstm_step_out_in_buffer", "mm", f,
         [T([2, 64], strides=[64, 1], offset=128), transposed([64, 256])], out=dict(strides=[256, 1], offset=512),
         seed=82)
    gemm("mm_float32_lstm_layer_input", "mm", f, [T([32, 64]), transposed([64, 256])], seed=83)
    gemm("addmm_float32_lstm_head", "addmm", f,
         [T([10]), T([2, 64], strides=[64, 1], offset=1920), transposed([64, 10])], seed=84)
    gemm("addmm_float32_lstm_gates_self_slice", "addmm", f,
         [T([2, 256], strides=[256, 1], offset=512), T([2, 64], strides=[64, 1], offset=128), transposed([64, 256])],
         seed=85)
    # The layer-0 input projection as the CPU export leaves it: bmm of the batch-first input
    # seen time-major ([16, 2, 32], strides [32, 512, 1]) with the weight expanded over time
    # (batch stride 0).
    gemm("bmm_float32_lstm_input_projection", "bmm", f,
         [T([16, 2, 32], strides=[32, 512, 1]), T([16, 32, 256], strides=[0, 1, 32])], seed=86)
    # Operands less aligned than the allocator's 256 bytes (views at odd offsets): cuBLASLt's
    # heuristic must be told (MIN_ALIGNMENT_*), and a bias under 16 bytes is added unfused.
    gemm("mm_float32_operands_at_odd_offsets", "mm", f,
         [T([2, 64], strides=[64, 1], offset=2), dict(transposed([64, 10]), offset=1)],
         out=dict(strides=[10, 1], offset=3), seed=87)
    gemm("addmm_float32_bias_at_odd_offset", "addmm", f,
         [T([10], offset=1), T([2, 64], strides=[64, 1], offset=1920), transposed([64, 10])], seed=88)
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


# --- scaled-dot-product attention -----------------------------------------------------

# The CUDA attention ops (aoti_torch_cuda__scaled_dot_product_<fn>) and the CPU one
# (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu, fn flash_for_cpu).
ATTN_TOL = {"float32": (2e-5, 2e-5), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2)}
META_OP = {
    "efficient": lambda q, k, v, b, c: torch.ops.aten._scaled_dot_product_efficient_attention(
        q, k, v, b, c["compute_log_sumexp"], 0.0, c["is_causal"], scale=c.get("scale")),
    "flash": lambda q, k, v, b, c: torch.ops.aten._scaled_dot_product_flash_attention(
        q, k, v, 0.0, c["is_causal"], False, scale=c.get("scale")),
    "cudnn": lambda q, k, v, b, c: torch.ops.aten._scaled_dot_product_cudnn_attention(
        q, k, v, b, c["compute_log_sumexp"], 0.0, c["is_causal"], False, scale=c.get("scale")),
    "flash_for_cpu": lambda q, k, v, b, c: torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, c["is_causal"], attn_mask=b, scale=c.get("scale")),
}


def contiguous_strides(sizes):
    st, acc = [], 1
    for s in reversed(sizes):
        st.insert(0, acc)
        acc *= max(s, 1)
    return st


def stored_operand(seed, t, spec):
    """The logical tensor (float64) an operand spec holds once written element by element in
    row-major order through its strides (later writes win where a stride of 0 aliases), a bool
    spec as 1.0/0.0; masked_rows (of dimension -2) are -inf, or false for a bool mask."""
    sizes = spec["sizes"]
    strides = spec.get("strides") or contiguous_strides(sizes)
    n = numel(sizes)
    vals = values(seed, t, n)
    if spec.get("dtype") == "bool":
        vals = [1.0 if x >= -0.5 else 0.0 for x in vals]
    masked = set(spec.get("masked_rows", []))
    if masked:
        rows, cols = sizes[-2], sizes[-1]
        fill = 0.0 if spec.get("dtype") == "bool" else float("-inf")
        vals = [fill if (j // cols) % rows in masked else x for j, x in enumerate(vals)]
    storage = {}
    offs = []
    for j in range(n):
        rest, off = j, 0
        for d in reversed(range(len(sizes))):
            off += (rest % sizes[d]) * strides[d]
            rest //= sizes[d]
        storage[off] = vals[j]
        offs.append(off)
    return torch.tensor([storage[o] for o in offs], dtype=torch.float64).reshape(sizes)


def short(x):
    return [float("%.8g" % v) for v in x.reshape(-1).tolist()]


def attention_reference(q, k, v, bias, is_causal, scale):
    """The definition in float64: softmax(scale q k^T + bias) v, causal upper-left, rows with
    every key masked out 0 (and their logsumexp 0, as PyTorch's CPU kernel)."""
    hq, hk = q.shape[1], k.shape[1]
    if hk != hq:
        k = k.repeat_interleave(hq // hk, dim=1)
        v = v.repeat_interleave(hq // hk, dim=1)
    s = (q @ k.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias
    if is_causal:
        sq, skv = s.shape[-2], s.shape[-1]
        keep = torch.ones(sq, skv, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    dead = torch.isneginf(m)
    m = torch.where(dead, torch.zeros_like(m), m)
    e = torch.exp(s - m)
    total = e.sum(dim=-1, keepdim=True)
    out = torch.where(total > 0, (e / torch.where(total > 0, total, torch.ones_like(total))) @ v,
                      torch.zeros(1, dtype=torch.float64))
    lse = torch.where(total > 0, m + torch.log(torch.where(total > 0, total, torch.ones_like(total))),
                      torch.zeros(1, dtype=torch.float64))
    return out, lse.squeeze(-1)


ATTN = []


ALL = ["efficient", "flash", "cudnn"]


def attn(name, dtype, q, k, v, bias=None, is_causal=False, scale=None, fns=("efficient",), seed=1):
    """One attention scenario, run by the CPU op (value's head dim equal to the query's) and
    by the CUDA ops in fns that take it (flash: no bias, equal head dims). All three CUDA ops
    run one kernel; they differ in layouts, so the layout-relevant scenarios run all three."""
    ATTN.append(dict(name=name, dtype=dtype, q=q, k=k, v=v, bias=bias, is_causal=is_causal, scale=scale, fns=fns,
                     seed=seed))


def bshd(b, h, s, d):
    """sizes [B,H,S,D] of a [B,S,H,D]-contiguous tensor transposed (what models pass)."""
    return dict(sizes=[b, h, s, d], strides=[s * h * d, d, h * d, 1])


def build_attention():
    for dt in ["float32", "float16", "bfloat16"]:
        attn(f"sdpa_{dt}_plain", dt, T([2, 2, 5, 16]), T([2, 2, 7, 16]), T([2, 2, 7, 16]), fns=ALL, seed=101)
        attn(f"sdpa_{dt}_causal", dt, T([1, 2, 9, 16]), T([1, 2, 9, 16]), T([1, 2, 9, 16]), is_causal=True,
             fns=ALL, seed=102)
        attn(f"sdpa_{dt}_bias_broadcast", dt, T([2, 2, 4, 8]), T([2, 2, 6, 8]), T([2, 2, 6, 8]),
             bias=T([1, 2, 4, 6]), fns=ALL, seed=103)
        attn(f"sdpa_{dt}_bool_mask", dt, T([2, 1, 4, 8]), T([2, 1, 6, 8]), T([2, 1, 6, 8]),
             bias=T([2, 1, 4, 6], dtype="bool"), fns=ALL, seed=104)
    f = "float32"
    for d in [32, 40, 64, 80, 96, 128, 160, 192, 224, 256]:
        attn(f"sdpa_float32_head_dim_{d}", f, T([1, 1, 2, d]), T([1, 1, 5, d]), T([1, 1, 5, d]), seed=110 + d)
    attn("sdpa_float16_head_dim_40_causal", "float16", T([1, 1, 17, 40]), T([1, 1, 17, 40]), T([1, 1, 17, 40]),
         is_causal=True, seed=120)
    attn("sdpa_bfloat16_head_dim_128", "bfloat16", T([1, 1, 2, 128]), T([1, 1, 6, 128]), T([1, 1, 6, 128]), seed=121)
    attn("sdpa_float32_head_dim_3", f, T([1, 1, 4, 3]), T([1, 1, 5, 3]), T([1, 1, 5, 3]), seed=122)
    attn("sdpa_float32_custom_scale", f, T([1, 2, 4, 16]), T([1, 2, 6, 16]), T([1, 2, 6, 16]), scale=0.3, fns=ALL,
         seed=130)
    attn("sdpa_float32_causal_sq_lt_skv", f, T([1, 1, 3, 8]), T([1, 1, 7, 8]), T([1, 1, 7, 8]), is_causal=True,
         seed=131)
    attn("sdpa_float32_causal_sq_gt_skv", f, T([1, 1, 7, 8]), T([1, 1, 3, 8]), T([1, 1, 3, 8]), is_causal=True,
         seed=132)
    attn("sdpa_float32_causal_long", f, T([1, 1, 70, 4]), T([1, 1, 70, 4]), T([1, 1, 70, 4]), is_causal=True,
         seed=133)
    attn("sdpa_float32_causal_and_bias", f, T([1, 2, 6, 8]), T([1, 2, 6, 8]), T([1, 2, 6, 8]), bias=T([6, 6]),
         is_causal=True, seed=134)
    attn("sdpa_float32_long_kv", f, T([1, 1, 3, 16]), T([1, 1, 100, 16]), T([1, 1, 100, 16]), seed=135)
    attn("sdpa_float32_bshd_views", f, bshd(2, 3, 5, 8), bshd(2, 3, 6, 8), bshd(2, 3, 6, 8), fns=ALL, seed=136)
    attn("sdpa_bfloat16_bshd_views_causal", "bfloat16", bshd(1, 2, 17, 8), bshd(1, 2, 17, 8), bshd(1, 2, 17, 8),
         is_causal=True, fns=ALL, seed=137)
    # q, k, v slices of one packed [B, S, 3, H, D] projection.
    B, S, H, D = 1, 5, 2, 8
    packed = [S * 3 * H * D, D, 3 * H * D, 1]
    attn("sdpa_float32_packed_qkv_slices", f, dict(sizes=[B, H, S, D], strides=packed),
         dict(sizes=[B, H, S, D], strides=packed), dict(sizes=[B, H, S, D], strides=packed), fns=ALL,
         seed=138)
    attn("sdpa_float32_value_head_dim_differs", f, T([1, 2, 4, 8]), T([1, 2, 5, 8]), T([1, 2, 5, 12]),
         fns=["efficient", "cudnn"], seed=139)
    attn("sdpa_float32_value_head_dim_differs_bshd", f, bshd(1, 2, 4, 8), bshd(1, 2, 5, 8), bshd(1, 2, 5, 12),
         fns=["efficient", "cudnn"], seed=149)
    attn("sdpa_float32_grouped_query", f, T([1, 4, 3, 8]), T([1, 2, 5, 8]), T([1, 2, 5, 8]), fns=ALL, seed=140)
    attn("sdpa_float32_batch1_heads1", f, T([1, 1, 1, 8]), T([1, 1, 1, 8]), T([1, 1, 1, 8]), seed=141)
    attn("sdpa_float32_padding_mask_row", f, T([2, 2, 3, 8]), T([2, 2, 5, 8]), T([2, 2, 5, 8]),
         bias=T([2, 1, 1, 5]), seed=142)
    attn("sdpa_float32_bias_expanded_stride0", f, T([2, 2, 3, 8]), T([2, 2, 5, 8]), T([2, 2, 5, 8]),
         bias=dict(sizes=[2, 2, 3, 5], strides=[5, 0, 0, 1]), seed=143)
    attn("sdpa_float32_bias_strided_view", f, T([1, 2, 3, 8]), T([1, 2, 5, 8]), T([1, 2, 5, 8]),
         bias=dict(sizes=[1, 2, 3, 5], strides=[48, 24, 8, 1]), seed=144)
    attn("sdpa_float32_bias_float_fully_masked_rows", f, T([1, 2, 4, 8]), T([1, 2, 5, 8]), T([1, 2, 5, 8]),
         bias=dict(sizes=[1, 2, 4, 5], masked_rows=[1, 3]), seed=145)
    attn("sdpa_float32_bool_mask_fully_masked_row", f, T([1, 1, 4, 8]), T([1, 1, 5, 8]), T([1, 1, 5, 8]),
         bias=dict(sizes=[1, 1, 4, 5], dtype="bool", masked_rows=[2]), seed=146)
    attn("sdpa_float16_bias_float32", "float16", T([1, 2, 4, 8]), T([1, 2, 5, 8]), T([1, 2, 5, 8]),
         bias=dict(sizes=[1, 1, 4, 5], dtype="float32"), seed=147)
    # Query layouts that decide the output's strides (empty_like, cudnn's matching layout):
    # a permuted dense one, a size-1 dimension with an odd stride, a batch broadcast with
    # stride 0, a head-major [H, B, S, D] one.
    attn("sdpa_float32_query_permuted_dense", f, dict(sizes=[2, 3, 4, 8], strides=[8, 64, 16, 1]),
         T([2, 3, 5, 8]), T([2, 3, 5, 8]), fns=ALL, seed=150)
    attn("sdpa_float32_query_size1_head_odd_stride", f, dict(sizes=[2, 1, 4, 8], strides=[32, 7, 8, 1]),
         T([2, 1, 5, 8]), T([2, 1, 5, 8]), fns=ALL, seed=151)
    attn("sdpa_float32_query_batch_broadcast", f, dict(sizes=[2, 2, 3, 8], strides=[0, 24, 8, 1]),
         T([2, 2, 5, 8]), T([2, 2, 5, 8]), fns=ALL, seed=152)
    attn("sdpa_float32_query_head_major", f, dict(sizes=[2, 3, 4, 8], strides=[32, 64, 8, 1]),
         bshd(2, 3, 5, 8), bshd(2, 3, 5, 8), fns=ALL, seed=153)
    attn("sdpa_float32_no_queries", f, T([1, 2, 0, 8]), T([1, 2, 3, 8]), T([1, 2, 3, 8]), fns=ALL, seed=154)
    attn("sdpa_float32_many_query_tiles", f, T([2, 1, 37, 4]), T([2, 1, 45, 4]), T([2, 1, 45, 4]),
         bias=T([2, 1, 1, 45]), seed=148)


def meta_layouts(c, fn, specs, dtype):
    """Sizes and strides of the op's outputs, from PyTorch's meta function."""
    def meta(spec, dt):
        strides = spec.get("strides") or contiguous_strides(spec["sizes"])
        return torch.empty_strided(spec["sizes"], strides, dtype=dt, device="meta")
    dt = DTYPES[dtype]
    q, k, v = (meta(s, dt) for s in specs[:3])
    b = None
    if len(specs) > 3:
        bdt = specs[3].get("dtype")
        b = meta(specs[3], torch.bool if bdt == "bool" else DTYPES[bdt] if bdt else dt)
    r = META_OP[fn](q, k, v, b, c)
    return r


def attention_cases():
    out = []
    for a in ATTN:
        specs = [a["q"], a["k"], a["v"]] + ([a["bias"]] if a["bias"] else [])
        dt = a["dtype"]
        ts = [stored_operand(a["seed"], t, s) for t, s in enumerate(specs)]
        # The inputs as the op sees them: rounded to their dtype (the generated values are
        # exact in all of them; only the -inf of masked rows and bools are special).
        bias = None
        if a["bias"]:
            bdt = a["bias"].get("dtype")
            if bdt == "bool":
                bias = torch.where(ts[3] != 0, torch.zeros(1, dtype=torch.float64),
                                   torch.full((1,), float("-inf"), dtype=torch.float64))
            else:
                bias = rounded(ts[3], bdt or dt)
        q, k, v = (rounded(t, dt) for t in ts[:3])
        scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(q.shape[-1])
        ref, lse = attention_reference(q, k, v, bias, a["is_causal"], scale)
        # The reference is PyTorch's op: check it against the CPU kernel (float64 inputs;
        # a bool mask as PyTorch's SDPA hands it on, additive).
        # (PyTorch 2.11's CPU kernel dies with SIGFPE on zero query rows: not asked then.)
        if q.shape[-1] == v.shape[-1] and q.shape[2] > 0:
            got, got_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, k, v, 0.0, a["is_causal"], attn_mask=bias, scale=a["scale"])
            assert torch.allclose(got, ref, atol=1e-9, rtol=1e-9), a["name"]
            assert torch.allclose(got_lse, lse, atol=1e-9, rtol=1e-9), a["name"]
        if dt != "float32":
            ref = rounded(ref, dt)
        fns = [fn for fn in a["fns"] if fn != "flash" or (not a["bias"] and q.shape[-1] == v.shape[-1])]
        runs = [("flash_for_cpu", "cpu")] if q.shape[-1] == v.shape[-1] else []
        runs += [(fn, "cuda") for fn in fns]
        first = None
        for fn, dev in runs:
            c = dict(name=f"{a['name']}_{fn}_{dev}", op="attention", fn=fn, device=dev,
                     requires="none" if dev == "cpu" else "gpu", dtype=dt, seed=a["seed"], inputs=specs,
                     is_causal=a["is_causal"], compute_log_sumexp=True)
            if a["scale"] is not None:
                c["scale"] = a["scale"]
            r = meta_layouts(c, fn, specs, dt)
            c["expect"] = "Ok"
            c["expect_sizes"], c["expect_strides"] = list(r[0].shape), list(r[0].stride())
            c["lse_sizes"], c["lse_strides"] = list(r[1].shape), list(r[1].stride())
            # Values to 8 significant digits (far below every tolerance), once per scenario: the
            # other runs name the case that holds them (expected_from), keeping the file small.
            if first is None:
                first = c["name"]
                c["expected"] = short(ref)
                c["lse_expected"] = short(lse)
            else:
                c["expected_from"] = first
            c["atol"], c["rtol"] = ATTN_TOL[dt]
            out.append(c)
    # efficient without the logsumexp: [B, H, 0]
    for base in out:
        if base["fn"] == "efficient" and base["dtype"] == "float32":
            c = dict(base, name="sdpa_float32_efficient_no_logsumexp_cuda", compute_log_sumexp=False)
            r = meta_layouts(c, "efficient", c["inputs"], "float32")
            c["lse_sizes"], c["lse_strides"] = list(r[1].shape), list(r[1].stride())
            c["lse_expected"] = []
            c["expected"] = next(x for x in out if x["name"] == c.get("expected_from", c["name"]))["expected"]
            c.pop("expected_from", None)
            out.append(c)
            break
    return out


def attention_bad_cases():
    """Bad attention input (op attention_error): tensors [query, key, value, (bias)]; fn the op
    (the CPU op on the CPU, each CUDA op on CUDA); null names the handle passed as NULL."""
    f = "float32"
    out = []
    q, kv = [1, 2, 3, 8], [1, 2, 5, 8]
    ok = dict(sizes=[q, kv, kv], dtypes=[f, f, f])
    common = [
        ("null_query", dict(ok, null="query"), "InvalidArgument", "null query"),
        ("null_key", dict(ok, null="key"), "InvalidArgument", "null key"),
        ("null_value", dict(ok, null="value"), "InvalidArgument", "null value"),
        ("null_ret0", dict(ok, null="ret0"), "InvalidArgument", "null ret0"),
        ("dropout", dict(ok, dropout_p=0.1), "NotSupported", "dropout"),
        ("dropout_negative", dict(ok, dropout_p=-0.5), "InvalidArgument", "dropout_p"),
        ("float64", dict(ok, dtypes=["float64"] * 3), "NotSupported", "float64"),
        ("dtype_mismatch", dict(ok, dtypes=[f, "float16", f]), "InvalidArgument", "dtype"),
        ("query_3d", dict(ok, sizes=[[2, 3, 8], kv, kv]), "InvalidArgument", "4-D"),
        ("batch_mismatch", dict(ok, sizes=[[2, 2, 3, 8], kv, kv]), "InvalidArgument", "batch sizes differ"),
        ("heads_not_multiple", dict(ok, sizes=[[1, 3, 3, 8], kv, kv]), "InvalidArgument", "multiple"),
        ("kv_seq_mismatch", dict(ok, sizes=[q, kv, [1, 2, 4, 8]]), "InvalidArgument", "sequence length"),
        ("head_dim_mismatch", dict(ok, sizes=[[1, 2, 3, 16], kv, kv]), "InvalidArgument", "head dim"),
    ]
    with_bias = [
        ("bias_not_broadcastable", dict(sizes=[q, kv, kv, [1, 2, 3, 4]], dtypes=[f] * 4), "InvalidArgument",
         "broadcast"),
        ("bias_5d", dict(sizes=[q, kv, kv, [1, 1, 2, 3, 5]], dtypes=[f] * 4), "InvalidArgument", "dimensions"),
        ("bias_dtype", dict(sizes=[q, kv, kv, [1, 2, 3, 5]], dtypes=[f, f, f, "float16"]), "InvalidArgument",
         "dtype"),
    ]
    for dev, fns in [("cpu", ["flash_for_cpu"]), ("cuda", ["efficient", "flash", "cudnn"])]:
        for fn in fns:
            cases = list(common)
            if fn != "flash":
                cases += with_bias
            if fn in ("flash", "flash_for_cpu"):
                cases.append(("value_head_dim_differs", dict(ok, sizes=[q, kv, [1, 2, 5, 4]]), "InvalidArgument",
                              "value's head dim"))
            if fn in ("flash", "cudnn"):
                cases.append(("return_debug_mask", dict(ok, return_debug_mask=1), "NotSupported",
                              "return_debug_mask"))
            if fn == "efficient":
                cases.append(("head_dim_512", dict(ok, sizes=[[1, 1, 2, 512], [1, 1, 2, 512], [1, 1, 2, 512]]),
                              "NotSupported", "at most 256"))
            for name, d, code, msg in cases:
                out.append(dict(name=f"sdpa_{fn}_{name}_{dev}", op="attention_error", fn=fn, device=dev,
                                requires="none" if dev == "cpu" else "gpu", expect=code, message=msg, **d))
            if dev == "cuda":
                out.append(dict(name=f"sdpa_{fn}_cuda_given_cpu_tensors", op="attention_error", fn=fn, device=dev,
                                tensors_on="cpu", requires="none", expect="InvalidArgument", message="CPU tensor",
                                **ok))
    return out


# Cumulative ops (aoti_torch_cpu_cumsum / _cumprod, CPU only): the input's values are stored
# (integers and bools need exact ones), its layout given by sizes and strides (a transposed
# or permuted view of a storage just large enough).
CUMULATIVE_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                     "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}


def cumulative(name, fn, dtype, sizes, dim, out_dtype=None, strides=None, seed=1):
    n = numel(sizes)
    raw = [8 * v for v in values(seed, 0, n)]  # multiples of 1 in [-8, 8]
    if dtype == "bool":
        vals = [float(v >= 0) for v in raw]
    elif dtype.startswith("int"):
        vals = raw
    else:
        vals = [v / 8 for v in raw]
    x = torch.tensor(vals, dtype=torch.float64).reshape(sizes).to(CUMULATIVE_DTYPES[dtype])
    kw = {} if out_dtype is None else {"dtype": CUMULATIVE_DTYPES[out_dtype]}
    y = getattr(torch, fn)(x, dim, **kw)
    got_dtype = [k for k, v in CUMULATIVE_DTYPES.items() if v == y.dtype][0]
    c = {"name": name + "_cpu", "op": "cumulative", "fn": fn, "dtype": dtype, "sizes": list(sizes),
         "input_values": vals, "dim": dim, "device": "cpu", "requires": "none", "expect": "Ok",
         "expect_dtype": got_dtype, "expect_sizes": list(y.shape), "expected": flat(y.to(torch.float64))}
    if strides is not None:
        c["strides"] = strides
    if out_dtype is not None:
        c["out_dtype"] = out_dtype
    exact = got_dtype in ("int64", "int32", "bool")
    c["atol"], c["rtol"] = (0.0, 0.0) if exact else TOL.get(got_dtype, (1e-12, 1e-12))
    return c


def cumulative_cases():
    return [
        cumulative("cumsum_float32_3x5_dim1", "cumsum", "float32", [3, 5], 1),
        cumulative("cumsum_float32_3x5_dim0", "cumsum", "float32", [3, 5], 0, seed=2),
        cumulative("cumsum_float32_4x3_transposed_dim_minus1", "cumsum", "float32", [4, 3], -1, strides=[1, 4],
                   seed=3),
        cumulative("cumsum_float32_2x3x4_permuted_dim1", "cumsum", "float32", [2, 3, 4], 1, strides=[1, 8, 2],
                   seed=4),
        cumulative("cumsum_int64_2x6_dtype_int64", "cumsum", "int64", [2, 6], -1, out_dtype="int64", seed=5),
        cumulative("cumsum_int64_2x6_to_float32", "cumsum", "int64", [2, 6], 1, out_dtype="float32", seed=6),
        cumulative("cumsum_bool_2x5_is_int64", "cumsum", "bool", [2, 5], 1, seed=7),
        cumulative("cumsum_int32_3x4_is_int64", "cumsum", "int32", [3, 4], 0, seed=8),
        cumulative("cumsum_float32_to_float64", "cumsum", "float32", [2, 7], 1, out_dtype="float64", seed=9),
        cumulative("cumsum_bfloat16_2x16", "cumsum", "bfloat16", [2, 16], 1, seed=10),
        cumulative("cumsum_float16_2x16", "cumsum", "float16", [2, 16], 1, seed=11),
        cumulative("cumsum_float32_0d", "cumsum", "float32", [], 0, seed=12),
        cumulative("cumsum_float32_empty_0x3", "cumsum", "float32", [0, 3], 1, seed=13),
        cumulative("cumprod_float32_2x6_dim1", "cumprod", "float32", [2, 6], 1, seed=19),
        cumulative("cumprod_int64_4x2_dim0", "cumprod", "int64", [4, 2], 0, seed=15),
    ]


def cumulative_bad_cases():
    def bad(name, expect, message, **kw):
        c = {"name": name + "_cpu", "op": "cumulative_error", "fn": kw.pop("fn", "cumsum"), "device": "cpu",
             "requires": "none", "dtype": "float32", "sizes": [2, 3], "dim": 1, "expect": expect, "message": message}
        c.update(kw)
        return c
    return [
        bad("cumsum_dim_past_rank", "InvalidArgument", "dim 2 is out of range for a 2-d tensor", dim=2),
        bad("cumsum_dim_below_minus_rank", "InvalidArgument", "dim -3 is out of range", dim=-3),
        bad("cumprod_0d_dim_1", "InvalidArgument", "dim 1 is out of range for a 0-d tensor", fn="cumprod", sizes=[]),
        bad("cumsum_unknown_dtype", "InvalidArgument", "unknown dtype 99", out_dtype_code=99),
        bad("cumsum_null_self", "InvalidArgument", "null self", null="self"),
        bad("cumsum_null_ret0", "InvalidArgument", "null ret0", null="ret0"),
    ]


# Embedding bags (aoti_torch_<device>__embedding_bag[_forward_only]): weight values are
# stored (multiples of 1/8 in [-1, 1] from `values`, so max mode meets ties), indices and
# offsets as integers. The CPU case's expected outputs are PyTorch's CPU kernel's, in the
# case's dtype. The CUDA case's follow ATen's CUDA kernel (aten/src/ATen/native/cuda/
# EmbeddingBag.cu, read for PyTorch 2.11; this generator runs without a GPU): the output as
# PyTorch computes it in float64 (bag 0 from index 0, the last bag to n), rounded to the
# dtype; offset2bag [n]; bag_size [len(offsets)] with every mode's non-padding counts (the
# extra entry with include_last_offset, uninitialized in ATen, is 0 in slimcuda);
# max_indices [B, D] with -1 for an empty bag (max mode), else [0].
INDEX_DTYPES = {"int32": torch.int32, "int64": torch.int64}


def bag_weight(seed, sizes, dtype):
    vals = values(seed, 0, numel(sizes))
    return vals, torch.tensor(vals, dtype=torch.float64).reshape(sizes).to(DTYPES_ALL[dtype])


DTYPES_ALL = dict(DTYPES, float64=torch.float64)


def bag_tensors(c, dtype=None):
    _, w = bag_weight(c["seed"], c["weight_sizes"], dtype or c["dtype"])
    if c.get("weight_layout") == "transposed":
        w = w.t().contiguous().t()  # column-major storage: rows not contiguous
    idx = strided(torch.tensor(c["indices"], dtype=INDEX_DTYPES[c["index_dtype"]]), c.get("indices_stride", 1))
    off = torch.tensor(c["offsets"], dtype=INDEX_DTYPES[c["offset_dtype"]])
    psw = None
    if "psw_values" in c:
        psw = strided(torch.tensor(c["psw_values"], dtype=torch.float64).to(w.dtype), c.get("psw_stride", 1))
    return w, idx, off, psw


def strided(x, step):
    """x as a 1-D view with element stride `step` (of a storage step times as long)."""
    if step == 1:
        return x
    base = torch.zeros(max(len(x) * step, 1), dtype=x.dtype)
    view = base[::step][:len(x)]
    view.copy_(x)
    return view


def bag_call(c, w, idx, off, psw):
    fn = torch.ops.aten._embedding_bag_forward_only if c["fn"] == "forward_only" else torch.ops.aten._embedding_bag
    return fn(w, idx, off, False, c["mode"], False, psw, bool(c["include_last_offset"]), c["padding_idx"])


def bag_cuda_expected(c):
    w, idx, off, psw = bag_tensors(c, "float64")
    if len(c["offsets"]) - c["include_last_offset"] == 0:
        # No bag (PyTorch's float64 CPU kernel crashes on this): an empty output, no index in a bag.
        out, o2b, maxi = torch.zeros(0, w.shape[1], dtype=torch.float64), torch.full([len(c["indices"])], -1), None
    else:
        out, o2b, _, maxi = bag_call(c, w, idx, off, psw)
    n, pad, b = len(c["indices"]), c["padding_idx"], out.shape[0]
    offs = c["offsets"]
    sizes = [0] * len(offs)
    for k in range(b):
        lo = 0 if k == 0 else offs[k]
        hi = offs[k + 1] if k + 1 < b else n
        sizes[k] = sum(1 for i in range(lo, hi) if c["indices"][i] != pad)
    out = out.to(DTYPES_ALL[c["dtype"]]).to(torch.float64)
    if c["mode"] == 2 and maxi is None:
        maxi_v, maxi_s = [], [0, w.shape[1]]
    elif c["mode"] == 2:
        maxi = maxi.clone()
        for k in range(b):
            if sizes[k] == 0:
                maxi[k] = -1
        maxi_v, maxi_s = [int(v) for v in maxi.reshape(-1).tolist()], list(maxi.shape)
    else:
        maxi_v, maxi_s = [], [0]
    o2b_v = [int(v) for v in o2b.tolist()] if o2b.numel() == n else [-1] * n
    return {"output": flat(out), "output_sizes": list(out.shape), "offset2bag": o2b_v, "offset2bag_sizes": [n],
            "bag_size": sizes, "bag_size_sizes": [len(offs)], "max_indices": maxi_v, "max_indices_sizes": maxi_s}


def bag_cpu_expected(c):
    out, o2b, bs, maxi = bag_call(c, *bag_tensors(c))
    ints = lambda t: [int(v) for v in t.reshape(-1).tolist()]
    return {"output": flat(out.to(torch.float64)), "output_sizes": list(out.shape), "offset2bag": ints(o2b),
            "offset2bag_sizes": list(o2b.shape), "bag_size": ints(bs), "bag_size_sizes": list(bs.shape),
            "max_indices": ints(maxi), "max_indices_sizes": list(maxi.shape)}


def bag(name, dtype, weight_sizes, indices, offsets, mode, ilo=False, pad=-1, psw=None, index_dtype="int64",
        offset_dtype="int64", fn="embedding_bag", layout=None, strides=None, seed=1):
    out = []
    for dev in ["cpu", "cuda"]:
        c = {"name": f"{name}_{dev}", "op": "embedding_bag", "fn": fn, "device": dev,
             "requires": "none" if dev == "cpu" else "gpu", "dtype": dtype, "seed": seed,
             "weight_sizes": weight_sizes, "indices": indices, "offsets": offsets, "index_dtype": index_dtype,
             "offset_dtype": offset_dtype, "mode": mode, "include_last_offset": int(ilo), "padding_idx": pad,
             "expect": "Ok"}
        c["weight_values"] = bag_weight(seed, weight_sizes, dtype)[0]
        if layout:
            c["weight_layout"] = layout
        if psw is not None:
            c["psw_values"] = psw
        if strides:
            c["indices_stride"], c["psw_stride"] = strides
        c.update(bag_cpu_expected(c) if dev == "cpu" else bag_cuda_expected(c))
        c["expect_index_dtype"] = "int64" if "int64" in (index_dtype, offset_dtype) else "int32"
        c["atol"], c["rtol"] = TOL.get(dtype, (1e-12, 1e-12))
        out.append(c)
    return out


def bag_cuda_clamped(name, mode, indices, offsets, weight_sizes=(6, 3), seed=20):
    """A CUDA-only case with out-of-range indices, which ATen's CUDA kernel stops the context
    on and slimcuda's skips: an invalid entry reads nothing, counts for nothing and is -1 in
    offset2bag. The expected values are those rules applied in float64 (not PyTorch's)."""
    vals, w = bag_weight(seed, list(weight_sizes), "float32")
    w = w.to(torch.float64)
    n, nw, dim, bags = len(indices), weight_sizes[0], weight_sizes[1], len(offsets)
    out, o2b, sizes = [[0.0] * dim for _ in range(bags)], [-1] * n, [0] * bags
    maxi = [[-1] * dim for _ in range(bags)]
    for b in range(bags):
        lo, hi = (0 if b == 0 else offsets[b]), (offsets[b + 1] if b + 1 < bags else n)
        for i in range(lo, hi):
            x = indices[i]
            if not 0 <= x < nw:
                continue
            o2b[i] = b
            for d in range(dim):
                v = float(w[x, d])
                if mode != 2:
                    out[b][d] += v
                elif sizes[b] == 0 or v > out[b][d]:
                    out[b][d], maxi[b][d] = v, x
            sizes[b] += 1
        if mode == 1 and sizes[b]:
            out[b] = [v / sizes[b] for v in out[b]]
    c = {"name": name + "_cuda", "op": "embedding_bag", "fn": "embedding_bag", "device": "cuda", "requires": "gpu",
         "dtype": "float32", "seed": seed, "weight_sizes": list(weight_sizes), "weight_values": vals,
         "indices": indices, "offsets": offsets, "index_dtype": "int64", "offset_dtype": "int64", "mode": mode,
         "include_last_offset": 0, "padding_idx": -1, "expect": "Ok", "output": [v for row in out for v in row],
         "output_sizes": [bags, dim], "offset2bag": o2b, "offset2bag_sizes": [n], "bag_size": sizes,
         "bag_size_sizes": [bags], "max_indices": [v for row in maxi for v in row] if mode == 2 else [],
         "max_indices_sizes": [bags, dim] if mode == 2 else [0], "expect_index_dtype": "int64",
         "atol": TOL["float32"][0], "rtol": TOL["float32"][1]}
    return [c]


def embedding_bag_cases():
    idx7 = [1, 4, 4, 0, 9, 2, 4]
    cases = []
    for mode, m in [(0, "sum"), (1, "mean"), (2, "max")]:
        cases += bag(f"embedding_bag_{m}_float32_empty_bag", "float32", [10, 5], idx7, [0, 3, 3, 5], mode, seed=2)
        cases += bag(f"embedding_bag_{m}_float32_padding_idx", "float32", [10, 5], idx7, [0, 2, 4, 6], mode, pad=4,
                     seed=3)
        cases += bag(f"embedding_bag_{m}_float32_include_last_offset", "float32", [10, 5], idx7, [0, 2, 5, 7], mode,
                     ilo=True, seed=4)
    cases += [
        *bag("embedding_bag_sum_float32_include_last_offset_short", "float32", [10, 3], idx7, [0, 2, 5], 0, ilo=True,
             seed=5),
        *bag("embedding_bag_mean_float32_include_last_offset_short", "float32", [10, 3], idx7, [0, 2, 5], 1,
             ilo=True, seed=5),
        *bag("embedding_bag_sum_float32_per_sample_weights", "float32", [10, 4], idx7, [0, 3, 5], 0,
             psw=[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 1.0], seed=6),
        *bag("embedding_bag_sum_float32_per_sample_weights_padding", "float32", [10, 4], idx7, [0, 3, 5], 0, pad=4,
             psw=[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 1.0], seed=6),
        *bag("embedding_bag_mean_int32_indices_int32_offsets", "float32", [10, 4], idx7, [0, 1, 5], 1,
             index_dtype="int32", offset_dtype="int32", seed=7),
        *bag("embedding_bag_max_int32_indices_int64_offsets", "float32", [10, 4], idx7, [0, 1, 5], 2,
             index_dtype="int32", seed=8),
        *bag("embedding_bag_sum_int64_indices_int32_offsets", "float32", [10, 4], idx7, [0, 4], 0,
             offset_dtype="int32", seed=9),
        *bag("embedding_bag_sum_float16", "float16", [10, 6], idx7, [0, 3, 3, 5], 0, seed=10),
        *bag("embedding_bag_mean_float16", "float16", [10, 6], idx7, [0, 3, 3, 5], 1, seed=11),
        *bag("embedding_bag_max_bfloat16", "bfloat16", [10, 6], idx7, [0, 3, 3, 5], 2, seed=12),
        *bag("embedding_bag_sum_bfloat16_per_sample_weights", "bfloat16", [10, 6], idx7, [0, 3, 5], 0,
             psw=[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 1.0], seed=13),
        *bag("embedding_bag_sum_float64", "float64", [10, 3], idx7, [0, 3, 5], 0, seed=14),
        *bag("embedding_bag_sum_float32_transposed_weight", "float32", [10, 3], idx7, [0, 3, 5], 0,
             layout="transposed", seed=15),
        *bag("embedding_bag_max_float32_no_indices", "float32", [10, 3], [], [0, 0], 2, seed=16),
        *bag("embedding_bag_mean_float32_no_bags", "float32", [10, 3], [3, 1], [], 1, seed=17),
        *bag("embedding_bag_forward_only_mean", "float32", [10, 4], idx7, [0, 3, 5], 1, fn="forward_only", seed=18),
        *bag("embedding_bag_forward_only_sum", "float32", [10, 4], idx7, [0, 3, 5], 0, fn="forward_only", seed=19),
        # Strided per_sample_weights (ATen's slow path: offset2bag filled). Strided indices only
        # in max mode: PyTorch 2.11's CPU fast sum/mean path reads them as if contiguous.
        *bag("embedding_bag_sum_float32_strided_per_sample_weights", "float32", [10, 4], idx7, [0, 3, 5], 0,
             psw=[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 1.0], strides=(1, 3), seed=21),
        *bag("embedding_bag_max_int32_strided_indices", "float32", [10, 4], idx7, [0, 3, 5], 2, index_dtype="int32",
             strides=(3, 1), seed=22),
        *bag_cuda_clamped("embedding_bag_sum_out_of_range_indices_clamped", 0, [1, 6, 4, -3, 2, 1000000], [0, 2, 4]),
        *bag_cuda_clamped("embedding_bag_max_out_of_range_indices_clamped", 2, [-1, 6, 4, 5, 2], [0, 2, 3]),
    ]
    return cases


def embedding_bag_bad_cases():
    base = {"op": "embedding_bag_error", "fn": "embedding_bag", "dtype": "float32", "weight_sizes": [6, 3],
            "indices": [1, 2, 5], "offsets": [0, 2], "index_dtype": "int64", "offset_dtype": "int64", "mode": 0,
            "include_last_offset": 0, "padding_idx": -1}

    def bad(name, expect, message, dev="cpu", **kw):
        c = dict(base, name=f"{name}_{dev}", device=dev, requires="none" if dev == "cpu" else "gpu", expect=expect,
                 message=message)
        c.update(kw)
        return c
    out = [
        bad("embedding_bag_null_weight", "InvalidArgument", "null weight", null="weight"),
        bad("embedding_bag_null_indices", "InvalidArgument", "null indices", null="indices"),
        bad("embedding_bag_null_offsets", "InvalidArgument", "null offsets", null="offsets"),
        bad("embedding_bag_null_ret0", "InvalidArgument", "null ret0", null="ret0"),
        bad("embedding_bag_null_ret3", "InvalidArgument", "null ret3", null="ret3"),
        bad("embedding_bag_mode_3", "InvalidArgument", "mode 3 is not", mode=3),
        bad("embedding_bag_weight_1d", "InvalidArgument", "weight has to be a 2-D tensor", weight_sizes=[6]),
        bad("embedding_bag_weight_int64", "NotSupported", "weight dtype", dtype="int64"),
        bad("embedding_bag_indices_float32", "InvalidArgument", "int32 or int64", index_dtype="float32"),
        bad("embedding_bag_indices_2d", "InvalidArgument", "indices has to be a 1-D tensor", indices_sizes=[1, 3]),
        bad("embedding_bag_offsets_2d", "InvalidArgument", "offsets has to be a 1-D tensor", offsets_sizes=[1, 2]),
        bad("embedding_bag_per_sample_weights_mean", "InvalidArgument", "only supported with mode='sum'", mode=1,
            psw_values=[1.0, 1.0, 1.0]),
        bad("embedding_bag_per_sample_weights_length", "InvalidArgument", "one weight per index",
            psw_values=[1.0, 1.0]),
        bad("embedding_bag_per_sample_weights_dtype", "InvalidArgument", "weight's dtype",
            psw_values=[1.0, 1.0, 1.0], psw_dtype="float64"),
        bad("embedding_bag_include_last_offset_no_offsets", "InvalidArgument", "at least one offset", offsets=[],
            include_last_offset=1),
        bad("embedding_bag_first_offset_not_0", "InvalidArgument", "offsets[0] has to be 0", offsets=[1, 2]),
        bad("embedding_bag_decreasing_offsets", "InvalidArgument", "non-decreasing", offsets=[0, 2, 1]),
        bad("embedding_bag_offset_past_n", "InvalidArgument", "can not be greater than", offsets=[0, 4]),
        bad("embedding_bag_index_past_num_weights", "InvalidArgument", "takes value 6 which is not in the valid range",
            indices=[1, 6, 2]),
        bad("embedding_bag_negative_index", "InvalidArgument", "takes value -1", indices=[1, -1, 2], mode=2),
    ]
    out += [
        bad("embedding_bag_cuda_given_cpu_tensors", "InvalidArgument", "is a CPU tensor", dev="cuda",
            tensors_on="cpu", requires="none"),
        bad("embedding_bag_cuda_mode_3", "InvalidArgument", "mode 3 is not", dev="cuda", mode=3),
        bad("embedding_bag_cuda_null_ret2", "InvalidArgument", "null ret2", dev="cuda", null="ret2"),
    ]
    for c in out:
        if c["expect"] == "InvalidArgument" and "takes value" in c["message"] or "offset" in c["name"] and \
                c["name"].startswith(("embedding_bag_first", "embedding_bag_decreasing", "embedding_bag_offset_past")):
            # The same input PyTorch refuses on the CPU (our messages are our own).
            try:
                w = torch.zeros(c["weight_sizes"])
                torch.ops.aten._embedding_bag(w, torch.tensor(c["indices"]), torch.tensor(c["offsets"]), False,
                                              c["mode"], False, None, False, -1)
                raise SystemExit(f"{c['name']}: PyTorch accepts it")
            except RuntimeError:
                pass
    return out


# --- sorting and searching: sort / sort_stable, topk, histc, searchsorted, bucketize -------

# The sort family's cases carry their inputs' values (row-major over the logical sizes),
# from `values` with NaN / infinities placed where a case says; non-finite values are the
# strings "nan", "inf", "-inf" (JSON has no such numbers).
SORT_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
               "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "int16": torch.int16,
               "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}


def enc(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def sort_values(seed, n, dtype, specials=None, levels=None):
    """n values for dtype: multiples of 1/8 in [-1, 1] (integers: of 1 in [-8, 8]; bool:
    v >= 0); levels quantizes them to that many values (more ties); specials {index: value}."""
    raw = values(seed, 0, n)
    if levels:
        raw = [round(v * (levels // 2)) / (levels // 2) for v in raw]
    if dtype == "bool":
        out = [float(v >= 0) for v in raw]
    elif dtype.startswith("int"):
        out = [8 * v for v in raw]
    elif dtype == "uint8":
        out = [8 * v + 8 for v in raw]
    else:
        out = list(raw)
    for i, v in (specials or {}).items():
        out[i] = v
    return out


def strided_tensor(vals, sizes, strides, dtype):
    """A view with these sizes and strides over a storage just large enough, holding vals
    in row-major order (as the tests build it)."""
    x = torch.tensor(vals, dtype=torch.float64).reshape(sizes).to(SORT_DTYPES[dtype])
    if strides is None:
        return x
    span = 1 + sum((sz - 1) * st for sz, st in zip(sizes, strides)) if all(sizes) else 0
    base = torch.zeros(max(span, 1), dtype=SORT_DTYPES[dtype])
    v = base.as_strided(sizes, strides)
    v.copy_(x)
    return v


def same_values(a, b):
    a, b = a.to(torch.float64), b.to(torch.float64)
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


def per_device(c):
    out = []
    for dev in ["cpu", "cuda"]:
        d = dict(c, name=c["name"] + "_" + dev, device=dev, requires="none" if dev == "cpu" else "gpu")
        out.append(d)
    return out


def sort_case(name, dtype, sizes, dim, fn="sort", descending=False, k=None, largest=True, sorted_=True,
              strides=None, seed=1, specials=None, levels=None):
    n = numel(sizes)
    vals = sort_values(seed, n, dtype, specials, levels)
    x = strided_tensor(vals, sizes, strides, dtype)
    c = {"name": name, "op": "sort", "fn": fn, "dtype": dtype, "sizes": list(sizes),
         "input_values": [enc(v) for v in vals], "dim": dim, "expect": "Ok"}
    if strides is not None:
        c["strides"] = strides
    if fn == "topk":
        c.update(k=k, largest=int(largest), sorted=int(sorted_))
        got = torch.topk(x, k, dim, largest=largest, sorted=True)
        # Ties: ATen's topk leaves their order open; slimcuda keeps input order, which is a
        # stable sort's, and the values must be ATen's either way.
        ref = torch.sort(x, dim=dim, descending=largest, stable=True)
        want_v = ref.values.narrow(dim, 0, k) if x.dim() > 0 else ref.values
        want_i = ref.indices.narrow(dim, 0, k) if x.dim() > 0 else ref.indices
        assert same_values(got.values, want_v), name
        values_t, indices_t = want_v, want_i
    else:
        c["descending"] = int(descending)
        got = torch.sort(x, dim=dim, descending=descending, stable=True)
        if fn == "sort":  # the unstable API: same values; slimcuda's ties stay in input order
            assert same_values(torch.sort(x, dim=dim, descending=descending).values, got.values), name
        else:
            c["stable"] = 1
        values_t, indices_t = got.values, got.indices
        c["expect_strides"] = list(got.values.stride())
        assert got.indices.stride() == got.values.stride()
    c["expect_sizes"] = list(values_t.shape)
    c["expected"] = [enc(v) for v in values_t.to(torch.float64).contiguous().reshape(-1).tolist()]
    c["expected_indices"] = [int(v) for v in indices_t.contiguous().reshape(-1).tolist()]
    return per_device(c)


def histc_case(name, dtype, sizes, bins, lo, hi, strides=None, seed=1, specials=None, vals=None, devices=None):
    n = numel(sizes)
    vals = vals if vals is not None else sort_values(seed, n, dtype, specials)
    x = strided_tensor(vals, sizes, strides, dtype)
    y = torch.histc(x, bins, lo, hi)
    c = {"name": name, "op": "histc", "dtype": dtype, "sizes": list(sizes), "input_values": [enc(v) for v in vals],
         "bins": bins, "min": lo, "max": hi, "expect": "Ok", "expect_sizes": list(y.shape),
         "expected": [float(v) for v in y.to(torch.float64).tolist()]}
    if strides is not None:
        c["strides"] = strides
    return per_device(c)


def histc_cuda_integral(x, bins, lo, hi):
    """ATen's CUDA histc over an integer tensor (SummaryOps.cu; its CPU histc refuses integers,
    so PyTorch cannot compute these on a machine without a GPU): integer bounds (Scalar::to,
    toward zero; the data's min and max when equal and the tensor is not empty; equal ones
    widened by one), v in [lo, hi] counted in bin (v - lo) * bins // (hi - lo) in int64, hi in
    the last bin; the counts in the input's dtype. torch.histc on the GPU machine checks the
    expected values (tools/gpu: histc_integral_check.py)."""
    lo, hi = int(lo), int(hi)
    v = x.to(torch.int64).reshape(-1)
    if lo == hi and v.numel() > 0:
        lo, hi = int(v.min()), int(v.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    v = v[(v >= lo) & (v <= hi)]
    b = ((v - lo) * bins // (hi - lo)).clamp(max=bins - 1)
    return torch.bincount(b, minlength=bins).to(x.dtype)


def histc_integral_case(name, dtype, sizes, bins, lo, hi, strides=None, seed=1, vals=None):
    """A CUDA-only histc case over an integer dtype (histc_cuda_integral)."""
    n = numel(sizes)
    vals = vals if vals is not None else sort_values(seed, n, dtype)
    x = strided_tensor(vals, sizes, strides, dtype)
    y = histc_cuda_integral(x, bins, lo, hi)
    c = {"name": name + "_cuda", "op": "histc", "dtype": dtype, "sizes": list(sizes),
         "input_values": [enc(v) for v in vals], "bins": bins, "min": lo, "max": hi, "expect": "Ok",
         "expect_sizes": list(y.shape), "expected": [float(v) for v in y.to(torch.float64).tolist()],
         "device": "cuda", "requires": "gpu", "rule": "aten_cuda_integral"}
    if strides is not None:
        c["strides"] = strides
    return [c]


def search_operand(vals, sizes, dtype, strides=None):
    d = {"dtype": dtype, "sizes": list(sizes), "values": [enc(v) for v in vals]}
    if strides is not None:
        d["strides"] = strides
    return d


def search_case(name, fn, seq, self=None, scalar=None, out_int32=0, right=0, side=None, sorter=None):
    """seq/self: (values, sizes, dtype[, strides]); sorter: int64 values of seq's sizes."""
    st = strided_tensor(seq[0], seq[1], seq[3] if len(seq) > 3 else None, seq[2])
    kw = dict(out_int32=bool(out_int32), right=bool(right))
    c = {"name": name, "op": "searchsorted", "fn": fn, "seq": search_operand(*seq), "out_int32": out_int32,
         "right": right, "expect": "Ok"}
    if side is not None:
        c["side"] = side
        kw["side"] = side
    if sorter is not None:
        c["sorter"] = sorter
        kw["sorter"] = torch.tensor(sorter, dtype=torch.int64).reshape(seq[1])
    if fn == "searchsorted_Scalar":
        c["scalar"] = scalar
        y = torch.searchsorted(st, scalar, **kw)
    else:
        sx = strided_tensor(self[0], self[1], self[3] if len(self) > 3 else None, self[2])
        c["self"] = search_operand(*self)
        if fn == "bucketize":
            y = torch.bucketize(sx, st, out_int32=bool(out_int32), right=bool(right))
        else:
            y = torch.searchsorted(st, sx, **kw)
    c["expect_dtype"] = "int32" if out_int32 else "int64"
    assert y.dtype == (torch.int32 if out_int32 else torch.int64)
    c["expect_sizes"] = list(y.shape)
    c["expected"] = [int(v) for v in y.reshape(-1).tolist()]
    return per_device(c)


def sort_family_cases():
    f = "float32"
    nan, inf = float("nan"), float("inf")
    specials = {1: nan, 3: inf, 4: -inf, 6: -0.0, 7: 0.0, 9: nan, 10: -nan}
    out = []
    out += sort_case("sort_float32_3x6_dim1_ties", f, [3, 6], 1, levels=4, seed=201)
    out += sort_case("sort_float32_3x6_dim1_ties_descending", f, [3, 6], 1, descending=True, levels=4, seed=201)
    out += sort_case("sort_stable_float32_4x5_dim0_ties", f, [4, 5], 0, fn="sort_stable", levels=2, seed=202)
    out += sort_case("sort_stable_float32_4x5_dim0_descending", f, [4, 5], 0, fn="sort_stable", descending=True,
                     levels=2, seed=202)
    out += sort_case("sort_float32_nan_inf_signed_zero", f, [2, 6], -1, specials=specials, seed=203)
    out += sort_case("sort_float32_nan_inf_signed_zero_descending", f, [2, 6], -1, descending=True,
                     specials=specials, seed=203)
    out += sort_case("sort_float32_2x3x4_dim1", f, [2, 3, 4], 1, seed=204)
    out += sort_case("sort_float32_2x3x4_dim_minus3", f, [2, 3, 4], -3, seed=205)
    out += sort_case("sort_float32_transposed_keeps_strides", f, [4, 5], 1, strides=[1, 4], seed=206)
    out += sort_case("sort_float32_strided_slice_dense_out", f, [3, 4], 1, strides=[8, 2], seed=207)
    out += sort_case("sort_float32_permuted_3d_dim2", f, [2, 3, 4], 2, strides=[1, 8, 2], seed=208)
    for dt in ["float16", "bfloat16", "float64", "int32", "int64", "int16", "int8", "uint8", "bool"]:
        out += sort_case(f"sort_{dt}_2x7", dt, [2, 7], 1, seed=209)
        out += sort_case(f"sort_stable_{dt}_2x7_descending", dt, [2, 7], 1, fn="sort_stable", descending=True,
                         seed=210)
    out += sort_case("sort_float16_nan_inf", "float16", [2, 6], 1, specials=specials, seed=211)
    out += sort_case("sort_bfloat16_nan_inf_descending", "bfloat16", [2, 6], 1, descending=True,
                     specials=specials, seed=211)
    out += sort_case("sort_float64_nan_inf", "float64", [2, 6], 1, specials=specials, seed=212)
    out += sort_case("sort_float32_0d", f, [], 0, seed=213)
    out += sort_case("sort_float32_empty_0x5", f, [0, 5], 1, seed=214)
    out += sort_case("sort_float32_empty_3x0", f, [3, 0], 1, seed=215)
    out += sort_case("sort_float32_one_long_row", f, [1, 300], 1, levels=8, seed=216)
    out += sort_case("topk_float32_3x8_k3_largest", f, [3, 8], 1, fn="topk", k=3, seed=221)
    out += sort_case("topk_float32_3x8_k3_smallest", f, [3, 8], 1, fn="topk", k=3, largest=False, seed=222)
    out += sort_case("topk_float32_6x4_k2_dim0", f, [6, 4], 0, fn="topk", k=2, seed=223)
    out += sort_case("topk_float32_2x3x5_k2_dim_minus1_ties", f, [2, 3, 5], -1, fn="topk", k=2, levels=4,
                     seed=224)
    out += sort_case("topk_float32_k0", f, [3, 4], 1, fn="topk", k=0, seed=225)
    out += sort_case("topk_float32_k_all", f, [3, 4], 1, fn="topk", k=4, seed=226)
    out += sort_case("topk_float32_nan_largest", f, [2, 6], 1, fn="topk", k=3, specials=specials, seed=227)
    out += sort_case("topk_float32_nan_smallest", f, [2, 6], 1, fn="topk", k=3, largest=False, specials=specials,
                     seed=227)
    out += sort_case("topk_float32_unsorted_is_sorted", f, [2, 8], 1, fn="topk", k=4, sorted_=False, seed=228)
    out += sort_case("topk_float32_transposed_input", f, [5, 4], 0, fn="topk", k=2, strides=[1, 5], seed=229)
    # A mixture-of-experts router: top-2 of 8 experts for 16 tokens.
    out += sort_case("topk_float32_router_16x8_k2", f, [16, 8], -1, fn="topk", k=2, seed=230)
    for dt in ["float16", "bfloat16", "float64", "int32", "int64", "int16", "int8", "uint8"]:
        out += sort_case(f"topk_{dt}_3x6_k2", dt, [3, 6], 1, fn="topk", k=2, seed=231)
    out += sort_case("topk_float32_0d_k1", f, [], 0, fn="topk", k=1, seed=232)
    out += sort_case("topk_float32_empty_rows", f, [0, 4], 1, fn="topk", k=2, seed=233)
    out += histc_case("histc_float32_20_bins4", f, [20], 4, -1.0, 1.0, seed=241)
    out += histc_case("histc_float32_range_from_data", f, [4, 5], 6, 0.0, 0.0, seed=242)
    out += histc_case("histc_float32_outside_and_nan_ignored", f, [12], 3, -0.5, 0.5,
                      specials={0: nan, 5: inf, 6: -inf}, seed=243)
    out += histc_case("histc_float32_max_in_last_bin", f, [5], 4, 0.0, 1.0, vals=[0.0, 0.25, 0.5, 1.0, 1.0])
    out += histc_case("histc_float32_transposed", f, [4, 5], 5, -1.0, 1.0, strides=[1, 4], seed=244)
    out += histc_case("histc_float32_constant_data", f, [6], 4, 0.0, 0.0, vals=[0.5] * 6)
    out += histc_case("histc_float32_empty", f, [0], 3, 0.0, 0.0)
    for dt in ["float64", "float16", "bfloat16"]:
        out += histc_case(f"histc_{dt}_bins8", dt, [3, 7], 8, -1.0, 1.0, seed=245)
    out += histc_case("histc_float16_range_from_data", "float16", [9], 3, 0.0, 0.0, seed=246)
    # Mixture-of-experts routers count tokens per expert: histc over int32 expert ids on CUDA.
    out += histc_integral_case("histc_int32_expert_ids", "int32", [16], 4, 0.0, 3.0,
                               vals=[float(i % 4) for i in range(7, 23)])
    out += histc_integral_case("histc_int64_bins5", "int64", [3, 7], 5, -6.0, 6.0, seed=247)
    out += histc_integral_case("histc_int32_range_from_data", "int32", [4, 5], 6, 0.0, 0.0, seed=248)
    out += histc_integral_case("histc_int16_transposed", "int16", [4, 5], 3, -8.0, 8.0, strides=[1, 4], seed=249)
    out += histc_integral_case("histc_uint8_fractional_bounds", "uint8", [12], 4, 2.5, 13.9, seed=250)
    out += histc_integral_case("histc_int8_constant_data", "int8", [5], 3, 0.0, 0.0, vals=[3.0] * 5)
    seq = ([-0.75, -0.5, -0.5, 0.0, 0.25, 0.75], [6], f)
    vals = ([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, nan, -0.5], [2, 5], f)
    out += search_case("searchsorted_float32_left", "searchsorted_Tensor", seq, vals)
    out += search_case("searchsorted_float32_right", "searchsorted_Tensor", seq, vals, right=1)
    out += search_case("searchsorted_float32_side_right_wins", "searchsorted_Tensor", seq, vals, side="right")
    out += search_case("searchsorted_float32_side_left", "searchsorted_Tensor", seq, vals, side="left")
    out += search_case("searchsorted_float32_out_int32", "searchsorted_Tensor", seq, vals, out_int32=1, right=1)
    unsorted = ([0.25, -0.5, 0.75, -0.75, 0.0, -0.5], [6], f)
    out += search_case("searchsorted_float32_sorter", "searchsorted_Tensor", unsorted, vals,
                       sorter=[3, 1, 5, 4, 0, 2])
    out += search_case("searchsorted_float32_sorter_right", "searchsorted_Tensor", unsorted, vals, right=1,
                       sorter=[3, 1, 5, 4, 0, 2])
    batched = ([-0.5, 0.0, 0.5, -1.0, -0.25, 0.0, 0.25, 1.0], [2, 4], f)
    out += search_case("searchsorted_float32_batched", "searchsorted_Tensor", batched,
                       ([0.0, 0.6, -0.6, 0.0, 1.0, -2.0], [2, 3], f))
    out += search_case("searchsorted_float32_batched_sorter", "searchsorted_Tensor",
                       ([0.5, -0.5, 0.0, 1.0, -1.0, 0.25, 0.0, -0.25], [2, 4], f),
                       ([0.0, 0.6, -0.6, 0.0, 1.0, -2.0], [2, 3], f), sorter=[1, 2, 0, 3, 0, 3, 2, 1])
    out += search_case("searchsorted_float32_values_transposed", "searchsorted_Tensor", seq,
                       ([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5], [2, 3], f, [1, 2]))
    out += search_case("searchsorted_float32_seq_strided", "searchsorted_Tensor",
                       ([-0.75, -0.5, 0.0, 0.75], [4], f, [2]), vals)
    out += search_case("searchsorted_int64", "searchsorted_Tensor", ([-3, 0, 0, 2, 7], [5], "int64"),
                       ([-4, 0, 1, 2, 7, 8], [6], "int64"), right=1)
    out += search_case("searchsorted_int32_seq_int64_values", "searchsorted_Tensor",
                       ([-3, 0, 2, 7], [4], "int32"), ([-4, 0, 1, 7, 8], [5], "int64"))
    out += search_case("searchsorted_int64_seq_float32_values", "searchsorted_Tensor",
                       ([-3, 0, 2, 7], [4], "int64"), ([-3.5, 0.0, 0.5, 7.0], [4], f))
    out += search_case("searchsorted_float64", "searchsorted_Tensor", ([0.1, 0.2, 0.3], [3], "float64"),
                       ([0.2, 0.25, 0.3], [3], "float64"), side="right")
    out += search_case("searchsorted_float16", "searchsorted_Tensor", ([-0.5, 0.0, 0.5], [3], "float16"),
                       ([0.0, 0.25, 0.5], [3], "float16"))
    out += search_case("searchsorted_bfloat16", "searchsorted_Tensor", ([-0.5, 0.0, 0.5], [3], "bfloat16"),
                       ([0.0, 0.25, 0.5], [3], "bfloat16"), right=1)
    out += search_case("searchsorted_0d_value", "searchsorted_Tensor", seq, ([0.25], [], f))
    out += search_case("searchsorted_empty_values", "searchsorted_Tensor", seq, ([], [0], f))
    out += search_case("searchsorted_empty_sequence", "searchsorted_Tensor", ([], [0], f), ([0.5, 1.0], [2], f))
    out += search_case("searchsorted_scalar_float32", "searchsorted_Scalar", seq, scalar=-0.5)
    out += search_case("searchsorted_scalar_right", "searchsorted_Scalar", seq, scalar=-0.5, right=1)
    out += search_case("searchsorted_scalar_int64_seq", "searchsorted_Scalar", ([1, 2, 3], [3], "int64"),
                       scalar=2.5)
    # 1.0004 rounds to 1.0 in float16 (the boundaries' dtype) before the search, as ATen.
    out += search_case("searchsorted_scalar_rounded_to_float16", "searchsorted_Scalar",
                       ([1.0, 2.0, 3.0], [3], "float16"), scalar=1.0004)
    out += search_case("searchsorted_scalar_sorter_side_right", "searchsorted_Scalar", unsorted, scalar=0.0,
                       side="right", sorter=[3, 1, 5, 4, 0, 2])
    out += search_case("bucketize_float32", "bucketize", seq, vals)
    out += search_case("bucketize_float32_right_int32", "bucketize", seq, vals, out_int32=1, right=1)
    out += search_case("bucketize_int64", "bucketize", ([0, 5, 10], [3], "int64"), ([-1, 0, 4, 5, 11], [5], "int64"))
    return out


def sort_family_bad_cases():
    f = "float32"
    out = []

    def bad(name, op, fn, expect, message, cpu_only=False, **kw):
        c = {"name": name, "op": op + "_error", "fn": fn, "dtype": kw.pop("dtype", f), "expect": expect,
             "message": message}
        c.update(kw)
        cases = per_device(c)
        return cases[:1] if cpu_only else cases

    out += bad("sort_dim_past_rank", "sort", "sort", "InvalidArgument", "dim 2 is out of range for a 2-d tensor",
               sizes=[2, 3], dim=2)
    out += bad("sort_0d_dim_1", "sort", "sort_stable", "InvalidArgument", "dim 1 is out of range for a 0-d tensor",
               sizes=[], dim=1)
    out += bad("sort_null_self", "sort", "sort", "InvalidArgument", "null self", sizes=[2, 3], dim=1, null="self")
    out += bad("sort_null_ret1", "sort", "sort", "InvalidArgument", "null ret1", sizes=[2, 3], dim=1, null="ret1")
    out += bad("topk_k_past_size", "sort", "topk", "InvalidArgument", "selected index k out of range",
               sizes=[2, 3], dim=1, k=4)
    out += bad("topk_negative_k", "sort", "topk", "InvalidArgument", "selected index k out of range",
               sizes=[2, 3], dim=1, k=-1)
    out += bad("topk_bool", "sort", "topk", "NotSupported", "bool", sizes=[4], dim=0, k=1, dtype="bool")
    out += bad("histc_bins_0", "histc", "histc", "InvalidArgument", "bins must be > 0", sizes=[4], bins=0, min=0.0,
               max=1.0)
    out += bad("histc_min_above_max", "histc", "histc", "InvalidArgument", "max must be larger than min", sizes=[4],
               bins=3, min=2.0, max=1.0)
    out += bad("histc_infinite_max", "histc", "histc", "InvalidArgument", "is not finite", sizes=[4], bins=3,
               min=0.0, max="inf")
    out += bad("histc_int64", "histc", "histc", "NotSupported", "int64", cpu_only=True, sizes=[4], bins=3, min=0.0,
               max=1.0, dtype="int64")
    out += bad("histc_bool", "histc", "histc", "NotSupported", "bool", sizes=[4], bins=3, min=0.0, max=1.0,
               dtype="bool")
    out += bad("histc_nan_data_range", "histc", "histc", "InvalidArgument", "is not finite", cpu_only=True,
               sizes=[3], bins=3, min=0.0, max=0.0, input_values=[0.5, "nan", 0.25])
    out += bad("histc_null_ret0", "histc", "histc", "InvalidArgument", "null ret0", sizes=[4], bins=3, min=0.0,
               max=1.0, null="ret0")
    s1 = {"dtype": f, "sizes": [4]}
    v1 = {"dtype": f, "sizes": [3]}
    out += bad("searchsorted_side_unknown", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "side can only be 'left' or 'right' but got mid", seq=s1, self=v1, side="mid")
    out += bad("searchsorted_right_with_side_left", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "side and right can't be set to opposites", seq=s1, self=v1, side="left", right=1)
    out += bad("searchsorted_sorter_int32", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "sorter must be a tensor of long dtype", seq=s1, self=v1, sorter={"dtype": "int32", "sizes": [4]})
    out += bad("searchsorted_sorter_size", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "boundary and sorter must have the same size", seq=s1, self=v1,
               sorter={"dtype": "int64", "sizes": [3]})
    out += bad("searchsorted_sorter_out_of_range", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "sorter index out of range", cpu_only=True, seq=s1, self=v1,
               sorter={"dtype": "int64", "sizes": [4], "values": [0, 1, 4, 2]})
    out += bad("searchsorted_0d_boundaries", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "positive dimension", seq={"dtype": f, "sizes": []}, self=v1)
    out += bad("searchsorted_scalar_2d_boundaries", "searchsorted", "searchsorted_Scalar", "InvalidArgument",
               "scalar only when boundaries tensor dimension is 1", seq={"dtype": f, "sizes": [2, 3]}, scalar=0.5)
    out += bad("searchsorted_leading_dims_differ", "searchsorted", "searchsorted_Tensor", "InvalidArgument",
               "first N-1 dimensions", seq={"dtype": f, "sizes": [2, 3]}, self={"dtype": f, "sizes": [3, 2]})
    out += bad("searchsorted_bool", "searchsorted", "searchsorted_Tensor", "NotSupported", "bool",
               seq={"dtype": "bool", "sizes": [2]}, self={"dtype": "bool", "sizes": [2]})
    out += bad("searchsorted_null_self", "searchsorted", "searchsorted_Tensor", "InvalidArgument", "null self",
               seq=s1, self=v1, null="self")
    out += bad("searchsorted_null_sequence", "searchsorted", "searchsorted_Scalar", "InvalidArgument",
               "null sorted_sequence", seq=s1, scalar=0.5, null="seq")
    out += bad("bucketize_2d_boundaries", "searchsorted", "bucketize", "InvalidArgument",
               "boundaries tensor must be 1 dimension, but got dim(2)", seq={"dtype": f, "sizes": [2, 2]}, self=v1)
    # CPU tensors into the CUDA ops: refused before any CUDA call (runs without a GPU).
    for op, fn, kw in [("sort", "sort", dict(sizes=[2, 3], dim=1)), ("sort", "topk", dict(sizes=[2, 3], dim=1, k=1)),
                       ("histc", "histc", dict(sizes=[4], bins=2, min=0.0, max=1.0)),
                       ("searchsorted", "searchsorted_Tensor", dict(seq=s1, self=v1)),
                       ("searchsorted", "bucketize", dict(seq=s1, self=v1))]:
        c = {"name": f"{fn}_cuda_given_cpu_tensors", "op": op + "_error", "fn": fn, "dtype": f, "device": "cuda",
             "tensors_on": "cpu", "requires": "none", "expect": "InvalidArgument", "message": "not a CUDA tensor"}
        c.update(kw)
        out.append(c)
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
    build_attention()
    cases += attention_cases()
    cases += attention_bad_cases()
    cases += cumulative_cases()
    cases += cumulative_bad_cases()
    cases += embedding_bag_cases()
    cases += embedding_bag_bad_cases()
    cases += sort_family_cases()
    cases += sort_family_bad_cases()
    doc = {
        "description": (
            "The ATen fallback ops (testdata/ops.json, written by tools/ops/make_op_fixtures.py with PyTorch "
            + torch.__version__.split("+")[0] + " on the CPU). op gemm: fn mm|addmm|bmm|baddbmm|addmm_activation "
            "(aoti_torch_<device>_<fn>_out, or _addmm_activation); op convolution: aoti_torch_<device>_convolution; "
            "each value case once per device (name suffix _cpu: the CPU reference, requires none; _cuda: the CUDA "
            "op, requires gpu). inputs, in the shim's argument order (gemm: [self] mat1 mat2; convolution: input "
            "weight [bias]): {sizes, strides (optional, element strides over a storage just large enough, zero "
            "filled), offset (optional: the view's storage offset in elements, zeros before it), fill: nan "
            "(optional)}; element j (row-major over sizes) of operand t is "
            "(splitmix64(seed * 1000003 + t * 7919 + j) % 17 - 8) / 8. out (gemm _out ops): {strides, offset} for the "
            "out tensor (default contiguous, offset 0), pre-filled with -7. expected: the result in row-major order, "
            "compared as |got - want| <= atol + rtol * |want| (float32 1e-5/1e-5 against a float64 reference, "
            "float16 1e-2/1e-2, bfloat16 5e-2/2e-2). GELU is exact (erf) on the CPU and tanh on CUDA, as ATen's "
            "kernels; the CUDA cases carry the tanh values. op gemm_error: bad input (sizes/dtypes per tensor, "
            "first the out or the convolution input; null names the handle passed as NULL; tensors_on cpu: "
            "CPU tensors into a CUDA op) -> expect (error name), message (a substring of the last error). "
            "op attention: fn efficient|flash|cudnn (aoti_torch_cuda__scaled_dot_product_<fn>_attention) or "
            "flash_for_cpu (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu); inputs query key value "
            "[bias] (the CPU op's attn_mask; dtype: bool or float32 when not the case's; a bool element is true "
            "where the generated value is >= -0.5; masked_rows: rows of dimension -2 set to -inf / false), "
            "written element by element in row-major order through their strides (a stride 0 aliases: the last "
            "write wins); is_causal, scale (absent: NULL), compute_log_sumexp. expect_sizes/expect_strides: the "
            "attention output's (PyTorch's meta function), lse_sizes/lse_strides the logsumexp's; expected the "
            "output in row-major order, lse_expected the logsumexp [B, H, Sq] row-major (of a longer last "
            "dimension only the first Sq are compared); expected_from: the case whose expected/lse_expected "
            "apply (same scenario, another op). op attention_error: bad attention input (sizes/dtypes of query, "
            "key, value[, bias]; null: query|key|value|ret0; dropout_p, return_debug_mask) -> expect, message. "
            "op cumulative: fn cumsum|cumprod (aoti_torch_cpu_<fn>, CPU only) of one input of dtype, sizes and "
            "strides (optional: element strides over a storage just large enough) holding input_values in "
            "row-major order, along dim, with out_dtype (absent: NULL); expect_dtype, expect_sizes and expected "
            "(row-major) the result, compared as above (integer results exactly). op cumulative_error: bad "
            "cumulative input (out_dtype_code: a raw dtype code; null: self|ret0) -> expect, message. "
            "op embedding_bag: fn embedding_bag|forward_only (aoti_torch_<device>__embedding_bag[_forward_only]) "
            "of weight (dtype, weight_sizes, weight_values row-major; weight_layout transposed: column-major "
            "storage), indices and offsets (index_dtype/offset_dtype int32|int64), mode (0 sum, 1 mean, 2 max), "
            "include_last_offset, padding_idx, psw_values (optional per_sample_weights); expected: output "
            "(row-major, compared with atol/rtol), offset2bag, bag_size, max_indices (exactly, dtype "
            "expect_index_dtype) with their *_sizes. CPU cases carry PyTorch's CPU kernel's outputs; CUDA cases "
            "those of ATen's CUDA kernel's rules (see make_op_fixtures.py; *_clamped: out-of-range indices, "
            "slimcuda's device-side clamping, no PyTorch value). op embedding_bag_error: bad input "
            "(null: weight|indices|offsets|ret0..ret3; indices_sizes/offsets_sizes: other shapes of zeros; "
            "psw_dtype; tensors_on cpu: CPU tensors into the CUDA op) -> expect, message. "
            "op sort: fn sort|sort_stable|topk (aoti_torch_<device>_<fn>) of one input (dtype, sizes, strides, "
            "input_values as for cumulative; non-finite numbers are the strings nan, inf, -inf) along dim, with "
            "descending (sort), k, largest, sorted (topk); expected (row-major values), expected_indices, "
            "expect_sizes and expect_strides (sort: ATen's meta strides; topk: contiguous), compared exactly (NaN "
            "equal to NaN). Ties: ATen leaves their order open for sort and topk, slimcuda keeps input order, so the "
            "expected indices are torch.sort(stable=True)'s (the values are checked against ATen's op). op histc: "
            "bins, min, max; expected the counts (rule aten_cuda_integral: an integer tensor on CUDA, counted by "
            "ATen's CUDA rule, which tools/gpu/histc_integral_check.py checks against torch.histc on a GPU). op searchsorted: fn searchsorted_Tensor|searchsorted_Scalar|"
            "bucketize, seq and self {dtype, sizes, strides, values}, scalar, out_int32, right, side (absent: NULL), "
            "sorter (absent: NULL; int64 values of seq's shape); expect_dtype, expect_sizes, expected. ops "
            "sort_error, histc_error, searchsorted_error: the same fields (a sorter as a tensor spec; null: "
            "self|seq|ret0|ret1; tensors_on cpu: CPU tensors into a CUDA op) -> expect, message. "
            "Read by csrc/ops/ops_fixtures_test.cc (C++) and go/internal/opsfixture/opsfixture_test.go (Go)."),
        "cases": cases,
    }
    out = json.dumps(doc, indent=None, separators=(",", ": "))
    # One case per line keeps diffs readable.
    out = out.replace('"cases": [{', '"cases": [\n  {').replace("}, {\"name\"", "},\n  {\"name\"")
    sys.stdout.write(out.replace(']}', ']\n}') if out.endswith(']}') else out)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
