#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/select_ops.json and testdata/unique_ops.json: the fixture cases of the
data-dependent selection ops.

select_ops.json: the C shims nonzero, nonzero_static, masked_select and index.Tensor
(aoti_torch_{cpu,cuda}_*), read by csrc/ops/select/select_ops_test.cc and
go/internal/opsfixture (both own it). unique_ops.json: aten::_unique2 and
aten::unique_consecutive, which exports reach through the proxy executor only (no C shim, so
Go cannot call them): read by csrc/ops/select/select_ops_test.cc alone.

Expected values come from PyTorch's CPU kernels; the CUDA cases expect the same values and
PyTorch's meta layouts for CUDA (what Inductor's generated code assumes).

Operands are generated from the case's seed as the other op fixtures do (element j of operand
t: v = (splitmix64(seed * 1000003 + t * 7919 + j) % 17 - 8) / 8), then: v = 0 where
|v| <= zero_within (when given: more zeros), and by dtype: floating v, signed integers 8 v,
uint8 8 |v|, bool v != 0. "fill" replaces every element (a number or "nan"), "values" lists
them row-major (numbers, "nan", "inf", "-inf"; -0.0 is negative zero). A spec's elements are
written one by one in row-major order through "strides" (default contiguous; where a stride of
0 aliases, the last write wins) into a zero-filled storage just large enough, after "offset"
leading zeros.
Usage: python3 tools/ops/make_select_fixtures.py testdata
"""
import json
import math
import os
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

MASK = (1 << 64) - 1
DT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
      "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
      "bool": torch.bool}
FLOATING = ("float32", "float64", "float16", "bfloat16")
ALL = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def num(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return float(v)


def enc(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def element_values(seed, t, spec):
    n = math.prod(spec["sizes"])
    if "values" in spec:
        assert len(spec["values"]) == n, spec
        return [num(v) for v in spec["values"]]
    if "fill" in spec:
        return [num(spec["fill"])] * n
    out = []
    zw = spec.get("zero_within")
    for j in range(n):
        v = ((splitmix64(seed * 1000003 + t * 7919 + j) % 17) - 8) / 8.0
        if zw is not None and abs(v) <= zw:
            v = 0.0
        dt = spec["dtype"]
        if dt in FLOATING:
            out.append(v)
        elif dt == "uint8":
            out.append(8 * abs(v))
        elif dt == "bool":
            out.append(1.0 if v != 0 else 0.0)
        else:
            out.append(8 * v)
    return out


def contiguous(sizes):
    s, acc = [], 1
    for x in reversed(sizes):
        s.append(acc)
        acc *= max(x, 1)
    return list(reversed(s))


def make(seed, t, spec):
    """The operand as the tests build it: a view over a zero-filled storage."""
    vals = element_values(seed, t, spec)
    sizes = spec["sizes"]
    dt = DT[spec["dtype"]]
    x = torch.tensor(vals, dtype=torch.float64).reshape(sizes).to(dt)
    strides = spec.get("strides", contiguous(sizes))
    offset = spec.get("offset", 0)
    span = 1 + sum((a - 1) * b for a, b in zip(sizes, strides)) if all(sizes) else 0
    base = torch.zeros(offset + max(span, 1), dtype=dt)
    flat_x = x.reshape(-1)
    # Element by element in row-major order: where a stride of 0 aliases, the last write wins.
    for j in range(flat_x.numel()):
        off, rest = offset, j
        for size, stride in zip(reversed(sizes), reversed(strides)):
            off += (rest % size) * stride
            rest //= size
        base[off] = flat_x[j]
    return base.as_strided(sizes, strides, offset)


def flat(x):
    return [enc(v) for v in x.to(torch.float64).reshape(-1).tolist()]


def per_device(c, devices=("cpu", "cuda")):
    out = []
    for dev in devices:
        out.append(dict(c, name=c["name"] + "_" + dev, device=dev, requires="none" if dev == "cpu" else "gpu"))
    return out


def T(dtype, sizes, **kw):
    return dict(dtype=dtype, sizes=list(sizes), **kw)


# ---- nonzero / nonzero_static ----

def nonzero_case(name, spec, seed, size=None, fill_value=None):
    x = make(seed, 0, spec)
    c = {"name": name, "op": "nonzero" if size is None else "nonzero_static", "seed": seed, "inputs": [spec],
         "expect": "Ok"}
    if size is None:
        y = torch.nonzero(x)
        rows = y.shape[0]
        strides = {"cpu": list(y.stride()), "cuda": [1, rows]}
        assert strides["cpu"] == [1, rows], (name, y.stride())  # PyTorch's fake: (1, nnz)
    else:
        c["size"] = size
        kw = {} if fill_value is None else {"fill_value": fill_value}
        c["fill_value"] = -1 if fill_value is None else fill_value
        y = torch.nonzero_static(x, size=size, **kw)
        strides = {"cpu": list(y.stride()), "cuda": [1, size]}
        assert strides["cpu"] == contiguous([size, x.dim()]), (name, y.stride())
    c["expect_sizes"] = list(y.shape)
    c["expected"] = [int(v) for v in y.reshape(-1).tolist()]
    out = []
    for d in per_device(c):
        d["expect_strides"] = strides[d["device"]]
        out.append(d)
    return out


def nonzero_cases():
    out = []
    for i, dt in enumerate(ALL):
        out += nonzero_case(f"nonzero_{dt}_3x4", T(dt, [3, 4], zero_within=0.375), 10 + i)
    f = "float32"
    out += nonzero_case("nonzero_transposed", T(f, [4, 3], strides=[1, 4], zero_within=0.375), 30)
    out += nonzero_case("nonzero_sliced_offset", T("int32", [3, 2], strides=[5, 2], offset=3, zero_within=0.25), 31)
    out += nonzero_case("nonzero_1d", T("int64", [9], zero_within=0.5), 32)
    out += nonzero_case("nonzero_3d", T("float16", [2, 3, 4], zero_within=0.5), 33)
    out += nonzero_case("nonzero_broadcast_stride0", T(f, [3, 4], strides=[0, 1], zero_within=0.375), 34)
    out += nonzero_case("nonzero_empty", T(f, [0, 3]), 35)
    out += nonzero_case("nonzero_all_false", T("bool", [2, 3], fill=0), 36)
    out += nonzero_case("nonzero_all_true", T("bool", [2, 2], fill=1), 37)
    out += nonzero_case("nonzero_0d_nonzero", T(f, [], fill=2.5), 38)
    out += nonzero_case("nonzero_0d_zero", T("int64", [], fill=0), 39)
    out += nonzero_case("nonzero_nan_negative_zero", T(f, [6], values=[0.0, -0.0, "nan", 1.0, "-inf", -0.0]), 40)
    out += nonzero_case("nonzero_bfloat16_negative_zero", T("bfloat16", [4], values=[-0.0, 0.5, 0.0, "nan"]), 41)
    # More than one CUB tile, scattered nonzeros.
    out += nonzero_case("nonzero_large_70x40", T(f, [70, 40], zero_within=0.75), 42)
    # nonzero_static: fewer rows than nonzeros, more (filled), none, on an empty input, 0-d.
    out += nonzero_case("nonzero_static_truncates", T(f, [3, 4], zero_within=0.25), 50, size=3)
    out += nonzero_case("nonzero_static_fills_default", T("int32", [2, 3], zero_within=0.5), 51, size=8)
    out += nonzero_case("nonzero_static_fills_99", T("bool", [5], zero_within=0.5), 52, size=6, fill_value=99)
    out += nonzero_case("nonzero_static_size_0", T(f, [3, 4]), 53, size=0)
    out += nonzero_case("nonzero_static_empty_input", T(f, [0, 2]), 54, size=3, fill_value=-5)
    out += nonzero_case("nonzero_static_0d", T("float16", [], fill=1), 55, size=2)
    out += nonzero_case("nonzero_static_transposed", T("int8", [4, 3], strides=[1, 4], zero_within=0.375), 56, size=7)
    out += nonzero_case("nonzero_static_large", T(f, [50, 50], zero_within=0.75), 57, size=400, fill_value=-2)
    return out


# ---- masked_select ----

def masked_case(name, self_spec, mask_spec, seed):
    x, m = make(seed, 0, self_spec), make(seed, 1, mask_spec)
    y = torch.masked_select(x, m)
    c = {"name": name, "op": "masked_select", "seed": seed, "inputs": [self_spec, mask_spec], "expect": "Ok",
         "expect_sizes": list(y.shape), "expected": flat(y), "dtype": self_spec["dtype"]}
    return per_device(c)


def masked_cases():
    out = []
    for i, dt in enumerate(ALL):
        out += masked_case(f"masked_select_{dt}", T(dt, [3, 4], zero_within=0.25), T("bool", [3, 4], zero_within=0.5),
                           60 + i)
    f = "float32"
    out += masked_case("masked_select_mask_broadcast", T(f, [2, 3]), T("bool", [3], zero_within=0.5), 80)
    out += masked_case("masked_select_self_broadcast", T("int64", [3]), T("bool", [2, 3], zero_within=0.5), 81)
    out += masked_case("masked_select_both_broadcast", T(f, [2, 1]), T("bool", [1, 3], zero_within=0.5), 82)
    out += masked_case("masked_select_transposed", T("float16", [4, 3], strides=[1, 4]),
                       T("bool", [4, 3], strides=[1, 4], zero_within=0.5), 83)
    out += masked_case("masked_select_empty", T(f, [0, 3]), T("bool", [0, 3]), 84)
    out += masked_case("masked_select_all_false", T(f, [2, 3]), T("bool", [2, 3], fill=0), 85)
    out += masked_case("masked_select_all_true", T("bfloat16", [2, 3]), T("bool", [2, 3], fill=1), 86)
    out += masked_case("masked_select_0d", T(f, [], fill=3.5), T("bool", [], fill=1), 87)
    out += masked_case("masked_select_0d_self_1d_mask", T("int32", [], fill=7), T("bool", [4], zero_within=0.5), 88)
    out += masked_case("masked_select_nan_kept", T(f, [4], values=["nan", -0.0, 1.0, "inf"]),
                       T("bool", [4], values=[1, 1, 0, 1]), 89)
    out += masked_case("masked_select_large", T(f, [64, 45]), T("bool", [64, 45], zero_within=0.625), 90)
    return out


# ---- index.Tensor ----

def meta_index(x, idx):
    """PyTorch's meta_index_Tensor layout for these operands (what Inductor assumes)."""
    with FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True) as mode:
        fx = mode.from_tensor(x)
        fi = [None if i is None else mode.from_tensor(i) for i in idx]
        y = torch.ops.aten.index.Tensor(fx, fi)
        return [int(s) for s in y.stride()], [int(s) for s in y.shape]


