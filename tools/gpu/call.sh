#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/gpu/call.sh — one device call's whole plan, from the repository root on the GPU
# machine, with gpu-carry/bundle.tar.xz (tools/gpu/carry.sh) in the tree: unpacks the bundle,
# checks the integer-histc fixtures against torch.histc, runs the suite (run.sh) and then a
# memcheck subset, and the zoo beside them when asked. Every result goes under $OUT/r and is
# packed into $OUT/results.tgz on exit (the device tool brings back only a few files).
#
# Environment:
#   ZOO_ONLY="a b"     zoo variants or models (none: no zoo); ZOO_WEIGHTS (default both),
#                      ZOO_BUDGET_S (default 480): tools/aoti/run_zoo.sh's
#   RUN_SUITE=0        no run.sh and no memcheck (a quiet zoo: its timings then stand)
#   SUITE_S=420        run.sh's time limit
#   MEMCHECK_ONLY=RE   the test binaries memcheck runs (default: constants, state, pt2 load)
# The zoo beside the suite disturbs its timings: read them as where a model stands only.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t0=$(date +%s)
r="${OUT:?the device tool sets OUT}/r"
mkdir -p "$r"
trap 'cd "$OUT" && tar czf results.tgz r && rm -rf r' EXIT
since() { echo "$1 $(($(date +%s) - t0)) s" >>"$r/plan.log"; }
tar xJf gpu-carry/bundle.tar.xz
since unpacked
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  date -u +%FT%TZ
} >"$r/gpu.txt" 2>&1
python3 tools/gpu/histc_integral_check.py testdata/ops.json >"$r/histc.txt" 2>&1
since "histc rc=$?"
if [[ -n "${ZOO_ONLY:-}" ]]; then
  (
    ZOO_LOAD=pt2 ZOO_WEIGHTS="${ZOO_WEIGHTS:-both}" ZOO_BUDGET_S="${ZOO_BUDGET_S:-480}" OUT="$r/zoo" \
      bash tools/aoti/run_zoo.sh --only "${ZOO_ONLY// /,}" gpu-bundle >"$r/zoo.log" 2>&1
    since "zoo rc=$?"
  ) &
fi
if [[ "${RUN_SUITE:-1}" == 1 ]]; then
  SLIMCUDA_GPU_LOGS="$r/logs" timeout "${SUITE_S:-420}" bash gpu-bundle/run.sh >"$r/run.log" 2>&1
  since "run.sh rc=$?"
  SLIMCUDA_GPU_LOGS="$r/memcheck-logs" SLIMCUDA_GPU_ONLY="${MEMCHECK_ONLY:-constants_test|state_test|pt2_load_test}" \
    timeout 170 bash gpu-bundle/run.sh --sanitize memcheck >"$r/memcheck.log" 2>&1
  since "memcheck rc=$?"
fi
wait
since end
