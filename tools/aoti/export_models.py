#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Export the AOTInductor model zoo for slimcuda (run on the GPU machine: PyTorch + CUDA,
torchvision, timm and transformers for their models; no network needed: random weights from
configs).

  python3 tools/aoti/export_models.py OUT_DIR [--only NAME ...] [--jobs 8] [--recipe default|triton]
                                      [--weights so|archive|both] [--deadline UNIX_TIME]
  python3 tools/aoti/export_models.py OUT_DIR --time-runner N [--warmup W] [--only VARIANT ...]
  python3 tools/aoti/export_models.py --list [--recipe R] [--weights W]

Variants: each model of ZOO is exported with each of its recipes (default: "default"; the
transformers also "triton") and each weights choice: variant NAME, NAME__triton,
NAME__archive, NAME__triton__archive, each its own OUT_DIR/VARIANT/. --only takes variants or
models (a model: every variant of it the other options select).
Recipes: "default" is the way a user exports without libtorch: link_libtorch off,
kernels embedded in the .so, nothing else (GEMMs, convolutions and attention become
aoti_torch_cuda_* ATen fallbacks: cuBLAS/cuDNN in slimcuda). "triton" adds max_autotune with
Triton for GEMMs and convolutions. Weights (WEIGHTS): "so" in the .so (what pt2_to_package.py
converts), "archive" in a blob beside it in the .pt2 (package_constants_in_so=False +
package_constants_on_disk_format="binary_blob").