def index_case(name, self_spec, indices, seed, check_meta=True):
    """indices: None or an index spec (int ones with values, masks generated)."""
    x = make(seed, 0, self_spec)
    idx = [None if s is None else make(seed, 1 + t, s) for t, s in enumerate(indices)]
    y = torch.ops.aten.index.Tensor(x, idx)
    c = {"name": name, "op": "index", "seed": seed, "inputs": [self_spec], "indices": indices, "expect": "Ok",
         "expect_sizes": list(y.shape), "expect_strides": list(y.stride()), "expected": flat(y),
         "dtype": self_spec["dtype"]}
    if check_meta and not any(s is not None and s["dtype"] in ("bool", "uint8") for s in indices):
        strides, sizes = meta_index(x, idx)
        assert sizes == list(y.shape), name
        assert strides == list(y.stride()) or y.numel() < 2, (name, strides, y.stride())
    return per_device(c)


def I(values, sizes=None, dtype="int64", **kw):
    return dict(dtype=dtype, sizes=list(sizes if sizes is not None else [len(values)]), values=values, **kw)


def index_cases():
    f = "float32"
    out = []
    out += index_case("index_int64_dim0", T(f, [4, 3]), [I([2, 0, -1, 2])], 100)
    out += index_case("index_int32_dim1", T(f, [4, 3]), [None, I([1, -3], dtype="int32")], 101)
    out += index_case("index_adjacent_broadcast", T("int64", [2, 3, 4]), [None, I([0, 2], [2, 1]), I([3, 0, 1], [3])],
                      102)
    out += index_case("index_separated_leading", T(f, [3, 2, 4]), [I([2, 0]), None, I([1, 3])], 103)
    out += index_case("index_2d_index_1d_self", T("int16", [5]), [I([4, 0, 1, 1], [2, 2])], 104)
    out += index_case("index_empty_index", T(f, [4, 3]), [I([], [0])], 105)
    out += index_case("index_0d_index_drops_dim", T(f, [4, 3]), [None, I([-1], [])], 111)
    out += index_case("index_transposed_self", T(f, [4, 2, 2], strides=[1, 4, 8]), [None, I([1, 0, 1])], 106)
    out += index_case("index_channels_last_self", T("float16", [2, 3, 2, 2], strides=[12, 1, 6, 3]),
                      [None, I([2, 0])], 107)
    out += index_case("index_sliced_offset_self", T("int8", [3, 3], strides=[4, 1], offset=2), [I([2, 1]), I([0, 2])],
                      108)
    out += index_case("index_index_strided", T(f, [5, 2]), [I([3, 1, 4], [3], strides=[2])], 109)
    out += index_case("index_broadcast_index_stride0", T(f, [3, 4]), [I([1, 2], [2, 1]), I([0, 3, 1], [1, 3])], 110)
    # Masks: a bool index is its nonzero coordinates.
    out += index_case("index_bool_mask_dim0", T(f, [4, 3]), [T("bool", [4], zero_within=0.5)], 120)
    out += index_case("index_bool_mask_2d", T("bfloat16", [3, 4, 2]), [T("bool", [3, 4], zero_within=0.5)], 121)
    out += index_case("index_uint8_mask", T("int32", [5, 2]), [T("uint8", [5], zero_within=0.5)], 122)
    out += index_case("index_mask_after_none", T(f, [2, 4, 3]), [None, T("bool", [4], zero_within=0.5)], 123)
    out += index_case("index_mask_all_false", T(f, [3, 2]), [T("bool", [3], fill=0)], 124)
    out += index_case("index_mask_all_true", T("bool", [3, 2], zero_within=0.5), [T("bool", [3], fill=1)], 125)
    out += index_case("index_mask_and_int_broadcast", T(f, [4, 3]), [T("bool", [4], zero_within=0.5), I([2], [1])],
                      126)
    out += index_case("index_two_masks", T("float64", [3, 4]),
                      [T("bool", [3], values=[1, 0, 1]), T("bool", [4], values=[0, 1, 0, 1])], 127)
    out += index_case("index_mask_transposed", T(f, [3, 4]), [T("bool", [3, 4], strides=[1, 3], zero_within=0.5)],
                      128)
    out += index_case("index_mask_empty_self", T(f, [0, 3]), [T("bool", [0])], 129)
    for i, dt in enumerate(["float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64", "bool"]):
        out += index_case(f"index_{dt}_self", T(dt, [3, 4], zero_within=0.25), [None, I([3, 1, 1])], 140 + i)
    out += index_case("index_large", T(f, [40, 50]), [I([(7 * k) % 40 for k in range(60)], [60])], 150)
    return out


