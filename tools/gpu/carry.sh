#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/gpu/carry.sh [BUNDLE] [DIR] — packs the folder tools/gpu/bundle.sh made (default
# gpu-bundle) into DIR/bundle.tar.xz (default gpu-carry/, git-ignored) for the device tool,
# which carries at most 64 MiB together with the working tree (~31 MiB of it the tree).
#
# Left out: bench/ (SLIMCUDA_CARRY_BENCH=1 keeps it), ptx/ (SLIMCUDA_CARRY_PTX=1 keeps it),
# and testdata/, which the tree on the GPU machine already holds: unpack there with
#   tar xJf gpu-carry/bundle.tar.xz && bash gpu-bundle/run.sh   (run.sh takes testdata/ from
#   the tree when the bundle has none).
# Every C++ test binary links the whole library (~31 MB each, mostly the same kernels), so the
# dictionary spans many binaries (768 MiB, one thread): 1.2 GB of binaries pack into ~25 MB at preset 6
# (a 64 MiB dictionary left 56 MB). It takes ~15 minutes on two cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bundle="${1:-gpu-bundle}"
dir="${2:-gpu-carry}"
excludes=(--exclude="$bundle/testdata")
[[ "${SLIMCUDA_CARRY_BENCH:-0}" == 1 ]] || excludes+=(--exclude="$bundle/bench")
[[ "${SLIMCUDA_CARRY_PTX:-0}" == 1 ]] || excludes+=(--exclude="$bundle/ptx")
mkdir -p "$dir"
tar cf - "${excludes[@]}" "$bundle" | xz -T1 --lzma2=preset=1,dict=768MiB >"$dir/bundle.tar.xz.tmp"
mv "$dir/bundle.tar.xz.tmp" "$dir/bundle.tar.xz"
echo "carry: $dir/bundle.tar.xz, $(($(stat -c %s "$dir/bundle.tar.xz") / 1048576)) MiB"