OUT_DIR/VARIANT/ gets model.pt2, meta.json (dtypes, sizes, cases, tolerance, recipe, weights,
attention implementation, export seconds), shims.json (the aoti_torch_* names the .so leaves
undefined: `nm -D -u`), export.log and, per case, inputs.json + input_<i>.bin (raw row-major,
the input's dtype: what zoo_runner reads) and input_<i>.npy (the same tensor as NumPy .npy,
what `slimcuda run -inputs` reads; bfloat16 as its '<u2' bit patterns, the CLI's convention),
expected.json + expected_<i>.bin (eager output in its own dtype) + expected_<i>.f32.bin (the
same as float32, what the comparisons read), each output with the shape the compiled model
returns. The eager reference is the model run on CUDA in its own dtype with PyTorch's
defaults, as a user would (TF32 on for cuDNN convolutions, off for matmuls).
Exports run in parallel worker processes (--jobs), slowest first; the parent prints
"exported VARIANT" (or "failed VARIANT", or "skipped VARIANT" when --deadline passed before it
started) as each one ends, so a caller can pipeline.
--device cpu exports for the CPU instead: a dry run of this script without a GPU (default
recipe only: the Triton recipe needs a GPU).
"""
import argparse
import contextlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

RECIPES = {  # where the weights go is WEIGHTS' business
    "default": {
        "aot_inductor.link_libtorch": False,
        "aot_inductor.embed_kernel_binary": True,
    },
}
RECIPES["triton"] = dict(RECIPES["default"], **{
    "max_autotune": True,
    "max_autotune_gemm_backends": "TRITON",
    "max_autotune_conv_backends": "TRITON",
})

# Comparison with eager, |slimcuda - eager| <= atol + rtol * |eager| elementwise, in float32:
# the one place the tolerances are stated (written into meta.json; zoo_runner, compare.py and
# the PyTorch-runner check read them from there).
TOLERANCES = {
    # float32 GEMMs: PyTorch's default is full float32 (TF32 off for matmuls), so only the
    # order of summation differs between Inductor's fused graph and eager.
    "float32": {"atol": 1e-4, "rtol": 1e-3},
    # float32 with convolutions: PyTorch enables TF32 for cuDNN convolutions by default
    # (torch.backends.cudnn.allow_tf32), so eager and slimcuda each round the convolution
    # operands to a 10-bit mantissa (2^-11 relative) and may pick different cuDNN engines;
    # through tens of layers that is ~1e-3 of the activations' scale, like fp16.
    "float32_tf32": {"atol": 5e-3, "rtol": 1e-2},
    # float16 (10-bit mantissa) and bfloat16 (7-bit): eager rounds after every op, Inductor
    # once per fused kernel, so the two differ by a few units in the last place per layer.
    "float16": {"atol": 1e-2, "rtol": 2e-2},
    "bfloat16": {"atol": 5e-2, "rtol": 5e-2},
    "int64": {"atol": 0.0, "rtol": 0.0},
    "bool": {"atol": 0.0, "rtol": 0.0},
}

# A detector's outputs per image, in this order (the keys of torchvision's result dicts).
DETECTION_FIELDS = ("boxes", "scores", "labels", "masks")

# The warm-up before timing: the same as zoo_runner's default (--warmup).
WARMUP = 200

_torch = None


def torch_mod():
    global _torch
    if _torch is None:
        import torch
        _torch = torch
    return _torch


# ---- the zoo -------------------------------------------------------------------------------

def _models():
    torch = torch_mod()
    nn, F = torch.nn, torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 32)

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x)))

    class AttentionBlock(nn.Module):
        """Pre-norm transformer block: layer norm, multi-head self-attention written out with
        matmuls and softmax (no fused SDPA kernel), residual, layer norm, GELU MLP, residual."""

        def __init__(self, dim=64, heads=4):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, s, d = x.shape
            h = self.ln1(x)
            q, k, v = self.qkv(h).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            att = torch.softmax((q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5, dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class VisionBlock(nn.Module):
        """Conv-free: per-channel normalization over H and W, broadcast scale and shift, GELU,
        a channel-mixing linear, global average pooling and a classifier."""

        def __init__(self, channels=16, classes=10):
            super().__init__()
            self.scale = nn.Parameter(torch.randn(1, channels, 1, 1))
            self.shift = nn.Parameter(torch.randn(1, channels, 1, 1))
            self.mix = nn.Linear(channels, channels)
            self.head = nn.Linear(channels, classes)

        def forward(self, x):
            mean = x.mean(dim=(2, 3), keepdim=True)
            var = x.var(dim=(2, 3), keepdim=True, unbiased=False)
            y = F.gelu((x - mean) / torch.sqrt(var + 1e-5) * self.scale + self.shift)
            y = self.mix(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2) + x
            return self.head(y.mean(dim=(2, 3)))

    class DynamicMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 16)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    class DeepMLP(nn.Module):
        """Linear+bias layers (addmm, possibly _addmm_activation with the ReLU)."""

        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                     nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10))

        def forward(self, x):
            return self.net(x)

    class LSTMNet(nn.Module):
        """2-layer LSTM (GEMMs + generated gate kernels) and a head; two outputs."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(32, 64, num_layers=2, batch_first=True)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            y, (h, _) = self.lstm(x)
            return self.head(y[:, -1]), h

    class GRUNet(nn.Module):
        """2-layer GRU and a head; two outputs (the last step's logits, h_n)."""

        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(32, 64, num_layers=2, batch_first=True)
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            y, h = self.gru(x)
            return self.head(y[:, -1]), h

    def KVDecoder(vocab=256, dim=128, heads=4, layers=2, max_pos=64):
        """decoder.py's Llama-shaped decode step (a KV cache in registered buffers, written
        at `pos`), float32: ids int64 [1, 1], pos int64 [1] in."""
        import argparse as _argparse
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import decoder
        a = _argparse.Namespace(vocab=vocab, dim=dim, heads=heads, layers=layers, max_pos=max_pos, batch=1)
        m = decoder.Decoder(a, torch.float32)
        for p in m.parameters():  # as decoder.build: logits far apart
            if p.dim() == 2:
                nn.init.normal_(p, std=1.5 / p.shape[1] ** 0.5)
        return m

    class AudioConv1d(nn.Module):
        """An audio front end: strided Conv1d on the waveform, BN, ReLU, padded and dilated
        Conv1d (one without bias), max pool, mean over time, classifier."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(1, 32, kernel_size=80, stride=16)
            self.bn1 = nn.BatchNorm1d(32)
            self.conv2 = nn.Conv1d(32, 64, kernel_size=3, padding=1)
            self.conv3 = nn.Conv1d(64, 64, kernel_size=3, padding=2, dilation=2, bias=False)
            self.head = nn.Linear(64, 12)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.max_pool1d(F.relu(self.conv2(x)), 2)
            x = F.relu(self.conv3(x))
            return self.head(x.mean(dim=2))

    class ConvOptions(nn.Module):
        """Every 2-D convolution option: plain, strided depthwise without bias, grouped and
        dilated, transposed (stride 2), transposed grouped with output padding."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(8, 16, 3, padding=1)
            self.dw = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False)
            self.gc = nn.Conv2d(16, 32, 3, padding=2, dilation=2, groups=4)
            self.t1 = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
            self.t2 = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1, groups=2, bias=False)

        def forward(self, x):
            x = F.relu(self.c1(x))
            x = F.relu(self.dw(x))
            x = F.relu(self.gc(x))
            x = F.relu(self.t1(x))
            return self.t2(x)

    class Conv3dNet(nn.Module):
        """3-D convolutions: padded, strided and transposed."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv3d(2, 8, 3, padding=1)
            self.c2 = nn.Conv3d(8, 16, 3, stride=2, padding=1)
            self.t1 = nn.ConvTranspose3d(16, 4, 2, stride=2)

        def forward(self, x):
            return self.t1(F.relu(self.c2(F.relu(self.c1(x)))))

    class EmbeddingMLP(nn.Module):
        """int64 token ids: embedding, mean over the sequence, Linear."""

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 64)
            self.fc = nn.Linear(64, 8)

        def forward(self, ids):
            return self.fc(self.emb(ids).mean(dim=1))

    class EmbeddingBagRecSys(nn.Module):
        """A recommender's sparse features: int64 ids [B, L] per table through nn.EmbeddingBag
        (sum and mean bags of L ids each, aten._embedding_bag), concatenated into an MLP."""

        def __init__(self, tables=(1000, 500), dim=32, hidden=64):
            super().__init__()
            self.bags = nn.ModuleList([nn.EmbeddingBag(tables[0], dim, mode="sum"),
                                       nn.EmbeddingBag(tables[1], dim, mode="mean")])
            self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        def forward(self, ids):
            # Both tables read the same ids (the second one modulo its size).
            a = self.bags[0](ids)
            b = self.bags[1](ids % self.bags[1].num_embeddings)
            return self.mlp(torch.cat([a, b], dim=1))

    class SpatialTransformer(nn.Module):
        """A spatial transformer: a small conv net predicts an affine transform (initialised
        near the identity), F.affine_grid + F.grid_sample (bilinear) warp the input, a bicubic
        F.interpolate upsamples it, a classifier follows."""

        def __init__(self, channels=3, classes=10):
            super().__init__()
            self.loc = nn.Sequential(nn.Conv2d(channels, 8, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6))
            nn.init.normal_(self.loc[-1].weight, std=0.01)
            with torch.no_grad():
                self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
            self.head = nn.Sequential(nn.Conv2d(channels, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                      nn.Flatten(), nn.Linear(16, classes))

        def forward(self, x):
            theta = self.loc(x).view(-1, 2, 3)
            grid = F.affine_grid(theta, list(x.shape), align_corners=False)
            warped = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
            up = F.interpolate(warped, scale_factor=2.0, mode="bicubic", align_corners=False)
            return self.head(up)

    class HFTensors(nn.Module):
        """A Hugging Face model with positional tensor inputs (named by `args`) returning the
        named fields of its ModelOutput as a tuple: what an exported graph can return."""

        def __init__(self, model, args, fields, **call_kwargs):
            super().__init__()
            self.model, self.args, self.fields, self.call_kwargs = model, args, fields, call_kwargs

        def forward(self, *tensors):
            out = self.model(**dict(zip(self.args, tensors)), return_dict=True, **self.call_kwargs)
            return tuple(getattr(out, name) for name in self.fields)

    def torchvision_model(name, **kwargs):
        def make():
            import torchvision
            if name == "VisionTransformer":  # a class, configured by kwargs (no registry name)
                model = torchvision.models.VisionTransformer(**kwargs)
                # torchvision zero-initialises the classifier, so the logits would be exactly 0
                # and a comparison would test nothing: give it random weights like the rest.
                nn.init.normal_(model.heads.head.weight, std=0.02)
                nn.init.normal_(model.heads.head.bias, std=0.02)
                return model
            return getattr(torchvision.models, name)(weights=None, **kwargs)
        return make

    class Detector(nn.Module):
        """A torchvision detector as a zoo model: images [B, 3, H, W] in (split into the list
        the detector takes), per image its detections out as tensors, flattened: boxes
        [n, 4] float32, scores [n] float32, labels [n] int64 (and Mask R-CNN's masks
        [n, 1, H, W] float32), n decided by the data (score threshold, nms). In training mode
        (calibrate_batchnorm's passes only: a detector in training wants targets) it runs the
        transform and the backbone alone, which hold every BatchNorm."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, images):
            if self.training:
                return self.model.backbone(self.model.transform(list(images))[0].tensors)
            flat = []
            for d in self.model(list(images)):
                flat += [d[k] for k in DETECTION_FIELDS if k in d]
            return tuple(flat)

    def detection_model(name, classifier=None, classifier_scale=1.0, **kwargs):
        """torchvision.models.detection.NAME with random weights (weights=None,
        weights_backbone=None) and the kwargs (thresholds, sizes), wrapped in Detector.
        Random weights give every class about the same score (softmax ≈ 1/91), so the
        detections would be a dense band of near-equal scores where any rounding reorders
        them; the weights of the final classification layer (parameter names matching the
        regular expression `classifier`) are multiplied by classifier_scale, which spreads
        the scores and leaves the highest ones well apart."""
        def make():
            import re
            import torchvision
            model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **kwargs)
            if classifier:
                with torch.no_grad():
                    scaled = [p.mul_(classifier_scale) for n, p in model.named_parameters()
                              if re.fullmatch(classifier, n)]
                assert scaled, f"{name}: no parameter matches {classifier}"
            return Detector(model)
        return make

    def timm_model(name, **kwargs):
        def make():
            import timm
            return timm.create_model(name, pretrained=False, **kwargs)
        return make

    def hf_model(name, **kwargs):
        """A transformers model from its config (random weights, no network). SDPA attention
        is asked for through the config (attn_implementation), where this version takes it."""
        def make():
            import transformers
            config_cls, model_cls, args, fields, call_kwargs = HF_MODELS[name]
            try:
                config = getattr(transformers, config_cls)(attn_implementation="sdpa", **kwargs)
            except TypeError:  # an old version without the argument: its default attention
                config = getattr(transformers, config_cls)(**kwargs)
            model = getattr(transformers, model_cls)(config)
            return HFTensors(model, args, fields, **call_kwargs)
        return make

    return locals()