# ---- bad input ----

def bad(name, op, expect, message, cpu_only=False, **kw):
    c = {"name": name, "op": "select_error", "fn": op, "expect": expect, "message": message, "seed": 1}
    c.update(kw)
    cases = per_device(c)
    return cases[:1] if cpu_only else cases


def bad_cases():
    f = "float32"
    out = []
    out += bad("nonzero_null_self", "nonzero", "InvalidArgument", "null self", inputs=[T(f, [2])], null="self")
    out += bad("nonzero_null_ret0", "nonzero", "InvalidArgument", "null ret0", inputs=[T(f, [2])], null="ret0")
    out += bad("nonzero_static_negative_size", "nonzero_static", "InvalidArgument",
               "'size' must be an non-negative integer", inputs=[T(f, [2])], size=-1, fill_value=-1)
    out += bad("nonzero_13_dims", "nonzero", "NotSupported", "at most 12 are supported", inputs=[T(f, [1] * 13)])
    out += bad("masked_select_uint8_mask", "masked_select", "InvalidArgument", "expected BoolTensor for mask",
               inputs=[T(f, [3]), T("uint8", [3])])
    out += bad("masked_select_int64_mask", "masked_select", "InvalidArgument", "expected BoolTensor for mask",
               inputs=[T(f, [3]), T("int64", [3])])
    out += bad("masked_select_shape_mismatch", "masked_select", "InvalidArgument",
               "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
               inputs=[T(f, [2, 3]), T("bool", [2])])
    out += bad("masked_select_null_mask", "masked_select", "InvalidArgument", "null mask",
               inputs=[T(f, [3]), T("bool", [3])], null="mask")
    out += bad("index_out_of_range", "index", "InvalidArgument", "index 4 is out of bounds for dimension 0 with size 4",
               cpu_only=True, inputs=[T(f, [4, 3])], indices=[I([0, 4])])
    out += bad("index_negative_out_of_range", "index", "InvalidArgument",
               "index -4 is out of bounds for dimension 0 with size 3", cpu_only=True, inputs=[T(f, [4, 3])],
               indices=[None, I([-4], dtype="int32")])
    out += bad("index_float_index", "index", "InvalidArgument",
               "tensors used as indices must be long, int, byte or bool tensors", inputs=[T(f, [4, 3])],
               indices=[I([1.0], dtype="float32")])
    out += bad("index_too_many", "index", "InvalidArgument", "too many indices for tensor of dimension 2 (got 3)",
               inputs=[T(f, [4, 3])], indices=[I([0]), I([0]), I([0])])
    out += bad("index_mask_too_many", "index", "InvalidArgument", "too many indices for tensor of dimension 1",
               inputs=[T(f, [4])], indices=[T("bool", [4, 1], fill=1)])
    out += bad("index_mask_shape", "index", "InvalidArgument",
               "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [4, 3] at index 0",
               inputs=[T(f, [4, 3])], indices=[T("bool", [3], fill=1)])
    out += bad("index_broadcast_mismatch", "index", "InvalidArgument",
               "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
               inputs=[T(f, [4, 3])], indices=[I([0, 1]), I([0, 1, 2])])
    out += bad("index_no_indices", "index", "InvalidArgument", "at least one index must be provided",
               inputs=[T(f, [4, 3])], indices=[])
    out += bad("index_all_none", "index", "InvalidArgument", "every index is None", inputs=[T(f, [4, 3])],
               indices=[None, None])
    out += bad("index_null_self", "index", "InvalidArgument", "null self", inputs=[T(f, [4, 3])], indices=[I([0])],
               null="self")
    out += bad("index_null_ret0", "index", "InvalidArgument", "null ret0", inputs=[T(f, [4, 3])], indices=[I([0])],
               null="ret0")
    out += bad("index_null_list", "index", "InvalidArgument", "null indices list", inputs=[T(f, [4, 3])],
               indices=[I([0])], null="indices")
    out += bad("index_0d_self", "index", "InvalidArgument", "too many indices for tensor of dimension 0 (got 1)",
               inputs=[T(f, [], fill=1)], indices=[I([0])])
    # Mixed devices: a CPU operand beside a CUDA self ("on": that operand's device; GPU).
    c = {"name": "masked_select_cpu_mask_cuda_self", "op": "select_error", "fn": "masked_select", "device": "cuda",
         "requires": "gpu", "expect": "InvalidArgument", "message": "mask is a CPU tensor, not a CUDA tensor",
         "seed": 1, "inputs": [T(f, [3]), T("bool", [3], fill=1, on="cpu")]}
    out.append(c)
    out.append({"name": "index_cpu_index_cuda_self", "op": "select_error", "fn": "index", "device": "cuda",
                "requires": "gpu", "expect": "InvalidArgument", "message": "indices[0] is a CPU tensor",
                "seed": 1, "inputs": [T(f, [3])], "indices": [I([0], on="cpu")]})
    # CPU tensors into the CUDA ops: refused before any CUDA call (runs without a GPU).
    for fn, kw in [("nonzero", dict(inputs=[T(f, [3])])), ("nonzero_static", dict(inputs=[T(f, [3])], size=2,
                                                                                     fill_value=0)),
                   ("masked_select", dict(inputs=[T(f, [3]), T("bool", [3])])),
                   ("index", dict(inputs=[T(f, [3])], indices=[I([0])]))]:
        c = {"name": f"{fn}_cuda_given_cpu_tensors", "op": "select_error", "fn": fn, "device": "cuda",
             "tensors_on": "cpu", "requires": "none", "expect": "InvalidArgument", "message": "not a CUDA tensor",
             "seed": 1}
        c.update(kw)
        out.append(c)
    # Torch agrees on the messages it has (checked here, on the CPU).
    return out


