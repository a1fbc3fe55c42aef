#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/portable_cxx.sh — g++ for exports that must run on any x86-64 machine with AVX2
# (the fixtures CI runs): PyTorch's AOTInductor always compiles CPU code with -march=native,
# which on an AVX-512 machine lets gcc use zmm registers even where ATEN_CPU_CAPABILITY=avx2
# caps Inductor's own vector code. Passes every argument to g++ ($SLIMCUDA_REAL_CXX), with
# -march=native replaced by -march=x86-64-v3 (AVX2, FMA, F16C, BMI). Use it as CXX.
set -euo pipefail
args=()
for a in "$@"; do
  [[ "$a" == -march=native ]] && a=-march=x86-64-v3
  args+=("$a")
done
exec "${SLIMCUDA_REAL_CXX:-g++}" "${args[@]}"