# transformers models: config class, model class, the forward's tensor arguments in input
# order, the ModelOutput fields returned, extra forward arguments. Long-stable APIs only.
HF_MODELS = {
    "bert": ("BertConfig", "BertModel", ("input_ids", "attention_mask"),
             ("last_hidden_state", "pooler_output"), {}),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", ("input_ids",), ("logits",), {"use_cache": False}),
    "vit": ("ViTConfig", "ViTModel", ("pixel_values",), ("last_hidden_state", "pooler_output"), {}),
    "t5_encoder": ("T5Config", "T5EncoderModel", ("input_ids", "attention_mask"), ("last_hidden_state",), {}),
    "llama": ("LlamaConfig", "LlamaForCausalLM", ("input_ids", "attention_mask"), ("logits",), {"use_cache": False}),
    # Mixture of experts: its experts' grouped GEMM is transformers' custom op (or
    # torch._grouped_mm for bfloat16), which AOTInductor runs through the proxy executor.
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", ("input_ids",), ("logits",), {"use_cache": False}),
    # Two more routings: Qwen2-MoE adds a shared expert behind a sigmoid gate; OLMoE routes
    # top-k of 8 without renormalizing the weights (norm_topk_prob False).
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM", ("input_ids",), ("logits",), {"use_cache": False}),
    "olmoe": ("OlmoeConfig", "OlmoeForCausalLM", ("input_ids",), ("logits",), {"use_cache": False}),
}


def f(sizes, dtype="float32", high=None, kind=None):
    """An input: sizes (dim 0 is the batch), dtype, for integer inputs the bound of randint;
    kind "mask": an attention mask of 1s then 0s (padding), each row at least half 1s;
    kind "image": uniform in [0, 1) (what torchvision's detectors normalize)."""
    return {"sizes": list(sizes), "dtype": dtype, "high": high, "kind": kind}


# Small transformer configs: 2 layers, hidden 128, 4 heads (head dim 32), sequences of 64
# tokens, so that an export takes about a minute on the GPU machine.
BERT = dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
            max_position_embeddings=128)
GPT2 = dict(vocab_size=1000, n_positions=128, n_embd=128, n_layer=2, n_head=4)
VIT = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, image_size=64,
           patch_size=8)
T5 = dict(vocab_size=1000, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4)
LLAMA = dict(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=128)
BERT_TINY = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                 max_position_embeddings=32)
GPT2_TINY = dict(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2)
LLAMA_TINY = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=1, max_position_embeddings=32)
MIXTRAL = dict(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=128)
QWEN2_MOE = dict(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                 shared_expert_intermediate_size=256, max_position_embeddings=128)
OLMOE = dict(vocab_size=1000, hidden_size=128, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=4, num_experts=8, num_experts_per_tok=2, max_position_embeddings=128, eos_token_id=2)
MIXTRAL_TINY = dict(vocab_size=64, hidden_size=32, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=16)
T5_TINY = dict(vocab_size=128, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2)
VIT_TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=32,
                patch_size=8)
TRANSFORMER = {"recipes": ("default", "triton")}
# Inductor settings of the detectors' exports (their ZOO comment says why).
DETECTION_INDUCTOR = {"layout_optimization": False}  # exported both ways: the issue asks for both