# Cases whose message is not eager ATen's: index with only None (ATen's CPU kernel fails an
# internal assert), a mask longer than self's rank (eager: "Dimension out of range"; the
# message is PyTorch's meta function's).
NOT_EAGER = ("index_all_none_cpu", "index_mask_too_many_cpu")


def check_bad_against_torch(cases):
    for c in cases:
        if c["device"] != "cpu" or c.get("null") or c["expect"] == "NotSupported" or c["name"] in NOT_EAGER:
            continue
        ins = [make(1, t, s) for t, s in enumerate(c["inputs"])]
        try:
            if c["fn"] == "nonzero":
                torch.nonzero(ins[0])
            elif c["fn"] == "nonzero_static":
                torch.nonzero_static(ins[0], size=c["size"], fill_value=c["fill_value"])
            elif c["fn"] == "masked_select":
                torch.masked_select(ins[0], ins[1])
            else:
                idx = [None if s is None else make(1, 1 + t, s) for t, s in enumerate(c["indices"])]
                torch.ops.aten.index.Tensor(ins[0], idx)
        except (RuntimeError, IndexError) as e:
            assert c["message"] in str(e), (c["name"], str(e))
            continue
        raise AssertionError(c["name"] + ": PyTorch accepted it")


# ---- unique (unique_ops.json) ----

