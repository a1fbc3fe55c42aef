#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the .pt2 fixtures of testdata/pt2_versions/ for each PyTorch version given: a virtual
# environment per version (VENVS/torch-<major.minor>), the exports made in it
# (tools/aoti/make_pt2_versions.py --export), then the environment deleted unless --keep.
# After the last version, the refusal archives derived from the newest export (--newer).
#
#   tools/aoti/torch_versions.sh [--keep] [--venvs DIR] VERSION...   e.g. 2.11.0 2.15.0
#
# PyPI's Linux wheels are CUDA builds: torch imports only with its CUDA libraries present
# (libtorch_cuda.so needs cuBLAS, cuDNN, NCCL, ... at load time, even for a CPU export), so the
# environment takes torch with all its dependencies (about 5 GB each; ~2.5 min to install
# here): make one version at a time. An environment that already imports the wanted torch is
# reused (and then kept). Needs python3.11 and a C++ compiler (AOTInductor compiles the
# library with g++). The libraries are compiled with -march=native: export on a machine without
# AVX-512 (make_pt2_versions.py refuses a library holding zmm instructions, which would die with
# SIGILL on every machine without AVX-512); ATEN_CPU_CAPABILITY=avx2 caps Inductor's vector ISA.
set -euo pipefail
export ATEN_CPU_CAPABILITY=avx2

keep=0
venvs=/work/venvs
versions=()
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --venvs) venvs="$2"; shift ;;
    -h|--help) sed -n '3,18p' "$0"; exit 0 ;;
    *) versions+=("$1") ;;
  esac
  shift
done
((${#versions[@]})) || { sed -n '3,18p' "$0" >&2; exit 2; }

root="$(cd "$(dirname "$0")/../.." && pwd)"
python="${PYTHON:-python3.11}"

for v in "${versions[@]}"; do
  venv="$venvs/torch-${v%.*}"
  made=0
  # Whoever else makes or uses this environment holds the same lock.
  mkdir -p "$venvs"
  exec {lock}>"$venvs/.lock-${v%.*}"
  flock "$lock"
  if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$v')" 2>/dev/null; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    # numpy: torch.export warns without it; no pip cache (the wheels are GBs).
    "$venv/bin/pip" install -q --no-cache-dir "torch==$v" numpy
    made=1
  fi
  "$venv/bin/python" "$root/tools/aoti/make_pt2_versions.py" --export "$root/testdata"
  if ((made && !keep)); then
    rm -rf "$venv"
  fi
  exec {lock}>&-
done
python3 "$root/tools/aoti/make_pt2_versions.py" --newer "$root/testdata"