# name -> (factory, the model dtype, inputs, dynamic batch bounds or None, test batch sizes,
# options). factory: a key of _models(), or "torchvision:NAME" / "timm:NAME" / "hf:NAME"
# (HF_MODELS); options: "kwargs" for the factory, "recipes" to export (default: the default
# recipe only; each other recipe is a variant NAME__RECIPE), "in_zoo": False for a model
# exported only when --only names it, "inductor" more Inductor settings for its compile,
# "detection" a torchvision detector (detection_export.patched() around the export, its
# outputs matched as detections). Listed slowest export first: the workers take them in
# this order.
ZOO = {
    # torchvision detectors with their post-processing (score threshold, per-class nms through
    # torchvision::nms, RoIAlign through torchvision::roi_align, Mask R-CNN's mask pasting):
    # exported inside detection_export.patched() (export-friendly replacements of the
    # functions torch.export cannot trace), one 320x320 image, outputs per image boxes,
    # scores, labels (, masks) of a data-dependent count, matched as detections (compare.py).
    # Random weights score every class alike (softmax ~1/91, RetinaNet's prior 0.01): the
    # final classifier's weights are scaled (detection_model) to spread the scores, and the
    # score threshold (a model kwarg) set so that some 20-45 boxes survive on the CPU
    # reference (docs/aoti-zoo.md has the counts), well under the per-image cap. First in the
    # zoo: their compiles are the slowest (SSDlite's 90 per-class filters took 872 s on 2 cores).
    # DETECTION_INDUCTOR: Inductor's layout optimization (on by default) miscompiles two
    # convolutions in a row over a batch of data-dependent size (Mask R-CNN's mask head runs on
    # the detections): PyTorch 2.11's CPU export gave values off by ~1 against eager, the
    # exported program itself matching eager; with it off they match (docs/fallback-ops.md).
    "det_ssdlite320_mobilenet_v3_large": (
        "detection:ssdlite320_mobilenet_v3_large", "float32", [f((1, 3, 320, 320), kind="image")], None, [1],
        {"kwargs": dict(score_thresh=0.09, classifier=r"head\.classification_head\.module_list\.\d+\.1\.weight",
                        classifier_scale=20.0),
         "detection": True, "inductor": DETECTION_INDUCTOR}),
    "det_maskrcnn_resnet50_fpn": (
        "detection:maskrcnn_resnet50_fpn", "float32", [f((1, 3, 320, 320), kind="image")], None, [1],
        {"kwargs": dict(min_size=320, max_size=320, box_score_thresh=0.85,
                        classifier=r"roi_heads\.box_predictor\.cls_score\.weight", classifier_scale=10.0),
         "detection": True, "inductor": DETECTION_INDUCTOR}),
    "det_retinanet_resnet50_fpn": (
        "detection:retinanet_resnet50_fpn", "float32", [f((1, 3, 320, 320), kind="image")], None, [1],
        {"kwargs": dict(min_size=320, max_size=320, score_thresh=0.1,
                        classifier=r"head\.classification_head\.cls_logits\.weight", classifier_scale=30.0),
         "detection": True, "inductor": DETECTION_INDUCTOR}),
    "det_fasterrcnn_mobilenet_v3_large_fpn": (
        "detection:fasterrcnn_mobilenet_v3_large_fpn", "float32", [f((1, 3, 320, 320), kind="image")], None, [1],
        {"kwargs": dict(min_size=320, max_size=320, box_score_thresh=0.12,
                        classifier=r"roi_heads\.box_predictor\.cls_score\.weight", classifier_scale=10.0),
         "detection": True, "inductor": DETECTION_INDUCTOR}),
    "timm_efficientnet_b0": ("timm:efficientnet_b0", "float32", [f((2, 3, 64, 64))], None, [2], {}),
    "hf_bert": ("hf:bert", "float32", [f((2, 64), "int64", high=1000), f((2, 64), "int64", kind="mask")],
                (2, 16), [2, 5], dict(TRANSFORMER, kwargs=BERT)),
    "hf_gpt2": ("hf:gpt2", "float32", [f((2, 64), "int64", high=1000)], None, [2], dict(TRANSFORMER, kwargs=GPT2)),
    "hf_vit": ("hf:vit", "float32", [f((2, 3, 64, 64))], None, [2], dict(TRANSFORMER, kwargs=VIT)),
    "timm_vit_tiny": ("timm:vit_tiny_patch16_224", "float32", [f((2, 3, 64, 64))], None, [2],
                      dict(TRANSFORMER, kwargs=dict(img_size=64, depth=4))),
    "tv_vit": ("torchvision:VisionTransformer", "float32", [f((2, 3, 64, 64))], None, [2],
               dict(TRANSFORMER, kwargs=dict(image_size=64, patch_size=8, num_layers=2, num_heads=4, hidden_dim=128,
                                             mlp_dim=256, num_classes=10))),
    "hf_bert_fp16": ("hf:bert", "float16", [f((2, 64), "int64", high=1000), f((2, 64), "int64", kind="mask")],
                     None, [2], {"kwargs": BERT}),
    "hf_gpt2_bf16": ("hf:gpt2", "bfloat16", [f((2, 64), "int64", high=1000)], None, [2], {"kwargs": GPT2}),
    "tv_vit_bf16": ("torchvision:VisionTransformer", "bfloat16", [f((2, 3, 64, 64), "bfloat16")], None, [2],
                    {"kwargs": dict(image_size=64, patch_size=8, num_layers=2, num_heads=4, hidden_dim=128,
                                    mlp_dim=256, num_classes=10)}),
    "tv_mobilenet_v3_small_fp16": ("torchvision:mobilenet_v3_small", "float16",
                                   [f((2, 3, 64, 64), "float16")], None, [2], {}),
    "tv_resnet18": ("torchvision:resnet18", "float32", [f((2, 3, 64, 64))], None, [2], {}),
    "tv_resnet18_bf16": ("torchvision:resnet18", "bfloat16", [f((2, 3, 64, 64), "bfloat16")], None, [2], {}),
    "lstm": ("LSTMNet", "float32", [f((2, 16, 32))], None, [2], {}),
    "audio_conv1d": ("AudioConv1d", "float32", [f((2, 1, 4000))], None, [2], {}),
    "conv_options": ("ConvOptions", "float32", [f((2, 8, 32, 32))], None, [2], {}),
    "conv3d": ("Conv3dNet", "float32", [f((1, 2, 8, 16, 16))], None, [1], {}),
    "mlp_relu": ("DeepMLP", "float32", [f((16, 256))], None, [16], {}),
    "mlp_relu_bf16": ("DeepMLP", "bfloat16", [f((16, 256), "bfloat16")], None, [16], {}),
    "embedding_mlp": ("EmbeddingMLP", "float32", [f((4, 32), "int64", high=1000)], None, [4], {}),
    "embedding_bag_recsys": ("EmbeddingBagRecSys", "float32", [f((8, 16), "int64", high=1000)], None, [8], {}),
    "spatial_transformer": ("SpatialTransformer", "float32", [f((2, 3, 32, 32))], None, [2], {}),
    "attention_block": ("AttentionBlock", "float32", [f((2, 16, 64))], None, [2], {}),
    "vision_block": ("VisionBlock", "float32", [f((2, 16, 8, 8))], None, [2], {}),
    "dynamic_batch_mlp": ("DynamicMLP", "float32", [f((4, 32))], (2, 64), [4, 13, 64], {}),
    # Models of the CPU zoo (tools/aoti/cpu_zoo.sh) the CUDA zoo has no kind of.
    "hf_t5_encoder": ("hf:t5_encoder", "float32", [f((2, 64), "int64", high=1000), f((2, 64), "int64", kind="mask")],
                      None, [2], {"kwargs": T5, "in_zoo": False}),
    "hf_llama": ("hf:llama", "float32", [f((2, 64), "int64", high=1000), f((2, 64), "int64", kind="mask")],
                 None, [2], {"kwargs": LLAMA, "in_zoo": False}),
    "gru": ("GRUNet", "float32", [f((2, 16, 32))], None, [2], {"in_zoo": False}),
    "hf_mixtral": ("hf:mixtral", "float32", [f((2, 32), "int64", high=1000)], None, [2], {"kwargs": MIXTRAL}),
    "hf_mixtral_bf16": ("hf:mixtral", "bfloat16", [f((2, 32), "int64", high=1000)], None, [2], {"kwargs": MIXTRAL}),
    "hf_qwen2_moe": ("hf:qwen2_moe", "float32", [f((2, 32), "int64", high=1000)], None, [2], {"kwargs": QWEN2_MOE}),
    "hf_olmoe_bf16": ("hf:olmoe", "bfloat16", [f((2, 32), "int64", high=1000)], None, [2], {"kwargs": OLMOE}),
    "kv_decoder": ("KVDecoder", "float32", [f((1, 1), "int64", high=256), f((1,), "int64", high=64)], None, [1],
                   {"in_zoo": False}),
    # The CPU zoo's committed fixtures (testdata/cpu_zoo, tools/aoti/cpu_zoo.sh --fixtures):
    # the same kinds with configs small enough for a .pt2 of a few hundred KB.
    "cpu_bert": ("hf:bert", "float32", [f((2, 16), "int64", high=128), f((2, 16), "int64", kind="mask")], None, [2],
                 {"kwargs": BERT_TINY, "in_zoo": False}),
    "cpu_gpt2": ("hf:gpt2", "float32", [f((2, 16), "int64", high=128)], None, [2],
                 {"kwargs": GPT2_TINY, "in_zoo": False}),
    "cpu_llama": ("hf:llama", "float32", [f((2, 16), "int64", high=128), f((2, 16), "int64", kind="mask")], None,
                  [2], {"kwargs": LLAMA_TINY, "in_zoo": False}),
    "cpu_t5_encoder": ("hf:t5_encoder", "float32", [f((2, 16), "int64", high=128),
                                                     f((2, 16), "int64", kind="mask")], None, [2],
                       {"kwargs": T5_TINY, "in_zoo": False}),
    "cpu_vit": ("hf:vit", "float32", [f((1, 3, 32, 32))], None, [1], {"kwargs": VIT_TINY, "in_zoo": False}),
    "cpu_mixtral": ("hf:mixtral", "float32", [f((1, 8), "int64", high=64)], None, [1],
                    {"kwargs": MIXTRAL_TINY, "in_zoo": False}),
    "cpu_conv_options": ("ConvOptions", "float32", [f((1, 8, 8, 8))], None, [1], {"in_zoo": False}),
    "cpu_embedding_bag_recsys": ("EmbeddingBagRecSys", "float32", [f((4, 8), "int64", high=100)], None, [4],
                                 {"kwargs": dict(tables=(100, 50), dim=8, hidden=16), "in_zoo": False}),
    "cpu_spatial_transformer": ("SpatialTransformer", "float32", [f((1, 3, 16, 16))], None, [1],
                                {"in_zoo": False}),
    "cpu_kv_decoder": ("KVDecoder", "float32", [f((1, 1), "int64", high=64), f((1,), "int64", high=16)], None, [1],
                       {"kwargs": dict(vocab=64, dim=32, heads=2, layers=2, max_pos=16), "in_zoo": False}),
    # Not in the zoo run (duplicates of kinds above, left out to keep the run within one device
    # call), exported only when named (--only; tools/aoti/conv_algorithms.sh names the CNNs).
    "tv_mobilenet_v3_small": ("torchvision:mobilenet_v3_small", "float32", [f((2, 3, 64, 64))], None, [2],
                              {"in_zoo": False}),
    "timm_resnet10t": ("timm:resnet10t", "float32", [f((2, 3, 64, 64))], None, [2], {"in_zoo": False}),
    "mlp_gelu": ("MLP", "float32", [f((8, 64))], None, [8], {"in_zoo": False}),
}