def unique_case(name, spec, seed, fn="_unique2", sorted_=True, inverse=True, counts=True, devices=("cpu", "cuda")):
    x = make(seed, 0, spec)
    if fn == "_unique2":
        v, i, n = torch.ops.aten._unique2(x, sorted_, inverse, counts)
        # ATen leaves sorted=False's order open; slimcuda always sorts: the same values.
        ref = torch.ops.aten._unique2(x, True, inverse, counts)
        assert torch.equal(v.isnan(), ref[0].isnan()) and bool(((v == ref[0]) | v.isnan()).all()), name
        v, i, n = ref
    else:
        v, i, n = torch.ops.aten.unique_consecutive(x, inverse, counts)
    c = {"name": name, "op": "unique", "fn": fn, "seed": seed, "inputs": [spec], "sorted": int(sorted_),
         "return_inverse": int(inverse), "return_counts": int(counts), "expect": "Ok", "dtype": spec["dtype"],
         "expected": flat(v), "expect_sizes": list(v.shape), "expected_inverse": [int(a) for a in i.reshape(-1)],
         "inverse_sizes": list(i.shape), "expected_counts": [int(a) for a in n.reshape(-1)],
         "counts_sizes": list(n.shape)}
    return per_device(c, devices)


def unique_cases():
    out = []
    for k, dt in enumerate(ALL):
        out += unique_case(f"unique2_{dt}", T(dt, [4, 5]), 200 + k)
    f = "float32"
    out += unique_case("unique2_unsorted_flag", T("int64", [12]), 220, sorted_=False)
    out += unique_case("unique2_values_only", T(f, [3, 4]), 221, inverse=False, counts=False)
    out += unique_case("unique2_inverse_only", T(f, [3, 4]), 222, counts=False)
    out += unique_case("unique2_counts_only", T(f, [3, 4]), 223, inverse=False)
    out += unique_case("unique2_transposed", T("int32", [4, 3], strides=[1, 4]), 224)
    out += unique_case("unique2_nan_negative_zero",
                       T(f, [8], values=["nan", 0.0, -0.0, 1.0, "nan", "-inf", 1.0, "inf"]), 225)
    out += unique_case("unique2_0d", T(f, [], fill=3.0), 226)
    out += unique_case("unique2_empty", T(f, [0, 4]), 227)
    out += unique_case("unique2_empty_values_only", T("int64", [0]), 228, inverse=False, counts=False)
    out += unique_case("unique2_large", T("int64", [3000]), 229)
    out += unique_case("unique2_bool_all_true", T("bool", [5], fill=1), 230)
    out += unique_case("unique_consecutive_int64", T("int64", [12], zero_within=0.5), 240, fn="unique_consecutive")
    out += unique_case("unique_consecutive_nan", T(f, [6], values=["nan", "nan", 1.0, 1.0, -0.0, 0.0]), 241,
                       fn="unique_consecutive")
    out += unique_case("unique_consecutive_values_only", T("bool", [7], zero_within=0.5), 242,
                       fn="unique_consecutive", inverse=False, counts=False)
    out += unique_case("unique_consecutive_0d", T("int32", [], fill=4), 243, fn="unique_consecutive")
    out += unique_case("unique_consecutive_strided", T("float16", [3, 4], strides=[1, 3], zero_within=0.5), 244,
                       fn="unique_consecutive")
    return out


