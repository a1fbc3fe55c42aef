#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/torch_venv.sh VENV [TORCH_VERSION] — a Python virtual environment with PyTorch
# (default 2.11.0) and the zoo's model libraries (torchvision of the matching release,
# transformers, timm), enough to make CPU exports with tools/aoti/export_models.py
# --device cpu on a machine without a GPU (a C++ compiler is the only other need).
# Reuses VENV when its torch is already that version.
#
# PyPI serves only the CUDA build of torch for Linux x86-64. With --no-deps (torch alone,
# ~900 MB) `import torch` fails: libtorch_cuda.so is linked against libcudart, cuBLAS,
# cuDNN, ... and loads with libtorch even for CPU work. So the CUDA wheels come too
# (about 4.7 GB installed; ~2 minutes here); no GPU or driver is needed to use them.
set -euo pipefail
venv="${1:?usage: torch_venv.sh VENV [TORCH_VERSION]}"
version="${2:-2.11.0}"
# torch 2.N pairs with torchvision 0.(N+15).
minor="${version#2.}"
minor="${minor%%.*}"
vision="0.$((minor + 15)).0"
if [[ -x "$venv/bin/python" ]] &&
  [[ "$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)" == "$version" ]]; then
  echo "torch_venv: $venv has torch $version"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "torch==$version" "torchvision==$vision" numpy \
  transformers timm
"$venv/bin/python" -c 'import torch, torchvision, transformers; print("torch_venv:", torch.__version__,
  torchvision.__version__, transformers.__version__)'