# Where the weights go: "so" inside the compiled library (package_constants_in_so=True, what
# today's converter reads), "archive" beside it in the .pt2 (variant NAME__archive), "both":
# every model both ways. PyTorch 2.11 with package_constants_in_so=False alone writes the
# weights nowhere (the .pt2 holds the .so and metadata only; the caller must supply every
# constant), so "archive" also asks for package_constants_on_disk_format="binary_blob": one
# blob of the weights in data/aotinductor/model/, which the .pt2 then carries.
WEIGHTS = {
    "so": {"aot_inductor.package_constants_in_so": True},
    "archive": {"aot_inductor.package_constants_in_so": False,
                "aot_inductor.package_constants_on_disk_format": "binary_blob"},
}


def variants(recipe=None, weights="so"):
    """Every export: variant name -> (model name, recipe, weights). recipe None: each model's
    own recipes; else only that recipe, for every model."""
    out = {}
    for name, entry in ZOO.items():
        recipes = (recipe,) if recipe else entry[5].get("recipes", ("default",))
        for r in recipes:
            for w in (("so", "archive") if weights == "both" else (weights,)):
                v = name + ("" if r == "default" else f"__{r}") + ("" if w == "so" else f"__{w}")
                out[v] = (name, r, w)
    return out


def all_variants():
    """Every variant any --recipe / --weights choice names."""
    out = {}
    for r in RECIPES:
        out.update(variants(r, "both"))
    return out


def select(only, recipe, weights):
    """The variants to export, in ZOO's order: --only names variants or models (a model
    name selects each of its variants)."""
    chosen = variants(recipe, weights)
    if not only:
        return [v for v, (m, _, _) in chosen.items() if ZOO[m][5].get("in_zoo", True)]
    known = all_variants()
    unknown = [n for n in only if n not in ZOO and n not in known]
    if unknown:
        raise SystemExit(f"export_models.py: unknown models {unknown}; --list shows the zoo")
    return [v for v, (m, _, _) in chosen.items() if v in only or m in only] + \
        [n for n in only if n in known and n not in chosen and n not in ZOO]


def build(factory, kwargs):
    models = _models()
    for prefix, maker in (("torchvision:", "torchvision_model"), ("timm:", "timm_model"), ("hf:", "hf_model"),
                          ("detection:", "detection_model")):
        if factory.startswith(prefix):
            return models[maker](factory[len(prefix):], **kwargs)()
    return models[factory](**kwargs)


def dtype_of(name):
    return getattr(torch_mod(), name)


