#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/setup.sh — install everything slimcuda's build needs on a Debian 12 machine (run as root).
#
# Idempotent: every step checks first and says what it does; a second run takes seconds.
#   - Debian: Bazel 4.2.3 and the rule packages it needs offline, a JDK, googletest,
#     nlohmann-json (the C++ fixture reader), FlatBuffers (model packages), xxHash (their
#     library hashes), libzip 1.7.3 and zlib (the .pt2 reader), SLEEF 3.5.1 (the vector math CPU
#     exports call), OpenBLAS 0.3.21's OpenMP build (the CPU GEMMs), clang 14 with
#     libFuzzer (the package fuzzer), patch, pkg-config; cmake and patchelf (tools/install.sh and its
#     CMake consumer); shellcheck and clang-format (tools/lint.sh).
#   - staticcheck (tools/lint.sh), pinned, from the Go module proxy.
#   - /usr/local/bin/bazel: Debian's Bazel 4.2.3 even though .bazelversion names the
#     networked users' Bazel (see below).
#   - CUDA 13.0 toolchain (nvcc, nvvm, cudart, cccl, crt) from pinned PyPI wheels into $SLIMCUDA_CUDA_PREFIX.
#   - Vendor library headers (cuBLAS/cuBLASLt, cuDNN, the cuDNN frontend, and nvrtc.h, which the
#     frontend includes) from pinned PyPI wheels into $SLIMCUDA_CUDA_LIBS_PREFIX: headers only (the
#     libraries are opened at run time, never linked).
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
  # Not part of the build: CI lists the architectures in libslimcuda.so with it
  # (tools/check_archs.sh). 13.2.51 is the oldest on PyPI; it reads 13.0's fat binaries.
  nvidia-cuda-cuobjdump==13.2.51
)
# The fixed prefix the Bazel vendor-header repository rules look in (after their *_HOME variables).
LIBS_PREFIX="${SLIMCUDA_CUDA_LIBS_PREFIX:-/opt/slimcuda/cuda-13.0-libs}"
# Headers to build against, no newer than the GPU machine's runtimes (cuBLAS 13.1, cuDNN 9.19):
# cuBLAS 13.0 matches the toolkit; cuDNN 9.19.0 is the GPU machine's own; the frontend is header-only.
# name==version:folder inside the wheel whose include/ is extracted:destination under $LIBS_PREFIX.
LIB_WHEELS=(
  nvidia-cublas==13.0.2.14:nvidia/cu13/include/:cublas
  nvidia-cudnn-cu13==9.19.0.56:nvidia/cudnn/include/:cudnn
  nvidia-cudnn-frontend==1.32.0:include/:cudnn_frontend
)
APT_PACKAGES=(
  bazel-bootstrap bazel-skylib bazel-platforms bazel-rules-java bazel-rules-proto bazel-rules-cc
  default-jdk-headless libgtest-dev nlohmann-json3-dev flatbuffers-compiler libflatbuffers-dev libxxhash-dev
  libzip-dev zlib1g-dev libsleef-dev libopenblas-openmp-dev
  clang-14 libclang-rt-14-dev patch pkg-config binutils cmake patchelf
  shellcheck clang-format
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

# --- Vendor headers (cuBLAS, cuDNN, cuDNN frontend) from PyPI wheels ----------------
# The wheels are large (cuBLAS 420 MB, cuDNN 370 MB) and almost all library; only include/ is
# kept, so CI's disk and time stay small. The GPU machine brings its own libraries.
lib_stamp="$LIBS_PREFIX/.slimcuda-wheels"
lib_want="$(printf '%s\n' "${LIB_WHEELS[@]}")"
if [[ -f "$lib_stamp" && "$(cat "$lib_stamp")" == "$lib_want" && -f "$LIBS_PREFIX/cublas/include/cublasLt.h" &&
      -f "$LIBS_PREFIX/cudnn/include/cudnn.h" && -f "$LIBS_PREFIX/cudnn_frontend/include/cudnn_frontend.h" ]]; then
  say "vendor headers present in $LIBS_PREFIX"
else
  downloads="$(mktemp -d)"
  trap 'rm -rf "$downloads"' EXIT
  rm -rf "$LIBS_PREFIX"
  mkdir -p "$LIBS_PREFIX"
  for entry in "${LIB_WHEELS[@]}"; do
    IFS=: read -r spec folder dest <<<"$entry"
    say "pip download $spec (headers from $folder into $LIBS_PREFIX/$dest/include)"
    mkdir -p "$downloads/$dest"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --dest "$downloads/$dest" "$spec"
    python3 - "$downloads/$dest" "$folder" "$LIBS_PREFIX/$dest/include" <<'PY'
import glob, os, sys, zipfile
src, folder, dest = sys.argv[1:]
wheels = glob.glob(os.path.join(src, "*.whl"))
if len(wheels) != 1:
    sys.exit("setup: expected one wheel in %s, found %d" % (src, len(wheels)))
count = 0
with zipfile.ZipFile(wheels[0]) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith(folder) or info.is_dir():
            continue
        rel = os.path.normpath(name[len(folder):])
        if rel.startswith("..") or os.path.isabs(rel):
            sys.exit("setup: unsafe path %r in %s" % (name, wheels[0]))
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(info) as f, open(out, "wb") as g:
            g.write(f.read())
        count += 1
if count == 0:
    sys.exit("setup: no files under %s in %s" % (folder, wheels[0]))
print("setup: %d headers from %s" % (count, os.path.basename(wheels[0])))
PY
  done
  printf '%s\n' "${LIB_WHEELS[@]}" >"$lib_stamp"
  rm -rf "$downloads"
  trap - EXIT
  say "vendor headers installed in $LIBS_PREFIX"
fi

# --- NVRTC header for the cuDNN frontend ---------------------------------------------
# The frontend (1.32) includes <nvrtc.h> for its run-time-compiled engines, which it opens with
# dlopen like everything else (slimcuda never calls NVRTC): only the header is needed, from the
# wheel that matches the toolkit. Its own stamp, so adding it never re-downloads the others.
NVRTC_WHEEL=nvidia-cuda-nvrtc==13.0.88
nvrtc_dest="$LIBS_PREFIX/nvrtc/include"
if [[ -f "$nvrtc_dest/nvrtc.h" ]] && grep -qsx "$NVRTC_WHEEL" "$LIBS_PREFIX/nvrtc/.slimcuda-wheel"; then
  say "NVRTC header present in $nvrtc_dest"
else
  downloads="$(mktemp -d)"
  trap 'rm -rf "$downloads"' EXIT
  say "pip download $NVRTC_WHEEL (include/nvrtc.h into $nvrtc_dest)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$downloads" "$NVRTC_WHEEL"
  mkdir -p "$nvrtc_dest"
  python3 - "$downloads" "$nvrtc_dest" <<'PY'
import glob, os, sys, zipfile
src, dest = sys.argv[1:]
wheels = glob.glob(os.path.join(src, "*.whl"))
if len(wheels) != 1:
    sys.exit("setup: expected one wheel in %s, found %d" % (src, len(wheels)))
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.endswith("/include/nvrtc.h")]
    if len(names) != 1:
        sys.exit("setup: no single include/nvrtc.h in %s" % wheels[0])
    with z.open(names[0]) as f, open(os.path.join(dest, "nvrtc.h"), "wb") as g:
        g.write(f.read())
