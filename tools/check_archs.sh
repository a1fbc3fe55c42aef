#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check_archs.sh — libslimcuda.so carries its kernels for every architecture the build
# names (CUDA_SASS_ARCHS and CUDA_PTX_ARCH in tools/bazel/cuda.bzl): every fat-binary object
# holds SASS for each of them and PTX for the newest only. cuobjdump comes with the CUDA
# toolchain tools/setup.sh installs. Prints the architectures and the library's size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cuobjdump="${SLIMCUDA_CUDA_PREFIX:-/opt/slimcuda/cuda-13.0}/bin/cuobjdump"
[[ -x "$cuobjdump" ]] || { echo "check_archs: no $cuobjdump (run tools/setup.sh)"; exit 1; }
bzl=tools/bazel/cuda.bzl
read -r -a sass < <(sed -n 's/^CUDA_SASS_ARCHS = \[\(.*\)\]$/\1/p' "$bzl" | tr -d '"' | tr ',' ' ')
ptx=$(sed -n 's/^CUDA_PTX_ARCH = "\([0-9]*\)"$/\1/p' "$bzl")
if ((${#sass[@]} == 0)) || [[ -z "$ptx" ]]; then
  echo "check_archs: cannot read the architectures from $bzl"
  exit 1
fi

bazel build //csrc:libslimcuda.so >/dev/null 2>&1 || { echo "check_archs: bazel build //csrc:libslimcuda.so failed"; exit 1; }
lib=bazel-bin/csrc/libslimcuda.so.0
elf=$("$cuobjdump" --list-elf "$lib")
ptxs=$("$cuobjdump" --list-ptx "$lib")
# One object per compiled .cu: each must appear once per architecture.
objects=$(grep -c "\.sm_${sass[0]}\.cubin$" <<<"$elf" || true)
((objects > 0)) || { echo "check_archs: no sm_${sass[0]} code in $lib"; exit 1; }
fail=0
for a in "${sass[@]}"; do
  n=$(grep -c "\.sm_${a}\.cubin$" <<<"$elf" || true)
  if ((n != objects)); then
    echo "check_archs: sm_$a SASS in $n of $objects objects"
    fail=1
  fi
done
alternatives=$(printf '%s|' "${sass[@]}")
others=$(grep -vE "\.sm_(${alternatives%|})\.cubin$" <<<"$elf" || true)
[[ -z "$others" ]] || { echo "check_archs: SASS for architectures the build does not name: $others"; fail=1; }
n=$(grep -c "\.sm_${ptx}\.ptx$" <<<"$ptxs" || true)
((n == objects)) || { echo "check_archs: compute_$ptx PTX in $n of $objects objects"; fail=1; }
other_ptx=$(grep -v "\.sm_${ptx}\.ptx$" <<<"$ptxs" || true)
[[ -z "$other_ptx" ]] || { echo "check_archs: PTX other than compute_$ptx: $other_ptx"; fail=1; }
((fail == 0)) || exit 1
names=$(printf 'sm_%s ' "${sass[@]}")
echo "check_archs: $objects kernel objects, each with SASS for ${names% } and compute_$ptx PTX; $lib is $(stat -c %s "$lib") bytes"
