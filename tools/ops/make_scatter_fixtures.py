#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/scatter_ops.json: the fixture cases of the scatter-family fallback ops
(scatter.src_out, scatter.value_out, scatter_reduce.two_out, index_put, masked_scatter).

Expected values come from PyTorch's CPU ops in the case's dtype (ATen's own rounding). The
same case runs on both devices (name _<device>; cuda: requires gpu), except where a case says
it is the CPU's (a data-dependent check the CUDA op cannot make without a synchronization)
or CUDA's: "rule": "slimcuda" cases check what slimcuda's CUDA ops do where ATen's kernel
asserts on the device (an out-of-range index writes nothing), with values from that rule.

Operands: {"sizes", "strides" (optional: a view over a storage just large enough, as the
tests build it), "dtype" (optional: the case's), "values" (stored, row-major; "nan", "inf",
"-inf" as strings) or "gen": t (generated: element j is (splitmix64(seed * 1000003 + t *
7919 + j) % 17 - 8) / 8 * scale, scale 8 for integer dtypes, values >= 0 for bool, as
tools/ops/make_op_fixtures.py describes)}. Index values and masks are stored.
Usage: python3 tools/ops/make_scatter_fixtures.py > testdata/scatter_ops.json
"""
import json
import math
import random
import sys

import torch

MASK = (1 << 64) - 1
DT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
      "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
      "bool": torch.bool}
# The dtypes every op runs in; a few cases add the others.
MAIN = ["float32", "float16", "bfloat16", "int64", "int32"]
# |got - want| <= atol + rtol * |want|: exact where the order of atomics cannot matter
# (multiples of 1/8 add exactly); float16/bfloat16 products round, in any order.
TOL = {"float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12), "float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def generated(seed, t, n, dtype):
    raw = [((splitmix64(seed * 1000003 + t * 7919 + j) % 17) - 8) / 8.0 for j in range(n)]
    if dtype == "bool":
        return [float(v >= 0) for v in raw]
    if dtype == "uint8":
        return [8 * v + 8 for v in raw]
    if dtype.startswith("int"):
        return [8 * v for v in raw]
    return raw


def enc(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def dec(v):
    return float(v) if isinstance(v, str) else v


def numel(sizes):
    return math.prod(sizes)


def tensor_of(spec, case):
    """The operand as the tests build it: a view with spec's sizes/strides over a storage just
    large enough, holding its values in row-major order."""
    dtype = spec.get("dtype", case["dtype"])
    sizes = spec["sizes"]
    vals = [dec(v) for v in spec["values"]] if "values" in spec else generated(case["seed"], spec["gen"],
                                                                               numel(sizes), dtype)
    x = torch.tensor(vals, dtype=torch.float64).reshape(sizes).to(DT[dtype])
    strides = spec.get("strides")
    if strides is None:
        return x
    span = 1 + sum((sz - 1) * st for sz, st in zip(sizes, strides)) if all(sizes) else 0
    base = torch.zeros(max(span, 1), dtype=DT[dtype])
    v = base.as_strided(sizes, strides)
    v.copy_(x)
    return v


def flat(x):
    return [enc(v) for v in x.to(torch.float64).contiguous().reshape(-1).tolist()]


def tol(dtype):
    a, r = TOL.get(dtype, (0.0, 0.0))
    return {"atol": a, "rtol": r}


def per_device(c, devices=("cpu", "cuda")):
    out = []
    for dev in devices:
        d = json.loads(json.dumps(c))
        d["name"] = c["name"] + "_" + dev
        d["device"] = dev
        d["requires"] = "none" if dev == "cpu" else "gpu"
        out.append(d)
    return out


def gen(sizes, t, strides=None, dtype=None):
    s = {"sizes": list(sizes), "gen": t}
    if strides is not None:
        s["strides"] = list(strides)
    if dtype is not None:
        s["dtype"] = dtype
    return s


def stored(values, sizes, dtype, strides=None):
    s = {"sizes": list(sizes), "dtype": dtype, "values": [enc(v) for v in values]}
    if strides is not None:
        s["strides"] = list(strides)
    return s


def finish(c, y, layout=False):
    c["expect"] = "Ok"
    c["expect_sizes"] = list(y.shape)
    if layout:
        c["expect_strides"] = list(y.stride())
    c["expected"] = flat(y)
    c.update(tol(c["dtype"]))
    return c


# ---- scatter / scatter_reduce ----

def scatter_index(rng, self_sizes, index_sizes, dim, unique):
    """Index values along dim: distinct within each line along dim when unique (a plain
    scatter's duplicates leave the winner open), else drawn with repeats."""
    n = self_sizes[dim]
    out = torch.zeros(index_sizes, dtype=torch.int64)
    lines = out.movedim(dim, -1).reshape(-1, index_sizes[dim]) if numel(index_sizes) else None
    if lines is None:
        return []
    for r in range(lines.shape[0]):
        vals = rng.sample(range(n), index_sizes[dim]) if unique else [rng.randrange(n) for _ in range(index_sizes[dim])]
        lines[r] = torch.tensor(vals)
    moved_sizes = [s for i, s in enumerate(index_sizes) if i != dim] + [index_sizes[dim]]
    back = lines.reshape(moved_sizes).movedim(-1, dim)
    return back.reshape(-1).tolist()


def scatter_case(name, fn, dtype, self_spec, index_spec, dim, src_spec=None, value=None, reduce=None,
                 include_self=True, out_spec=None, seed=1, devices=("cpu", "cuda")):
    c = {"name": name, "op": "scatter", "fn": fn, "dtype": dtype, "seed": seed, "dim": dim, "self": self_spec,
         "index": index_spec}
    if src_spec is not None:
        c["src"] = src_spec
    if value is not None:
        c["value"] = enc(value)
    if reduce is not None:
        c["reduce"] = reduce
        c["include_self"] = int(include_self)
    if out_spec is not None:
        c["out"] = out_spec  # "self": in place (out is self's handle), else a tensor spec
    x = tensor_of(self_spec, c)
    ix = tensor_of(index_spec, c)
    if fn == "scatter_src":
        y = torch.scatter(x, dim, ix, tensor_of(src_spec, c))
    elif fn == "scatter_value":
        y = torch.scatter(x, dim, ix, value)
    else:
        y = torch.scatter_reduce(x, dim, ix, tensor_of(src_spec, c), reduce, include_self=include_self)
    return per_device(finish(c, y), devices)


def scatter_cases():
    rng = random.Random(5)
    out = []
    for dt in MAIN + ["float64", "int16", "int8", "uint8", "bool"]:
        ix = scatter_index(rng, [4, 5], [3, 5], 0, True)
        out += scatter_case(f"scatter_src_4x5_dim0_{dt}", "scatter_src", dt, gen([4, 5], 0),
                            stored(ix, [3, 5], "int64"), 0, gen([3, 6], 1), seed=11)
    for dt in MAIN:
        ix = scatter_index(rng, [3, 6], [3, 4], 1, True)
        out += scatter_case(f"scatter_src_dim_minus1_int32_index_{dt}", "scatter_src", dt, gen([3, 6], 0),
                            stored(ix, [3, 4], "int32"), -1, gen([3, 4], 1), seed=12)
        out += scatter_case(f"scatter_value_4x5_dim1_{dt}", "scatter_value", dt, gen([4, 5], 0),
                            stored(scatter_index(rng, [4, 5], [4, 2], 1, True), [4, 2], "int64"), 1, value=2.5,
                            seed=13)
    f = "float32"
    # Strided everything: self transposed, index transposed, src a strided slice, out its own
    # transposed tensor.
    ix = scatter_index(rng, [4, 3], [2, 3], 0, True)
    for dt in ["float32", "int64"]:
        out += scatter_case(f"scatter_src_strided_{dt}", "scatter_src", dt, gen([4, 3], 0, [1, 4]),
                            stored(ix, [2, 3], "int64", [1, 2]), 0, gen([2, 3], 1, [6, 2]),
                            out_spec=gen([4, 3], 2, [1, 4]), seed=14)
    out += scatter_case("scatter_src_in_place", "scatter_src", f, gen([4, 5], 0),
                        stored(scatter_index(rng, [4, 5], [2, 5], 0, True), [2, 5], "int64"), 0, gen([2, 5], 1),
                        out_spec="self", seed=15)
    out += scatter_case("scatter_src_3d_dim1", "scatter_src", f, gen([2, 4, 3], 0),
                        stored(scatter_index(rng, [2, 4, 3], [2, 2, 3], 1, True), [2, 2, 3], "int64"), 1,
                        gen([2, 3, 3], 1), seed=16)
    out += scatter_case("scatter_src_3d_dim_minus3_narrow_index", "scatter_src", f, gen([3, 4, 2], 0),
                        stored(scatter_index(rng, [3, 4, 2], [2, 3, 1], 0, True), [2, 3, 1], "int64"), -3,
                        gen([2, 3, 2], 1), seed=17)
    out += scatter_case("scatter_src_empty_index", "scatter_src", f, gen([3, 4], 0), stored([], [0, 4], "int64"), 0,
                        gen([2, 4], 1), seed=18)
    out += scatter_case("scatter_src_empty_self", "scatter_src", f, gen([0, 3], 0), stored([], [0, 3], "int64"), 1,
                        gen([0, 3], 1), seed=19)
    out += scatter_case("scatter_src_0d", "scatter_src", f, gen([], 0), stored([0], [], "int64"), 0, gen([], 1),
                        seed=20)
    out += scatter_case("scatter_value_dim_minus2_negative", "scatter_value", f, gen([3, 4], 0),
                        stored([2, 0, 1, 2], [1, 4], "int64"), -2, value=-0.75, seed=21)
    out += scatter_case("scatter_value_inf", "scatter_value", f, gen([3], 0), stored([1], [1], "int64"), 0,
                        value=float("inf"), seed=22)
    # scatter_reduce: every reduction, with and without self, duplicates in the index.
    for dt in MAIN:
        ix = scatter_index(rng, [5, 4], [6, 4], 0, False)
        for red in ["sum", "prod", "mean", "amax", "amin"]:
            for inc in [True, False]:
                out += scatter_case(f"scatter_reduce_{red}_{'self' if inc else 'no_self'}_{dt}", "scatter_reduce",
                                    dt, gen([5, 4], 0), stored(ix, [6, 4], "int64"), 0, gen([6, 4], 1), reduce=red,
                                    include_self=inc, seed=31)
    # ATen also takes "max" and "min" for amax and amin.
    for red in ["max", "min"]:
        out += scatter_case(f"scatter_reduce_{red}_alias", "scatter_reduce", "float32", gen([5, 4], 0),
                            stored(scatter_index(rng, [5, 4], [6, 4], 0, False), [6, 4], "int64"), 0,
                            gen([6, 4], 1), reduce=red, include_self=False, seed=37)
    # NaN propagates through amax/amin (from src and from self).
    nan = float("nan")
    for red in ["amax", "amin", "sum"]:
        out += scatter_case(f"scatter_reduce_{red}_nan", "scatter_reduce", f,
                            stored([1.0, nan, -0.5, 0.25], [4], f), stored([0, 0, 1, 3, 3, 2], [6], "int64"), 0,
                            stored([0.5, -1.0, nan, 0.75, -0.25, 0.125], [6], f), reduce=red, seed=32)
    # Strided self and src, a separate transposed out, dim 1, int32 index.
    for red in ["sum", "mean", "amax"]:
        out += scatter_case(f"scatter_reduce_{red}_strided_dim1", "scatter_reduce", f, gen([3, 4], 0, [1, 3]),
                            stored([rng.randrange(4) for _ in range(18)], [3, 6], "int32"), 1,
                            gen([3, 6], 1, [12, 2]), reduce=red, include_self=False, out_spec=gen([3, 4], 2, [1, 3]),
                            seed=33)
    out += scatter_case("scatter_reduce_sum_in_place_float64", "scatter_reduce", "float64", gen([6], 0),
                        stored([5, 5, 0, 5, 1, 1, 5, 2], [8], "int64"), 0, gen([8], 1), reduce="sum",
                        out_spec="self", seed=34)
    out += scatter_case("scatter_reduce_prod_empty_index", "scatter_reduce", f, gen([3, 2], 0),
                        stored([], [0, 2], "int64"), 0, gen([1, 2], 1), reduce="prod", seed=35)
    # Many duplicates onto few elements: the CUDA atomics' contention (float32 sums of
    # multiples of 1/8 are exact in any order).
    big = [rng.randrange(3) for _ in range(2000)]
    out += scatter_case("scatter_reduce_sum_2000_onto_3", "scatter_reduce", f, gen([3], 0),
                        stored(big, [2000], "int64"), 0, gen([2000], 1), reduce="sum", seed=36)
    out += scatter_case("scatter_reduce_mean_2000_onto_3_int64", "scatter_reduce", "int64", gen([3], 0),
                        stored(big, [2000], "int64"), 0, gen([2000], 1), reduce="mean", include_self=False, seed=36)
    return out


def scatter_cuda_rule_cases():
    """CUDA: an index outside [0, size) writes nothing (ATen's kernel asserts on the device;
    the CPU refuses it, see the error cases). Values: the scatter without those entries."""
    out = []
    f = "float32"
    c = {"name": "scatter_src_out_of_range_writes_nothing", "op": "scatter", "fn": "scatter_src", "dtype": f,
         "seed": 41, "dim": 0, "self": gen([3, 2], 0), "index": stored([0, 7, -1, 1], [2, 2], "int64"),
         "src": gen([2, 2], 1), "rule": "slimcuda"}
    x = tensor_of(c["self"], c).clone()
    s = tensor_of(c["src"], c)
    x[0, 0] = s[0, 0]
    x[1, 1] = s[1, 1]
    out += per_device(finish(c, x), ["cuda"])
    c = {"name": "scatter_reduce_sum_out_of_range_writes_nothing", "op": "scatter", "fn": "scatter_reduce",
         "dtype": f, "seed": 42, "dim": 0, "self": gen([3], 0), "index": stored([2, 3, 2, -4], [4], "int64"),
         "src": gen([4], 1), "reduce": "sum", "include_self": 1, "rule": "slimcuda"}
    x = tensor_of(c["self"], c).clone()
    s = tensor_of(c["src"], c)
    x[2] += s[0] + s[2]
    out += per_device(finish(c, x), ["cuda"])
    return out


# ---- index_put ----

def index_put_case(name, dtype, self_spec, indices, values_spec, accumulate, seed=1, devices=("cpu", "cuda"),
                   rule=None, expected=None):
    """indices: a list of operand specs or None."""
    c = {"name": name, "op": "index_put", "dtype": dtype, "seed": seed, "self": self_spec, "indices": indices,
         "values": values_spec, "accumulate": int(accumulate)}
    x = tensor_of(self_spec, c)
    ind = [None if s is None else tensor_of(s, c) for s in indices]
    if expected is None:
        y = torch.ops.aten.index_put(x, ind, tensor_of(values_spec, c), accumulate)
    else:
        y = expected(x, c)
    if rule:
        c["rule"] = rule
    return per_device(finish(c, y, layout=True), devices)


def index_put_cases():
    out = []
    i64 = "int64"
    for dt in MAIN:
        for acc in [False, True]:
            idx = [3, 0, 4] if not acc else [3, 0, 3, 4, 0, 3]
            out += index_put_case(f"index_put_rows_{'acc' if acc else 'set'}_{dt}", dt, gen([5, 4], 0),
                                  [stored(idx, [len(idx)], i64)], gen([len(idx), 4], 1), acc, seed=51)
    f = "float32"
    for acc in [False, True]:
        a = "acc" if acc else "set"
        # Two adjacent indices after a slice: the broadcast [2, 3] replaces dims 1 and 2 in place.
        out += index_put_case(f"index_put_adjacent_broadcast_{a}", f, gen([3, 4, 5], 0),
                              [None, stored([0, 3], [2, 1], i64), stored([1, 4, 2], [3], "int32")],
                              gen([2, 3], 1), acc, seed=52)
        # Separated by a slice: the broadcast shape goes first.
        out += index_put_case(f"index_put_non_adjacent_{a}", f, gen([3, 4, 5], 0),
                              [stored([2, 0], [2], i64), None, stored([4, 1], [2], i64)], gen([2, 4], 1), acc,
                              seed=53)
        out += index_put_case(f"index_put_negative_indices_{a}", f, gen([4, 3], 0),
                              [stored([-1, -4, 1], [3], i64)], gen([3, 3], 1), acc, seed=54)
        out += index_put_case(f"index_put_bool_mask_rows_{a}", f, gen([4, 3], 0),
                              [stored([1, 0, 1, 1], [4], "bool")], gen([3], 1), acc, seed=55)
        out += index_put_case(f"index_put_bool_mask_full_scalar_value_{a}", f, gen([3, 4], 0),
                              [stored([1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1], [3, 4], "bool")], gen([], 1), acc,
                              seed=56)
        out += index_put_case(f"index_put_bool_mask_after_slice_{a}", f, gen([2, 4, 3], 0),
                              [None, stored([0, 1, 1, 0], [4], "bool")], gen([2, 1, 3], 1), acc, seed=57)
        out += index_put_case(f"index_put_uint8_mask_{a}", f, gen([3, 2], 0), [stored([1, 0, 1], [3], "uint8")],
                              gen([2], 1), acc, seed=58)  # (ATen's masked_fill path refuses uint8 for 1 value)
        # Values that follow the mask's true elements: the count matters (the CPU only).
        out += index_put_case(f"index_put_bool_mask_counted_values_{a}", f, gen([4, 3], 0),
                              [stored([0, 1, 1, 0], [4], "bool")], gen([2, 3], 1), acc, seed=59, devices=("cpu",))
        out += index_put_case(f"index_put_bool_mask_and_index_{a}", f, gen([3, 4], 0),
                              [stored([1, 0, 1], [3], "bool"), stored([3, 0], [2], i64)], gen([2], 1), acc, seed=60,
                              devices=("cpu",))
    out += index_put_case("index_put_transposed_self_keeps_strides", f, gen([3, 4], 0, [1, 3]),
                          [stored([2, 0], [2], i64)], gen([2, 4], 1), False, seed=61)
    out += index_put_case("index_put_sliced_self_dense_out", f, gen([3, 4], 0, [8, 2]),
                          [None, stored([3, 1], [2], i64)], gen([3, 2], 1, [1, 3]), True, seed=62)
    out += index_put_case("index_put_permuted_slice_dense_in_order", f, gen([4, 4, 3], 0, [2, 24, 8]),
                          [stored([1], [1], i64)], gen([4, 3], 1), False, seed=63)
    out += index_put_case("index_put_strided_index", f, gen([6, 2], 0), [stored([5, 0, 2], [3], i64, [2])],
                          gen([3, 2], 1), True, seed=64)
    out += index_put_case("index_put_0d_index", f, gen([5, 3], 0), [stored([2], [], i64)], gen([3], 1), False,
                          seed=65)
    out += index_put_case("index_put_empty_index", f, gen([3, 2], 0), [stored([], [0], i64)], gen([1], 1), True,
                          seed=66)
    out += index_put_case("index_put_empty_self", f, gen([0, 3], 0), [None, stored([1], [1], i64)], gen([1], 1),
                          False, seed=67)
    out += index_put_case("index_put_accumulate_pairs_duplicated", f, gen([3, 3], 0),
                          [stored([0, 2, 0, 0, 2], [5], i64), stored([1, 2, 1, 1, 2], [5], i64)], gen([5], 1), True,
                          seed=68)
    out += index_put_case("index_put_accumulate_float64", "float64", gen([4], 0), [stored([1, 1, 3], [3], i64)],
                          gen([3], 1), True, seed=69)
    # Accumulating many duplicates (CUDA atomics; multiples of 1/8 add exactly in float32).
    rng = random.Random(9)
    many = [rng.randrange(4) for _ in range(1500)]
    out += index_put_case("index_put_accumulate_1500_onto_4", f, gen([4], 0), [stored(many, [1500], i64)],
                          gen([1500], 1), True, seed=70)
    # CUDA's rule: an out-of-range index writes nothing.

    def skip_bad(x, c):
        y = x.clone()
        v = tensor_of(c["values"], c)
        y[1] = v[0]
        return y
    out += index_put_case("index_put_out_of_range_writes_nothing", f, gen([3], 0),
                          [stored([1, 3, -4], [3], i64)], gen([3], 1), False, seed=71, devices=("cuda",),
                          rule="slimcuda", expected=skip_bad)
    return out


# ---- masked_scatter ----

def masked_case(name, dtype, self_spec, mask_spec, source_spec, seed=1, devices=("cpu", "cuda"), rule=None,
                expected=None):
    c = {"name": name, "op": "masked_scatter", "dtype": dtype, "seed": seed, "self": self_spec, "mask": mask_spec,
         "source": source_spec}
    x, m, s = tensor_of(self_spec, c), tensor_of(mask_spec, c), tensor_of(source_spec, c)
    y = torch.masked_scatter(x, m, s) if expected is None else expected(x, m, s)
    if rule:
        c["rule"] = rule
    return per_device(finish(c, y, layout=True), devices)


def masked_cases():
    out = []
    b = "bool"
    m34 = [1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]
    for dt in MAIN + ["float64", "bool"]:
        out += masked_case(f"masked_scatter_3x4_{dt}", dt, gen([3, 4], 0), stored(m34, [3, 4], b), gen([10], 1),
                           seed=81)
    f = "float32"
    out += masked_case("masked_scatter_mask_broadcast", f, gen([2, 3, 4], 0), stored(m34, [3, 4], b),
                       gen([3, 5], 1), seed=82)
    out += masked_case("masked_scatter_self_broadcast", f, gen([4], 0), stored(m34, [3, 4], b), gen([6], 1), seed=83)
    out += masked_case("masked_scatter_strided", f, gen([4, 3], 0, [1, 4]), stored(m34, [4, 3], b, [1, 4]),
                       gen([2, 4], 1, [8, 2]), seed=84)
    out += masked_case("masked_scatter_all_true_exact_source", f, gen([2, 3], 0), stored([1] * 6, [2, 3], b),
                       gen([6], 1), seed=85)
    out += masked_case("masked_scatter_all_false_empty_source", f, gen([2, 3], 0), stored([0] * 6, [2, 3], b),
                       gen([0], 1), seed=86)
    out += masked_case("masked_scatter_empty", f, gen([0, 4], 0), stored([], [0, 4], b), gen([0], 1), seed=87)
    out += masked_case("masked_scatter_0d", f, gen([], 0), stored([1], [], b), gen([2], 1), seed=88)
    rng = random.Random(3)
    long_mask = [rng.randrange(2) for _ in range(3000)]
    out += masked_case("masked_scatter_3000", f, gen([3000], 0), stored(long_mask, [3000], b), gen([3000], 1),
                       seed=89)

    def short(x, m, s):  # CUDA's rule: positions past source's end keep self
        y = x.clone()
        pos = m.reshape(-1).nonzero().reshape(-1).tolist()
        for k, p in enumerate(pos[:s.numel()]):
            y.view(-1)[p] = s.reshape(-1)[k]
        return y
    out += masked_case("masked_scatter_short_source_keeps_self", f, gen([6], 0), stored([1, 1, 0, 1, 1, 1], [6], b),
                       gen([3], 1), seed=90, devices=("cuda",), rule="slimcuda", expected=short)
    return out


# ---- bad input ----

def bad(name, op, expect, message, devices=("cpu", "cuda"), **kw):
    c = {"name": name, "op": op + "_error", "dtype": kw.pop("dtype", "float32"), "seed": 1, "expect": expect,
         "message": message}
    c.update(kw)
    return per_device(c, devices)


def bad_cases():
    f, i64 = "float32", "int64"
    out = []
    s45 = gen([4, 5], 0)
    ix = stored([0, 1, 2, 3, 0], [1, 5], i64)
    src = gen([1, 5], 1)
    sc = dict(fn="scatter_src", self=s45, index=ix, src=src, dim=0)
    out += bad("scatter_float_index", "scatter", "InvalidArgument", "Expected dtype int32/int64 for index",
               **dict(sc, index=stored([0, 1, 2, 3, 0], [1, 5], f)))
    out += bad("scatter_int16_index", "scatter", "InvalidArgument", "Expected dtype int32/int64 for index",
               **dict(sc, index=stored([0, 1, 2, 3, 0], [1, 5], "int16")))
    out += bad("scatter_src_dtype", "scatter", "InvalidArgument", "Expected self.dtype to be equal to src.dtype",
               **dict(sc, src=gen([1, 5], 1, dtype="float16")))
    out += bad("scatter_out_sizes", "scatter", "InvalidArgument", "out has sizes [4, 4], self [4, 5]",
               **dict(sc, out=gen([4, 4], 2)))
    out += bad("scatter_out_dtype", "scatter", "InvalidArgument", "out is float64, self is float32",
               **dict(sc, out=gen([4, 5], 2, dtype="float64")))
    out += bad("scatter_dim_out_of_range", "scatter", "InvalidArgument", "dim 2 is out of range for a 2-d tensor",
               **dict(sc, dim=2))
    out += bad("scatter_index_rank", "scatter", "InvalidArgument",
               "Index tensor must have the same number of dimensions as self tensor",
               **dict(sc, index=stored([0, 1], [2], i64), src=gen([2], 1)))
    out += bad("scatter_index_larger_than_src", "scatter", "InvalidArgument",
               "Expected index [2, 5] to be no larger than self [4, 5] apart from dimension 0 and to be no larger "
               "size than src [1, 5]", **dict(sc, index=stored([0] * 10, [2, 5], i64)))
    out += bad("scatter_value_index_larger_than_self", "scatter", "InvalidArgument",
               "to be no larger than self [4, 5] apart from dimension 1",
               **dict(sc, fn="scatter_value", dim=1, value=1.0, index=stored([0] * 5, [5, 1], i64)))
    out += bad("scatter_index_out_of_range", "scatter", "InvalidArgument",
               "index 4 is out of bounds for dimension 0 with size 4", devices=("cpu",),
               **dict(sc, index=stored([0, 1, 4, 3, 0], [1, 5], i64)))
    out += bad("scatter_negative_index", "scatter", "InvalidArgument",
               "index -1 is out of bounds for dimension 0 with size 4", devices=("cpu",),
               **dict(sc, index=stored([0, 1, -1, 3, 0], [1, 5], "int32")))
    out += bad("scatter_reduce_out_of_range_keeps_out", "scatter", "InvalidArgument",
               "index 9 is out of bounds for dimension 0 with size 4", devices=("cpu",),
               **dict(sc, fn="scatter_reduce", reduce="sum", include_self=1, index=stored([0, 1, 9, 3, 0], [1, 5],
                                                                                          i64)))
    for what in ["out", "self", "index", "src"]:
        out += bad(f"scatter_null_{what}", "scatter", "InvalidArgument", f"null {what}", null=what, **sc)
    out += bad("scatter_value_overflows_int32", "scatter", "InvalidArgument",
               "cannot be converted to type int32 without overflow",
               **dict(sc, fn="scatter_value", value=1e12, dtype="int32", self=gen([4, 5], 0, dtype="int32")))
    out += bad("scatter_value_overflows_float16", "scatter", "InvalidArgument",
               "cannot be converted to type float16 without overflow",
               **dict(sc, fn="scatter_value", value=1e6, dtype="float16", self=gen([4, 5], 0, dtype="float16")))
    out += bad("scatter_reduce_unknown", "scatter", "InvalidArgument",
               "reduce argument must be either sum, prod, mean, amax or amin, got add",
               **dict(sc, fn="scatter_reduce", reduce="add", include_self=1))
    out += bad("scatter_reduce_null_reduce", "scatter", "InvalidArgument", "null reduce",
               **dict(sc, fn="scatter_reduce", include_self=1, null="reduce"))
    for fn in ["scatter_src", "scatter_value", "scatter_reduce"]:
        out.append(dict(sc, name=f"{fn}_cuda_given_cpu_tensors", op="scatter_error", fn=fn, dtype=f, seed=1,
                        device="cuda", tensors_on="cpu", requires="none", expect="InvalidArgument",
                        message="not a CUDA tensor", value=1.0, reduce="sum", include_self=1))

    s34 = gen([3, 4], 0)
    ip = dict(self=s34, indices=[stored([0, 2], [2], i64)], values=gen([2, 4], 1), accumulate=0)
    out += bad("index_put_float_index", "index_put", "InvalidArgument",
               "tensors used as indices must be long, int, byte or bool tensors",
               **dict(ip, indices=[stored([0, 2], [2], f)]))
    out += bad("index_put_too_many_indices", "index_put", "InvalidArgument",
               "too many indices for tensor of dimension 2 (got 3)",
               **dict(ip, indices=[stored([0], [1], i64)] * 3, values=gen([1], 1)))
    out += bad("index_put_mask_counts_dims", "index_put", "InvalidArgument",
               "too many indices for tensor of dimension 2 (got 3)",
               **dict(ip, indices=[stored([1] * 12, [3, 4], "bool"), stored([0], [1], i64)], values=gen([1], 1)))
    out += bad("index_put_all_none", "index_put", "InvalidArgument", "every index is None",
               **dict(ip, indices=[None, None]))
    out += bad("index_put_values_dtype", "index_put", "InvalidArgument",
               "Index put requires the source and destination dtypes match",
               **dict(ip, values=gen([2, 4], 1, dtype="float16")))
    out += bad("index_put_values_shape", "index_put", "InvalidArgument",
               "value tensor of shape [3, 4] cannot be broadcast to indexing result of shape [2, 4]",
               **dict(ip, values=gen([3, 4], 1)))
    out += bad("index_put_indices_not_broadcastable", "index_put", "InvalidArgument",
               "indexing tensors could not be broadcast together with shapes [2], [3]",
               **dict(ip, indices=[stored([0, 1], [2], i64), stored([0, 1, 2], [3], i64)], values=gen([1], 1)))
    out += bad("index_put_mask_shape", "index_put", "InvalidArgument",
               "The shape of the mask [2, 4] at index 0 does not match the shape of the indexed tensor [3, 4] at "
               "index 0", **dict(ip, indices=[stored([1] * 8, [2, 4], "bool")], values=gen([1], 1)))
    out += bad("index_put_index_out_of_range", "index_put", "InvalidArgument",
               "index 3 is out of bounds for dimension 0 with size 3", devices=("cpu",),
               **dict(ip, indices=[stored([0, 3], [2], i64)]))
    out += bad("index_put_negative_index_out_of_range", "index_put", "InvalidArgument",
               "index -5 is out of bounds for dimension 1 with size 4", devices=("cpu",),
               **dict(ip, indices=[None, stored([-5, 1], [2], "int32")], values=gen([3, 2], 1)))
    out += bad("index_put_0d_mask", "index_put", "NotSupported", "0-d bool index",
               **dict(ip, indices=[stored([1], [], "bool")], values=gen([1], 1)))
    out += bad("index_put_counted_mask_on_cuda", "index_put", "NotSupported",
               "needs the number of its true elements on the host", devices=("cuda",),
               **dict(ip, indices=[stored([1, 0, 1], [3], "bool")], values=gen([2, 4], 1)))
    for what in ["self", "values", "ret0"]:
        out += bad(f"index_put_null_{what}", "index_put", "InvalidArgument", f"null {what}", null=what, **ip)
    out.append(dict(ip, name="index_put_cuda_given_cpu_tensors", op="index_put_error", dtype=f, seed=1,
                    device="cuda", tensors_on="cpu", requires="none", expect="InvalidArgument",
                    message="not a CUDA tensor"))

    ms = dict(self=s34, mask=stored([1, 0, 1, 1] * 3, [3, 4], "bool"), source=gen([12], 1))
    out += bad("masked_scatter_uint8_mask", "masked_scatter", "InvalidArgument",
               "masked_scatter_ only supports boolean masks, but got mask with dtype uint8",
               **dict(ms, mask=stored([1, 0, 1, 1] * 3, [3, 4], "uint8")))
    out += bad("masked_scatter_source_dtype", "masked_scatter", "InvalidArgument",
               "expected self and source to have same dtypes but got float32 and float16",
               **dict(ms, source=gen([12], 1, dtype="float16")))
    out += bad("masked_scatter_not_broadcastable", "masked_scatter", "InvalidArgument",
               "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
               **dict(ms, mask=stored([1, 0, 1], [3], "bool")))
    out += bad("masked_scatter_source_too_short", "masked_scatter", "InvalidArgument",
               "Number of elements of source < number of ones in mask (8 < 9)", devices=("cpu",),
               **dict(ms, source=gen([2, 4], 1)))
    for what in ["self", "mask", "source", "ret0"]:
        out += bad(f"masked_scatter_null_{what}", "masked_scatter", "InvalidArgument", f"null {what}", null=what, **ms)
    out.append(dict(ms, name="masked_scatter_cuda_given_cpu_tensors", op="masked_scatter_error", dtype=f, seed=1,
                    device="cuda", tensors_on="cpu", requires="none", expect="InvalidArgument",
                    message="not a CUDA tensor"))
    return out


def check_bad_cases_against_torch(cases):
    """Every CPU error case that PyTorch can judge fails there too (a fixture that PyTorch
    accepts would make slimcuda stricter than ATen)."""
    for c in cases:
        if c["device"] != "cpu" or c.get("null") or c["op"] != "scatter_error" and c["op"] != "index_put_error" and \
                c["op"] != "masked_scatter_error":
            continue
        if c["expect"] == "NotSupported":
            continue
        try:
            if c["op"] == "scatter_error":
                x, ix = tensor_of(c["self"], c), tensor_of(c["index"], c)
                o = tensor_of(c["out"], c) if isinstance(c.get("out"), dict) else torch.empty_like(x)
                if c["fn"] == "scatter_src":
                    torch.scatter(x, c["dim"], ix, tensor_of(c["src"], c), out=o)
                elif c["fn"] == "scatter_value":
                    torch.scatter(x, c["dim"], ix, c["value"], out=o)
                else:
                    torch.scatter_reduce(x, c["dim"], ix, tensor_of(c["src"], c), c["reduce"], out=o)
            elif c["op"] == "index_put_error":
                torch.ops.aten.index_put(tensor_of(c["self"], c),
                                         [None if s is None else tensor_of(s, c) for s in c["indices"]],
                                         tensor_of(c["values"], c), bool(c["accumulate"]))
            else:
                torch.masked_scatter(tensor_of(c["self"], c), tensor_of(c["mask"], c), tensor_of(c["source"], c))
        except (RuntimeError, IndexError):
            continue
        if "out" in c and c["op"] == "scatter_error":
            continue  # ATen resizes a wrong out; slimcuda's out is the caller's preallocated buffer
        raise SystemExit(f"{c['name']}: PyTorch accepts it")


def main():
    cases = scatter_cases() + scatter_cuda_rule_cases() + index_put_cases() + masked_cases()
    errors = bad_cases()
    check_bad_cases_against_torch(errors)
    names = [c["name"] for c in cases + errors]
    assert len(names) == len(set(names)), "duplicate case names"
    doc = {
        "description": (
            "The scatter-family fallback ops (testdata/scatter_ops.json, written by tools/ops/make_scatter_fixtures.py "
            "with torch " + torch.__version__.split("+")[0] + " on the CPU) through aoti_torch_{cpu,cuda}_"
            "scatter_src_out, _scatter_value_out, _scatter_reduce_two_out, _index_put and _masked_scatter "
            "(csrc/ops/scatter/scatter_ops_test.cc and go/internal/opsfixture run every case). Each case once per "
            "device (name _<device>; cuda: requires gpu) unless it is one device's: the CPU's data-dependent "
            "checks, or \"rule\": \"slimcuda\" cases (CUDA writes nothing for an out-of-range index and leaves "
            "masked_scatter's positions past source's end as self, where ATen's kernel asserts on the device; "
            "values from that rule, not PyTorch). Operands {sizes, strides (optional: a view over a storage just "
            "large enough), dtype (optional: the case's), values (row-major) or gen: t (element j = "
            "(splitmix64(seed * 1000003 + t * 7919 + j) % 17 - 8) / 8, times 8 for integer dtypes (plus 8 for "
            "uint8), >= 0 for bool)}. op scatter: fn scatter_src / scatter_value / scatter_reduce, self, index, "
            "src or value, dim, reduce, include_self, out (optional: \"self\" for in place, or an operand; else a "
            "new contiguous tensor). op index_put: self, indices (operands or null for None), values, accumulate. "
            "op masked_scatter: self, mask, source. expected: the result row-major, expect_sizes (and "
            "expect_strides for the ops that return a new tensor); compare |got - want| <= atol + rtol * |want|, "
            "strings nan/inf/-inf those numbers (nan equals nan). op *_error: bad input with the same fields; "
            "null names a handle passed as NULL, tensors_on \"cpu\" builds the operands on the CPU for a CUDA op; "
            "expect the error code, message a fragment of slimcuda_last_error_message()."),
        "cases": cases + errors,
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