PY
  echo "$NVRTC_WHEEL" >"$LIBS_PREFIX/nvrtc/.slimcuda-wheel"
  rm -rf "$downloads"
  trap - EXIT
  say "NVRTC header installed in $nvrtc_dest"
fi

# --- bazel: Debian's Bazel 4.2.3 whatever .bazelversion says ------------------------
# .bazelversion names the Bazel that networked (bazelisk) users get for MODULE.bazel. Debian's
# /usr/bin/bazel wrapper honours that file too and would refuse to start, so on these
# machines /usr/local/bin/bazel (ahead of /usr/bin on PATH) runs Debian's Bazel 4 through
# the same wrapper, selected with USE_BAZEL_VERSION. An existing bazel there that is not
# ours (bazelisk, say) is left alone.
shim=/usr/local/bin/bazel
marker="# slimcuda offline bazel (tools/setup.sh)"
if [[ -e "$shim" ]] && ! grep -qs "$marker" "$shim"; then
  say "$shim exists and is not ours: leaving it (the offline build needs USE_BAZEL_VERSION=4)"
else
  printf '#!/bin/sh\n%s\nUSE_BAZEL_VERSION=4 exec /usr/bin/bazel "$@"\n' "$marker" >"$shim.tmp"
  chmod 0755 "$shim.tmp"
  if cmp -s "$shim.tmp" "$shim"; then rm -f "$shim.tmp"; else mv "$shim.tmp" "$shim" && say "installed $shim"; fi
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

# --- staticcheck (tools/lint.sh) ---------------------------------------------------
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
gobin="$(go env GOPATH)/bin"
if [[ -x "$gobin/staticcheck" ]] && grep -qsx "$STATICCHECK" "$gobin/.staticcheck-version"; then
  say "staticcheck present ($STATICCHECK)"
else
  say "go install $STATICCHECK"
  GOFLAGS='' go install "$STATICCHECK"
  echo "$STATICCHECK" >"$gobin/.staticcheck-version"
fi

say "done"
