#!/usr/bin/env bash
# tools/setup.sh — install everything slimcuda's build needs on a Debian 12 machine (run as root).
#
# Idempotent: every step checks first and says what it does; a second run takes seconds.
#   - Debian: Bazel 4.2.3 and the rule packages it needs offline, a JDK, googletest,
#     nlohmann-json (the C++ fixture reader), FlatBuffers (model packages), xxHash (their
#     library hashes), clang 14 with
#     libFuzzer (the package fuzzer), patch, pkg-config.
#   - CUDA 13.0 toolchain (nvcc, nvvm, cudart, cccl, crt) from pinned PyPI wheels into $SLIMCUDA_CUDA_PREFIX.
#   - The Go module cache, warmed with the modules Bazel's repository rules download.
set -euo pipefail

# The fixed prefix the Bazel CUDA repository rule looks in (after $SLIMCUDA_CUDA_HOME).
CUDA_PREFIX="${SLIMCUDA_CUDA_PREFIX:-/opt/slimcuda/cuda-13.0}"
# Versions known to work with the H200 machine's driver (580, CUDA 13.0).
CUDA_WHEELS=(
  nvidia-cuda-nvcc==13.0.88
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-cccl==13.0.85
  nvidia-cuda-crt==13.0.88
  nvidia-nvvm==13.0.88
)
APT_PACKAGES=(
  bazel-bootstrap bazel-skylib bazel-platforms bazel-rules-java bazel-rules-proto bazel-rules-cc
  default-jdk-headless libgtest-dev nlohmann-json3-dev flatbuffers-compiler libflatbuffers-dev libxxhash-dev
  clang-14 libclang-rt-14-dev patch pkg-config binutils
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf 'setup: %s\n' "$*"; }

if [[ "$(id -u)" != 0 ]]; then
  say "must run as root (installs Debian packages and writes $CUDA_PREFIX)" >&2
  exit 1
fi

# --- Debian packages ---------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages present (${#APT_PACKAGES[@]})"
fi

# --- CUDA 13.0 toolchain from PyPI wheels -------------------------------------
stamp="$CUDA_PREFIX/.slimcuda-wheels"
want="$(printf '%s\n' "${CUDA_WHEELS[@]}")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$CUDA_PREFIX/bin/nvcc" ]]; then
  say "CUDA toolchain present in $CUDA_PREFIX"
else
  wheels="$CUDA_PREFIX.wheels"
  say "pip install ${CUDA_WHEELS[*]} into $wheels"
  rm -rf "$wheels"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$wheels" "${CUDA_WHEELS[@]}"
  root="$wheels/nvidia/cu13"
  [[ -x "$root/bin/nvcc" ]] || { say "no bin/nvcc under $root after pip install" >&2; exit 1; }
  # Present the wheels as an ordinary toolkit tree: bin/, include/, lib64/ with unversioned link names.
  rm -rf "$CUDA_PREFIX"
  ln -s "$root" "$CUDA_PREFIX"
  for lib in "$root"/lib/libcudart.so.*; do
    [[ -e "$lib" ]] || continue
    ln -sf "$(basename "$lib")" "$root/lib/libcudart.so"
  done
  [[ -e "$root/lib64" ]] || ln -s lib "$root/lib64"
  printf '%s\n' "${CUDA_WHEELS[@]}" >"$wheels/nvidia/cu13/.slimcuda-wheels"
  say "CUDA toolchain installed: $("$CUDA_PREFIX/bin/nvcc" --version | tail -n 2 | head -n 1)"
fi

# --- Go module cache ------------------------------------------------------------
# The Bazel repository rules run `go mod download`; warming the cache here keeps the
# first build from depending on the proxy mid-build and checks the pinned sums early.
if command -v go >/dev/null; then
  say "warming the Go module cache (go mod download)"
  (cd "$repo_root" && GOFLAGS=-mod=mod go mod download all)
  (cd "$repo_root" && go mod download github.com/bazelbuild/rules_go@v0.24.3)
else
  say "no go on PATH: install Go 1.26 first" >&2
  exit 1
fi

say "done"