def unique_dim_case(name, spec, seed, dim, fn="unique_dim", inverse=True, counts=True):
    """unique_dim / unique_consecutive with a dim. ATen's CPU kernel returns the inverse and
    the counts whether asked for or not; its CUDA kernel returns [0] for those not asked for."""
    x = make(seed, 0, spec)
    if fn == "unique_dim":
        v, i, n = torch.ops.aten.unique_dim(x, dim, True, inverse, counts)
    else:
        v, i, n = torch.ops.aten.unique_consecutive(x, inverse, counts, dim)
    c = {"name": name, "op": "unique", "fn": fn, "seed": seed, "inputs": [spec], "dim": dim, "sorted": 1,
         "return_inverse": int(inverse), "return_counts": int(counts), "expect": "Ok", "dtype": spec["dtype"],
         "expected": flat(v), "expect_sizes": list(v.shape)}
    out = []
    for d in per_device(c):
        cuda = d["device"] == "cuda"
        ii = i if inverse or not cuda else torch.empty(0, dtype=torch.int64)
        nn = n if counts or not cuda else torch.empty(0, dtype=torch.int64)
        d.update(expected_inverse=[int(a) for a in ii.reshape(-1)], inverse_sizes=list(ii.shape),
                 expected_counts=[int(a) for a in nn.reshape(-1)], counts_sizes=list(nn.shape))
        out.append(d)
    return out


