#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""decoder.py OUT [--layers 2 --dim 128 --heads 4 --vocab 256 --max-pos 64 --batch 1 --steps 32]
          [--dtype bfloat16] [--weights so,archive] [--first-token 7] [--oob] [--runner]

A Llama-shaped decode step (run on the GPU machine, where PyTorch and CUDA are): token
embedding, `--layers` blocks of RMSNorm -> attention over a static KV cache -> RMSNorm ->
SiLU-gated MLP, a final RMSNorm and the LM head. The KV cache is kept in registered
buffers ([batch, heads, max_pos, head_dim] per layer, k and v) and written with
`index_copy_` at the step's position: the state a decode model keeps between runs. The
rotary tables are buffers too, read-only (so a loader cannot tell state from weights by
"buffer" alone). One step: ids int64 [batch, 1] and pos int64 [1] in, logits float32
[batch, vocab] out.

Exports the libtorch-free way (`link_libtorch=False`, kernels embedded) to
OUT/<weights>/model.pt2 for each of --weights: `so` (weights inside the library, the
default) and `archive` (package_constants_in_so=False + binary_blob, how models of several
GB are packaged). Then greedy-decodes --steps steps in eager PyTorch from --first-token at
position 0 and writes OUT/reference.json: the tokens, the tolerance, and
OUT/logits.f32.bin (steps x batch x vocab float32, eager's logits at each step). The
slimcuda tests (csrc/c_api/decode_test.cc, go/slimcuda/decode_test.go) and
examples/decode read them through SLIMCUDA_DECODER_DIR=OUT.

--runner also loads each .pt2 with PyTorch's own runner (torch._inductor.aoti_load_package)
and decodes with it: its tokens go into reference.json beside eager's ("runner_tokens"),
and its time per step ("runner_ms_per_step", --steps steps without reading logits back, as
bench/decode_benchmark times slimcuda). --runner-only does that alone for an OUT made
before (exports of several sizes run side by side, their timings one after another). --oob writes OUT/oob/model.pt2: the same
model whose cache write is not bounds-checked (a position past the cache writes out of
bounds), for the sticky-error tests. --profile (with --runner or --runner-only) also writes
the runner's GPU kernels per step (torch.profiler) to OUT/runner_kernels_<variant>.json.
"""
import argparse
import json
import os
import sys
import time
import zipfile

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(nn.Module):
    def __init__(self, dim, heads, max_pos, batch, dtype):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        hidden = 4 * dim
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        shape = (batch, heads, max_pos, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=dtype))
        self.register_buffer("v_cache", torch.zeros(shape, dtype=dtype))

    def forward(self, x, pos, cos, sin, mask):
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 1, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        a = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, 1, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, a, dtype):
        super().__init__()
        self.max_pos = a.max_pos
        self.embed = nn.Embedding(a.vocab, a.dim)
        self.blocks = nn.ModuleList(Block(a.dim, a.heads, a.max_pos, a.batch, dtype) for _ in range(a.layers))
        self.norm = RMSNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)
        hd = a.dim // a.heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(a.max_pos).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)
        self.register_buffer("rope_cos", ang.cos().to(dtype))
        self.register_buffer("rope_sin", ang.sin().to(dtype))

    def forward(self, ids, pos):
        x = self.embed(ids)
        cos, sin = self.rope_cos[pos].view(1, 1, 1, -1), self.rope_sin[pos].view(1, 1, 1, -1)
        mask = (torch.arange(self.max_pos, device=ids.device) <= pos).view(1, 1, 1, -1)
        for blk in self.blocks:
            x = blk(x, pos, cos, sin, mask)
        return self.head(self.norm(x)).float().view(ids.shape[0], -1)


def build(a, dtype):
    torch.manual_seed(a.seed)
    with torch.device("cuda"):
        m = Decoder(a, dtype)
        # Larger-than-default weights keep the logits far apart, so greedy tokens do not
        # hinge on the last bit of bf16 rounding.
        for p in m.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=1.5 / p.shape[1] ** 0.5)
        nn.init.normal_(m.embed.weight, std=1.0)
    return m.to(dtype).eval()


def reset_caches(m):
    for blk in m.blocks:
        blk.k_cache.zero_()
        blk.v_cache.zero_()


def greedy(step, a, first):
    """Greedy decoding with `step(ids, pos) -> logits`: the tokens fed at each step and the logits."""
    ids = torch.full((a.batch, 1), first, dtype=torch.int64, device="cuda")
    for b in range(a.batch):  # each row of a batch starts from its own token
        ids[b, 0] = (first + 31 * b) % a.vocab
    tokens, logits = [], []
    for s in range(a.steps):
        tokens.append(ids[:, 0].tolist())
        out = step(ids, torch.tensor([s], dtype=torch.int64, device="cuda"))
        logits.append(out.float().cpu())
        ids = out.argmax(-1).view(a.batch, 1)
    return tokens, torch.stack(logits)


WEIGHTS = {
    "so": {},
    "archive": {"aot_inductor.package_constants_in_so": False,
                "aot_inductor.package_constants_on_disk_format": "binary_blob"},
}


def export(m, a, name, extra=None):
    d = os.path.join(a.out, name)
    os.makedirs(d, exist_ok=True)
    ids = torch.zeros((a.batch, 1), dtype=torch.int64, device="cuda")
    pos = torch.zeros((1,), dtype=torch.int64, device="cuda")
    configs = {"aot_inductor.link_libtorch": False, "aot_inductor.embed_kernel_binary": True}
    configs.update(WEIGHTS["archive" if name == "archive" else "so"])
    configs.update(extra or {})
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(m, (ids, pos))
        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(d, "model.pt2"),
                                                        inductor_configs=configs)
    # What the export records about the buffers it writes: kept for docs/state.md.
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            if n.endswith(".wrapper.cpp"):
                with open(os.path.join(d, "wrapper.cpp"), "wb") as f:
                    f.write(z.read(n))
            if n.endswith(".wrapper.so"):  # the library alone, for a package (decode_test)
                with open(os.path.join(d, "model.so"), "wb") as f:
                    f.write(z.read(n))
        with open(os.path.join(d, "entries.txt"), "w") as f:
            f.write("\n".join(z.namelist()) + "\n")
    sig = ep.graph_signature
    with open(os.path.join(d, "signature.txt"), "w") as f:
        f.write(f"buffers_to_mutate: {dict(sig.buffers_to_mutate)}\n")
        f.write(f"parameters: {list(sig.parameters)}\nbuffers: {list(sig.buffers)}\n")
    print(f"decoder: {name}: exported in {time.time() - t0:.0f} s", flush=True)
    return path


def time_runner(a, ref, path, name, tokens, logits):
    """PyTorch's own runner on the export: greedy tokens and logits against eager's, and its
    time per step (see bench/decode_benchmark for slimcuda's)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import export_models  # noqa: E402 - one definition of how PyTorch's runner loads these
    export_models.expose_libtorch_shims()
    runner = torch._inductor.aoti_load_package(path)
    with torch.no_grad():
        got, got_logits = greedy(lambda i, s: runner(i, s), a, a.first_token)
        ids = torch.full((a.batch, 1), 7, dtype=torch.int64, device="cuda")
        # Each step's position its own 16-byte aligned element, made before timing, as
        # bench/decode_benchmark does for slimcuda: no host copy between steps.
        positions = torch.zeros((a.steps, 2), dtype=torch.int64, device="cuda")
        positions[:, 0] = torch.arange(a.steps, device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for s in range(a.steps):
            runner(ids, positions[s, 0:1])
        torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / a.steps
    if a.profile:
        profile_runner(a, runner, ids, positions, name)
    err = float((got_logits - logits).abs().max())
    ref.setdefault("runner_tokens", {})[name] = got
    ref.setdefault("runner_ms_per_step", {})[name] = round(ms, 4)
    ref.setdefault("runner_max_abs", {})[name] = err
    print(f"decoder: {name}: PyTorch's runner {'matches' if got == tokens else 'DIFFERS from'} eager's "
          f"tokens, max |logits - eager| {err:.3g}, {ms:.3f} ms/step", flush=True)


def profile_runner(a, runner, ids, positions, name):
    """--profile: the runner's GPU kernels per step from torch.profiler, written to
    OUT/runner_kernels_<name>.json (kernel name, launches and µs per step, the largest
    first): set beside ncu's view of slimcuda's kernels of the same step (docs/benchmarks.md)."""
    import export_models  # noqa: E402 - on sys.path since time_runner
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for s in range(a.steps):
            runner(ids, positions[s, 0:1])
        torch.cuda.synchronize()
    rows = [{"kernel": k[:200], "per_step": n, "us_per_step": round(us, 2)}
            for k, n, us in export_models.kernel_times(prof, a.steps)]
    with open(os.path.join(a.out, f"runner_kernels_{name}.json"), "w") as f:
        json.dump({"steps": a.steps, "gpu_us_per_step": round(sum(r["us_per_step"] for r in rows), 2),
                   "kernels": rows}, f, indent=1)


def runner_only(a):
    """--runner-only: time PyTorch's runner on the exports an earlier run made in OUT (after
    parallel exports, so that nothing else uses the GPU meanwhile)."""
    import numpy as np
    with open(os.path.join(a.out, "reference.json")) as f:
        ref = json.load(f)
    a.steps, a.batch, a.first_token = ref["steps"], ref["batch"], ref["first_token"]
    shape = (ref["steps"], ref["batch"], ref["vocab"])
    logits = torch.from_numpy(np.fromfile(os.path.join(a.out, ref["logits_file"]), dtype=np.float32).reshape(shape))
    for name, rel in ref["variants"].items():
        if name != "oob":
            time_runner(a, ref, os.path.join(a.out, rel), name, ref["tokens"], logits)
    with open(os.path.join(a.out, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--max-pos", type=int, default=64)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    p.add_argument("--weights", default="so,archive")
    p.add_argument("--first-token", type=int, default=7)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--oob", action="store_true")
    p.add_argument("--runner", action="store_true")
    p.add_argument("--runner-only", action="store_true")
    p.add_argument("--profile", action="store_true")
    a = p.parse_args()
    if a.runner_only:
        runner_only(a)
        return
    if a.steps > a.max_pos:
        sys.exit("--steps must not exceed --max-pos")
    dtype = getattr(torch, a.dtype)
    os.makedirs(a.out, exist_ok=True)
    m = build(a, dtype)
    with torch.no_grad():
        tokens, logits = greedy(lambda i, s: m(i, s), a, a.first_token)
    # Eager again from a fresh cache: the reference must not depend on the run.
    reset_caches(m)
    with torch.no_grad():
        again, _ = greedy(lambda i, s: m(i, s), a, a.first_token)
    if again != tokens:
        sys.exit("eager decoding is not reproducible")
    logits.numpy().tofile(os.path.join(a.out, "logits.f32.bin"))
    # What a step reads of the weights: all of them but the embedding table, of which it
    # reads one row per token (the memory roofline's bytes); the caches are reported apart.
    n_params = sum(t.numel() * t.element_size() for n, t in m.named_parameters() if n != "embed.weight")
    cache_bytes = sum(t.numel() * t.element_size() for n, t in m.named_buffers() if n.endswith("_cache"))
    ref = {"steps": a.steps, "batch": a.batch, "vocab": a.vocab, "max_pos": a.max_pos, "layers": a.layers,
           "dim": a.dim, "heads": a.heads, "dtype": a.dtype, "first_token": a.first_token, "tokens": tokens,
           "logits_file": "logits.f32.bin", "weight_bytes": n_params, "cache_bytes": cache_bytes,
           # bf16 weights and activations, float32 logits: what two correct bf16 runs differ by.
           "tolerance": {"abs": 0.15 if a.dtype != "float32" else 1e-3, "rel": 0.05 if a.dtype != "float32" else 1e-3},
           "torch": torch.__version__, "variants": {}}
    for name in [w for w in a.weights.split(",") if w]:
        reset_caches(m)
        path = export(m, a, name)
        ref["variants"][name] = os.path.relpath(path, a.out)
        if a.runner:
            time_runner(a, ref, path, name, tokens, logits)
    if a.oob:
        reset_caches(m)
        path = export(m, a, "oob", {"assert_indirect_indexing": False})
        ref["variants"]["oob"] = os.path.relpath(path, a.out)
    with open(os.path.join(a.out, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1)
    print(f"decoder: {a.out}/reference.json: {a.steps} steps, tokens {tokens[:8]}...", flush=True)


if __name__ == "__main__":
    main()