def make_inputs(specs, batch, device, seed, float_dtype=None):
    torch = torch_mod()
    g = torch.Generator(device=device).manual_seed(seed)
    out = []
    for s in specs:
        sizes = [batch] + s["sizes"][1:]
        dt = dtype_of(s["dtype"])
        if dt.is_floating_point and float_dtype is not None:
            dt = float_dtype
        if dt.is_floating_point and s.get("kind") == "image":
            out.append(torch.rand(*sizes, device=device, generator=g).to(dt))
        elif dt.is_floating_point:
            out.append(torch.randn(*sizes, device=device, generator=g).to(dt))
        elif s.get("kind") == "mask":  # padding: row r keeps its first lengths[r] tokens
            n = sizes[-1]
            lengths = torch.randint((n + 1) // 2, n + 1, (sizes[0], 1), device=device, generator=g)
            out.append((torch.arange(n, device=device) < lengths).to(dt).expand(*sizes).contiguous())
        else:
            out.append(torch.randint(0, s["high"] or 2, sizes, device=device, generator=g, dtype=dt))
    return out


def write_raw(path, t):
    """Raw row-major bytes of t in its own dtype (little-endian)."""
    t.detach().contiguous().cpu().reshape(-1).view(dtype_of("uint8")).numpy().tofile(path)


def write_npy(path, t):
    """t as a NumPy .npy file in its own dtype; bfloat16 (which NumPy lacks) as its raw 16-bit
    patterns with dtype uint16 ('<u2'), the convention slimcuda's CLI reads (go/npy)."""
    import numpy as np
    torch = torch_mod()
    t = t.detach().contiguous().cpu()
    a = t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()
    np.save(path, a, allow_pickle=False)


def read_raw(path, dtype, sizes):
    torch = torch_mod()
    data = bytearray(open(path, "rb").read())
    t = torch.frombuffer(data, dtype=dtype_of(dtype)) if data else torch.empty(0, dtype=dtype_of(dtype))
    return t.reshape(sizes)


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def undefined_shims(pt2_path):
    """The aoti_torch_* symbols the compiled .so inside the .pt2 leaves undefined (nm -D -u)."""
    with zipfile.ZipFile(pt2_path) as z:
        sos = [n for n in z.namelist() if n.endswith(".so") and "/aotinductor/" in n]
        if len(sos) != 1:
            raise RuntimeError(f"{pt2_path}: want one compiled .so, found {sos}")
        with tempfile.TemporaryDirectory() as tmp:
            so = os.path.join(tmp, "model.so")
            with open(so, "wb") as fo:
                fo.write(z.read(sos[0]))
            nm = subprocess.run(["nm", "-D", "-u", so], capture_output=True, text=True, check=True)
    return sorted({w for w in nm.stdout.split() if w.startswith("aoti_torch")})


def tolerance_for(dtype, has_conv, device):
    torch = torch_mod()
    key = dtype
    if dtype == "float32" and has_conv and device == "cuda" and torch.backends.cudnn.allow_tf32:
        key = "float32_tf32"
    return dict(TOLERANCES.get(key, TOLERANCES["float32"]), name=key)


def reference_of(model, device):
    """How eager computes the expected outputs. A recurrent layer (nn.LSTM, nn.GRU, nn.RNN) runs
    in eager as cuDNN's fused RNN, which with PyTorch's default (torch.backends.cudnn.allow_tf32)
    rounds its float32 GEMM operands to TF32; the export decomposes the recurrence into plain
    float32 GEMMs (cuBLAS, TF32 off) and pointwise kernels. Against TF32 eager even PyTorch's
    own runner misses the float32 tolerance (H200, 2026-12-01: 1.07e-4 > 1e-4), so for these
    models the reference is eager with cuDNN's TF32 off: the same arithmetic the export asks for,
    checked at the full float32 tolerance instead of a looser one."""
    torch = torch_mod()
    recurrent = any(isinstance(m, torch.nn.RNNBase) for m in model.modules())
    if recurrent and device == "cuda":
        return "eager, cuDNN TF32 off (recurrent layers)"
    return "eager"


def reference_mode(reference):
    torch = torch_mod()
    if reference.startswith("eager, cuDNN TF32 off"):
        return torch.backends.cudnn.flags(enabled=True, allow_tf32=False)
    return contextlib.nullcontext()


def calibrate_batchnorm(model, in_specs, device):
    """Random weights leave BatchNorm's running statistics at mean 0, variance 1, which makes
    deep CNNs' activations shrink layer by layer (mobilenet_v3_small's logits come out ~1e-10,
    zero in fp16), so a comparison would test nothing. Set them from the batch statistics of a
    few random batches instead (train-mode forwards, cumulative average), in float32."""
    torch = torch_mod()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for i in range(4):
            model(*make_inputs(in_specs, 8, device, 500 + i, float_dtype=torch.float32))
    model.eval()


def export_one(variant, out, device):
    torch = torch_mod()
    model_name, recipe, weights = all_variants()[variant]
    factory, dtype, in_specs, dynamic, batches, opts = ZOO[model_name]
    name = variant
    torch.manual_seed(1234)
    model = build(factory, opts.get("kwargs", {})).to(device=device).eval()
    calibrate_batchnorm(model, in_specs, device)
    model = model.to(dtype=dtype_of(dtype)).eval()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    example = tuple(make_inputs(in_specs, in_specs[0]["sizes"][0], device, 7))
    dynamic_shapes = None
    if dynamic:
        batch = torch.export.Dim("batch", min=dynamic[0], max=dynamic[1])
        dynamic_shapes = tuple({0: batch} for _ in in_specs)
        if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(model.forward).parameters.values()):
            dynamic_shapes = (dynamic_shapes,)  # forward(*tensors): one argument holding them all
    # A detector's post-processing is exported with detection_export's replacements in
    # place (the guards torch.export cannot trace); the eager references below run without.
    export_context = contextlib.nullcontext()
    if opts.get("detection"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import detection_export
        export_context = detection_export.patched()
    t0 = time.time()
    with torch.no_grad():
        with export_context:
            ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
        torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(d, "model.pt2"),
            inductor_configs=dict(RECIPES[recipe], **WEIGHTS[weights], **opts.get("inductor", {})))
    export_s = time.time() - t0
    try:
        shims = undefined_shims(os.path.join(d, "model.pt2"))
    except Exception as e:  # noqa: BLE001 - recorded, not hidden
        shims = [f"error: {type(e).__name__}: {e}"]
    with open(os.path.join(d, "shims.json"), "w") as fo:
        json.dump(shims, fo)
    # What the export calls decides the tolerance: a cuDNN convolution fallback (aten's conv2d,
    # conv1d, conv_transpose... all lower to it) rounds through TF32 as PyTorch's default does.
    has_conv = any(str(x).endswith("_convolution") for x in shims)
    reference = reference_of(model, device)
    cases = []
    for b in batches:
        inputs = make_inputs(in_specs, b, device, 100 + b)
        with torch.no_grad(), reference_mode(reference):
            outputs = model(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        cd = os.path.join(d, f"batch_{b}")
        os.makedirs(cd, exist_ok=True)
        specs = []
        for i, x in enumerate(inputs):
            write_raw(os.path.join(cd, f"input_{i}.bin"), x)
            write_npy(os.path.join(cd, f"input_{i}.npy"), x)
            specs.append({"file": f"input_{i}.bin", "dtype": dtype_name(x.dtype), "sizes": list(x.shape)})
        with open(os.path.join(cd, "inputs.json"), "w") as fo:
            json.dump(specs, fo)
        # The manifest must describe what the compiled model returns: where its output has
        # another shape than eager's with the same elements (seen: an LSTM's h_n comes back
        # 4-D from the CUDA export, [2, 2, 64] in eager), declare the compiled shape.
        compiled = compiled_output_shapes(os.path.join(d, "model.pt2"), inputs)
        expected = []
        for i, y in enumerate(outputs):
            if compiled is not None and i < len(compiled) and tuple(compiled[i]) != tuple(y.shape) and \
                    int(torch.Size(compiled[i]).numel()) == y.numel():
                print(f"export: {name}: output {i} is {list(compiled[i])} compiled, {list(y.shape)} in eager",
                      flush=True)
                y = y.reshape(compiled[i])
            write_raw(os.path.join(cd, f"expected_{i}.bin"), y)
            write_raw(os.path.join(cd, f"expected_{i}.f32.bin"), y.float())
            expected.append({"file": f"expected_{i}.bin", "float32_file": f"expected_{i}.f32.bin",
                             "dtype": dtype_name(y.dtype), "sizes": list(y.shape),
                             "max_abs": float(y.float().abs().max()) if y.numel() else 0.0})
        with open(os.path.join(cd, "expected.json"), "w") as fo:
            json.dump(expected, fo)
        cases.append({"dir": f"batch_{b}", "outputs": expected})
    meta = {
        "name": name,
        "model": model_name,
        "factory": factory,
        "dtype": dtype,
        "recipe": recipe,
        "inductor": opts.get("inductor"),  # settings beyond the recipe's (None: none)
        "weights": weights,
        "attention": attention_of(model),
        "device": device,
        "torch": torch.__version__,
        "export_seconds": round(export_s, 1),
        "has_convolution": has_conv,
        "tolerance": tolerance_for(dtype, has_conv, device),
        "reference": reference,
        "inputs": [{"name": f"arg{i}", "dtype": s["dtype"], "sizes": list(s["sizes"]),
                    "dynamic_dim0": list(dynamic) if dynamic else None} for i, s in enumerate(in_specs)],
        "outputs": [{"name": f"out{i}", "dtype": o["dtype"], "sizes": list(o["sizes"]),
                     "dynamic_dim0": list(dynamic) if dynamic else None}
                    for i, o in enumerate(cases[-1]["outputs"])],
        "cases": cases,
    }
    if opts.get("detection"):  # compare.py matches these as detections; sizes of dim 0 follow the data
        meta["detections"] = detection_meta(model, batches[-1])
        meta["load"] = "pt2"  # a .slimcuda package carries no extern-kernel nodes (nms, roi_align)
        for spec in meta["outputs"]:
            spec["data_dependent_dim0"] = True
    if dynamic:  # declare the bound, not the last case's size
        for spec in meta["inputs"] + meta["outputs"]:
            spec["sizes"][0] = dynamic[1]
    with open(os.path.join(d, "meta.json"), "w") as fo:
        json.dump(meta, fo, indent=1)
    fallbacks = [s for s in shims if s.startswith("aoti_torch_cuda_") or s.startswith("aoti_torch_cpu_")]
    print(f"export: {name}: {export_s:.0f} s, {len(shims)} shims, fallbacks: {' '.join(fallbacks) or 'none'}",
          flush=True)


def detection_meta(model, images):
    """What compare.py's detection rule needs: the output fields per image, the images, the
    score threshold and the per-image cap of the detector inside a Detector."""
    det = model.model
    heads = getattr(det, "roi_heads", det)  # Faster/Mask R-CNN: RoIHeads; RetinaNet, SSD: the model
    fields = ["boxes", "scores", "labels"] + (["masks"] if getattr(heads, "has_mask", lambda: False)() else [])
    return {"fields": fields, "images": images, "score_thresh": float(heads.score_thresh),
            "detections_per_img": int(heads.detections_per_img)}


def attention_of(model):
    """The attention implementation a transformers model was built with (None for others)."""
    for m in model.modules():
        config = getattr(m, "config", None)
        if config is not None and hasattr(config, "_attn_implementation"):
            return config._attn_implementation
    return None


def kernel_times(prof, calls):
    """GPU kernels of a torch.profiler run of `calls` model calls: [(name, launches per call,
    µs per call)], the largest first (runner_kernels.py, decoder.py --profile)."""
    import collections
    torch = torch_mod()
    per = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += 1
            per[e.name][1] += e.device_time
    return [(k, n / calls, us / calls) for k, (n, us) in sorted(per.items(), key=lambda kv: -kv[1][1])]


def expose_libtorch_shims():
    """The .so was built without libtorch linking: it calls aoti_torch_* from the process, and
    `import torch` loads libtorch privately (RTLD_LOCAL), so PyTorch's own loader fails
    ("undefined symbol: aoti_torch_check"). Put libtorch's copies in the global scope, as
    slimcuda's are in its process."""
    import ctypes
    lib = os.path.join(os.path.dirname(torch_mod().__file__), "lib")
    for so in ("libtorch_cpu.so", "libtorch_cuda.so"):
        if os.path.exists(os.path.join(lib, so)):
            ctypes.CDLL(os.path.join(lib, so), mode=ctypes.RTLD_GLOBAL)


def compiled_output_shapes(pt2, inputs):
    """The output shapes PyTorch's own runner gives for the .pt2 on `inputs` (None if it
    cannot run here)."""
    torch = torch_mod()
    expose_libtorch_shims()  # without it the runner cannot load, and the eager shapes would stand
    try:
        runner = torch._inductor.aoti_load_package(pt2)
        with torch.no_grad():
            got = runner(*inputs)
        got = got if isinstance(got, (tuple, list)) else (got,)
        return [tuple(g.shape) for g in got]
    except Exception as e:  # noqa: BLE001 - the eager shapes stand then
        print(f"export: {os.path.basename(os.path.dirname(pt2))}: runner shapes unavailable: {e}", flush=True)
        return None


# ---- PyTorch's own runner on the same .pt2 ---------------------------------------------------

def compare(got, want, tol):
    """(max_abs, max_rel, pass) of got against want, both float32 tensors."""
    torch = torch_mod()
    got, want = got.double().flatten(), want.double().flatten()
    if got.shape != want.shape:
        return float("inf"), float("inf"), False
    if got.numel() == 0:
        return 0.0, 0.0, True
    d = (got - want).abs()
    ok = bool(torch.all(d <= tol["atol"] + tol["rtol"] * want.abs()))  # NaN fails
    rel = d / want.abs().clamp_min(1e-6)
    return float(d.max()), float(rel.max()), ok


def time_torch_runner(out, names, iterations, warmup, device):
    """PyTorch's own AOTInductor runner on the same .pt2 and inputs: correctness against eager
    (the same tolerance) and the median time per call + synchronize."""
    torch = torch_mod()
    # ZOO_TORCH_CUDNN_BENCHMARK=1: PyTorch picks convolution algorithms by running them
    # (tools/aoti/conv_algorithms.sh compares both ways with slimcuda's SLIMCUDA_CUDNN_BENCHMARK).
    if os.environ.get("ZOO_TORCH_CUDNN_BENCHMARK") == "1":
        torch.backends.cudnn.benchmark = True
    expose_libtorch_shims()
    try:  # registers torchvision's ops (nms, roi_align), which the detectors' .pt2 call by name
        import torchvision  # noqa: F401
    except ImportError:
        pass
    try:  # registers transformers' transformers::grouped_mm_fallback, which its float32 MoE .pt2 call by name
        import transformers.integrations.moe  # noqa: F401
    except ImportError:
        pass
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    results = {}
    for name in names:
        d = os.path.join(out, name)
        if not os.path.exists(os.path.join(d, "meta.json")):
            continue
        meta = json.load(open(os.path.join(d, "meta.json")))
        try:
            runner = torch._inductor.aoti_load_package(os.path.join(d, "model.pt2"))
            max_abs = max_rel = 0.0
            ok = True
            for case in meta["cases"]:
                cd = os.path.join(d, case["dir"])
                specs = json.load(open(os.path.join(cd, "inputs.json")))
                inputs = [read_raw(os.path.join(cd, s["file"]), s["dtype"], s["sizes"]).to(device) for s in specs]
                with torch.no_grad():
                    got = runner(*inputs)
                got = got if isinstance(got, (tuple, list)) else [got]
                ok = ok and len(got) == len(case["outputs"])
                if meta.get("detections") and ok:  # matched as detections (compare.py)
                    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
                    import compare as compare_py
                    want = [(o["sizes"], read_raw(os.path.join(cd, o["float32_file"]), "float32", o["sizes"])
                             .double().flatten().numpy()) for o in case["outputs"]]
                    report, p = compare_py.compare_detections(
                        [(list(g.shape), g.double().cpu().flatten().numpy()) for g in got], want,
                        meta["detections"], meta["tolerance"])
                    max_abs = max(max_abs, report["max_abs_box"], report["max_abs_score"])
                    ok = ok and p
                    print(f"runner: {name}: detections {json.dumps(report)}", flush=True)
                    got = []
                for g, o in zip(got, case["outputs"]):
                    want = read_raw(os.path.join(cd, o["float32_file"]), "float32", o["sizes"])
                    a, r, p = compare(g.float().cpu(), want, meta["tolerance"])
                    max_abs, max_rel, ok = max(max_abs, a), max(max_rel, r), ok and p
                if case is meta["cases"][0]:
                    timed = inputs
            times = []
            with torch.no_grad():
                for _ in range(warmup):  # the same warm-up as zoo_runner
                    runner(*timed)
                sync()
                for _ in range(iterations):
                    t0 = time.perf_counter()
                    runner(*timed)
                    sync()
                    times.append(time.perf_counter() - t0)
            times.sort()
            results[name] = {"torch_runner_us_median": times[len(times) // 2] * 1e6 if times else None,
                             "max_abs_vs_eager": max_abs, "max_rel_vs_eager": max_rel, "pass": ok}
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        print(f"runner: {name}: {json.dumps(results[name])}", flush=True)
        with open(os.path.join(out, "torch_runner.json"), "w") as fo:  # after each: a cut-off run keeps them
            json.dump(results, fo, indent=1)


# ---- parallel exports ------------------------------------------------------------------------

def export_all(a, names):
    jobs = max(1, a.jobs)
    env = dict(os.environ)
    # Inductor compiles kernels in a pool per process: share the cores between the workers.
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, (os.cpu_count() or 1) // jobs)))
    # Slowest first: the Triton recipe's autotuning makes those exports the longest.
    pending = sorted(names, key=lambda v: "__triton" not in v)
    running = {}
    failed, skipped = [], []
    t_start = time.time()
    while pending or running:
        if a.deadline and time.time() >= a.deadline:  # cut off: report what is left, stop the rest
            skipped += pending
            for name in pending:
                print(f"skipped {name}", flush=True)
            pending = []
            for name, (proc, _) in running.items():
                proc.kill()
        while pending and len(running) < jobs:
            name = pending.pop(0)
            d = os.path.join(a.out, name)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            log = open(os.path.join(d, "export.log"), "w")
            cmd = [sys.executable, os.path.abspath(__file__), a.out, "--one", name, "--device", a.device]
            running[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log)
        time.sleep(0.2)
        for name, (proc, log) in list(running.items()):
            if proc.poll() is None:
                continue
            log.close()
            del running[name]
            lines = open(os.path.join(a.out, name, "export.log")).read().splitlines()
            if proc.returncode == 0:
                print(next((ln for ln in reversed(lines) if ln.startswith("export: ")), f"export: {name}"),
                      file=sys.stderr, flush=True)
                print(f"exported {name}", flush=True)
            else:
                failed.append(name)
                why = "stopped at the deadline" if a.deadline and time.time() >= a.deadline else \
                    f"rc {proc.returncode}"
                print(f"export: {name} FAILED ({why}):\n  " + "\n  ".join(lines[-15:]), file=sys.stderr, flush=True)
                print(f"failed {name}", flush=True)
    print(f"export: {len(names) - len(failed) - len(skipped)} of {len(names)} exported in "
          f"{time.time() - t_start:.0f} s ({jobs} at once)" + (f", {len(skipped)} not started (deadline)"
                                                              if skipped else ""), file=sys.stderr, flush=True)
    return 1 if failed or skipped else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out", nargs="?")
    p.add_argument("--only", nargs="*", default=[], help="variants or models (a model: all its variants)")
    p.add_argument("--one", help=argparse.SUPPRESS)  # a worker process
    p.add_argument("--jobs", type=int, default=8, help="exports at once")
    p.add_argument("--recipe", choices=sorted(RECIPES), default=None,
                   help="only this recipe, for every model (default: each model's recipes)")
    p.add_argument("--weights", choices=["so", "archive", "both"], default="so",
                   help="weights in the .so, in the .pt2 archive beside it (variant NAME__archive), or both")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: a dry run without a GPU")
    p.add_argument("--deadline", type=float, default=0,
                   help="Unix time: exports not started by then are skipped, running ones stopped")
    p.add_argument("--time-runner", type=int, default=0, help="PyTorch runner timing iterations")
    p.add_argument("--warmup", type=int, default=WARMUP)
    p.add_argument("--list", action="store_true", help="print the variants --recipe/--weights select")
    a = p.parse_args()
    if a.device == "cpu" and a.recipe is None:
        a.recipe = "default"  # the Triton recipe needs a GPU (Triton templates for GEMMs and convolutions)
    names = select(a.only, a.recipe, a.weights)
    if a.list:
        for v in names:
            m, r, w = all_variants()[v]
            fac, dt, ins, dyn, batches, _ = ZOO[m]
            print(f"{v}\t{fac}\t{dt}\trecipe {r}\tweights {w}\t" +
                  " ".join(f"{s['dtype']}{s['sizes']}" for s in ins) +
                  f"\tbatches {batches}" + (f" dynamic {list(dyn)}" if dyn else ""))
        return 0
    if not a.out:
        p.error("OUT_DIR is required")
    os.makedirs(a.out, exist_ok=True)
    if a.one:
        export_one(a.one, a.out, a.device)
        return 0
    if a.time_runner:  # exactly the variants named (run_zoo.sh: the ones it timed), else the selection
        time_torch_runner(a.out, a.only or names, a.time_runner, a.warmup, a.device)
        return 0
    return export_all(a, names)


if __name__ == "__main__":
    sys.exit(main())