def unique_dim_cases():
    out = []
    rows = [1, 2, 1, 2, 3, 0, 3, 0, 1, 2, 1, 2, 0, 0, 0, 0]
    out += unique_dim_case("unique_dim_rows", T("int64", [4, 4], values=rows), 260, 0)
    out += unique_dim_case("unique_dim_columns", T("int64", [4, 4], values=rows), 261, 1)
    out += unique_dim_case("unique_dim_negative_dim", T("int64", [4, 4], values=rows), 262, -1)
    out += unique_dim_case("unique_dim_values_only", T("int64", [4, 4], values=rows), 263, 0, inverse=False,
                           counts=False)
    out += unique_dim_case("unique_dim_3d_middle", T("float16", [2, 5, 3], zero_within=0.75), 264, 1)
    out += unique_dim_case("unique_dim_transposed", T("float32", [4, 3], strides=[1, 4], zero_within=0.75), 265, 0)
    out += unique_dim_case("unique_dim_negative_zero", T("float32", [2, 2], values=[0.0, 1.0, -0.0, 1.0]), 266, 0)
    out += unique_dim_case("unique_dim_bool", T("bool", [5, 2], zero_within=0.5), 267, 0)
    out += unique_dim_case("unique_dim_1d", T("int32", [7], zero_within=0.5), 268, 0)
    out += unique_dim_case("unique_dim_empty_dim", T("float32", [2, 0]), 269, 1)
    out += unique_dim_case("unique_dim_many_rows", T("int8", [300, 2], zero_within=0.75), 270, 0)
    out += unique_dim_case("unique_consecutive_dim0", T("int64", [4, 4], values=rows), 280, 0,
                           fn="unique_consecutive")
    out += unique_dim_case("unique_consecutive_dim1_values_only", T("int64", [4, 4], values=rows), 281, 1,
                           fn="unique_consecutive", inverse=False, counts=False)
    return out


def unique_bad_cases():
    def bad(name, fn, dim, spec, expect, message):
        c = {"name": name, "op": "unique_error", "fn": fn, "dim": dim, "inputs": [spec], "seed": 1, "expect": expect,
             "message": message}
        return per_device(c)
    out = []
    out += bad("unique_dim_0d", "unique_dim", 0, T("float32", [], fill=1), "InvalidArgument",
               "Dimension specified as 0 but tensor has no dimensions")
    out += bad("unique_dim_out_of_range", "unique_dim", 2, T("float32", [2, 3]), "InvalidArgument",
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)")
    out += bad("unique_dim_zero_sized_other", "unique_dim", 1, T("float32", [0, 2]), "InvalidArgument",
               "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    out += bad("unique_consecutive_dim_0d", "unique_consecutive", 0, T("int64", [], fill=1), "InvalidArgument",
               "Dimension specified as 0 but tensor has no dimensions")
    out += bad("unique_13_dims", "_unique2", None, T("float32", [1] * 13), "NotSupported", "at most 12 are supported")
    for c in out:
        if c["device"] != "cpu" or c["expect"] == "NotSupported":
            continue
        x = make(1, 0, c["inputs"][0])
        try:
            if c["fn"] == "unique_dim":
                torch.ops.aten.unique_dim(x, c["dim"], True, True, True)
            else:
                torch.ops.aten.unique_consecutive(x, True, True, c["dim"])
        except (RuntimeError, IndexError) as e:
            assert c["message"] in str(e), (c["name"], str(e))
            continue
        raise AssertionError(c["name"] + ": PyTorch accepted it")
    return out


SELECT_DESCRIPTION = (
    "The data-dependent selection shims (testdata/select_ops.json, written by tools/ops/make_select_fixtures.py with "
    "PyTorch {version} on the CPU): aoti_torch_<device>_<op> for op nonzero, nonzero_static (size, fill_value), "
    "masked_select (inputs self, mask), index (aoti_torch_<device>_index_Tensor: inputs[0] self, indices a list of "
    "null (None) or index specs). Each value case once per device (name _cpu / _cuda, requires gpu). A spec: "
    "{dtype, sizes, strides (optional, element strides over a zero-filled storage just large enough), offset "
    "(optional storage offset in elements), then values (row-major; nan/inf/-inf strings) or fill (every element) "
    "or generated: element j of operand t (self 0, mask 1, indices[k] 1 + k) is v = (splitmix64(seed * 1000003 + "
    "t * 7919 + j) % 17 - 8) / 8, v = 0 where |v| <= zero_within (optional), then floating v, signed integers 8 v, "
    "uint8 8 |v|, bool v != 0; on (optional): cpu puts this operand on the CPU whatever the case's device}. "
    "expect_sizes, expect_strides (nonzero, index: PyTorch's layout on the device), "
    "expected: the output row-major, compared exactly (NaN equal to NaN). op select_error: fn nonzero|"
    "nonzero_static|masked_select|index with the same fields; null: self|mask|ret0|indices (passed as NULL); "
    "tensors_on cpu: CPU tensors into a CUDA op -> expect (error name), message (a substring of the last error). "
    "Read by csrc/ops/select/select_ops_test.cc (C++) and go/internal/opsfixture (Go).")

UNIQUE_DESCRIPTION = (
    "The unique family (testdata/unique_ops.json, written by tools/ops/make_select_fixtures.py with PyTorch "
    "{version} on the CPU), reached by exports through the proxy executor (no C shim): slimcuda::ops::unique for fn "
    "_unique2 (sorted; slimcuda always sorts) and unique_consecutive (dim None), and slimcuda::ops::unique_dim for "
    "fn unique_dim and for unique_consecutive with a dim, with return_inverse and return_counts. inputs[0] as in "
    "select_ops.json. expected (values, row-major), expect_sizes, expected_inverse / inverse_sizes, expected_counts "
    "/ counts_sizes (int64), compared exactly (with a dim, ATen's CPU kernel returns inverse and counts always, its "
    "CUDA kernel [0] for those not asked for). Each case once per device. op unique_error: bad input -> expect, "
    "message. Read by "
    "csrc/ops/select/select_ops_test.cc only (Go cannot reach proxy-executor ops without a model).")


def write(path, description, cases):
    doc = {"description": description.replace("{version}", torch.__version__.split("+")[0]), "cases": cases}
    text = json.dumps(doc, indent=None, separators=(",", ": "))
    # One case per line keeps diffs readable.
    text = text.replace('"cases": [{', '"cases": [\n  {').replace('},{"name"', '},\n  {"name"')
    with open(path, "w") as f:
        f.write(text + "\n")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "testdata"
    bads = bad_cases()
    check_bad_against_torch(bads)
    write(os.path.join(out_dir, "select_ops.json"), SELECT_DESCRIPTION,
          nonzero_cases() + masked_cases() + index_cases() + bads)
    write(os.path.join(out_dir, "unique_ops.json"), UNIQUE_DESCRIPTION,
          unique_cases() + unique_dim_cases() + unique_bad_cases())


if __name__ == "__main__":
    main()
