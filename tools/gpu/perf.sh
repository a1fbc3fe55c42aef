#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf.sh — on the GPU machine, from the folder tools/gpu/bundle.sh made: the copy,
# staging and pool figures in one run, every row against raw CUDA measured in the same process:
#   staging_benchmark   P1 pageable copies, host memcpy ceiling, P4 device and P5 pinned cache hits
#                       (another threshold: SLIMCUDA_STAGING_THRESHOLD=N bench/staging_benchmark --p1)
#   copy_benchmark      P2 pinned copies and P3 4-byte blocking copies (C++)
#   shim_benchmark      tensor allocation through the shims
#   Go benchmarks       P7 cgo no-op round trip, P3 from Go, P1 buffer and tensor copies from Go
#   the demo model      `slimcuda run` with the caching allocator and without
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SLIMCUDA_FIXTURES="$(printf '%s ' "$here"/testdata/*.json)"
export SLIMCUDA_FIXTURES SLIMCUDA_DEMO_PACKAGE="$here/demo.slimcuda"
failed=0
step() { echo; echo "## $*"; "$@" || { echo "FAILED: $*"; failed=$((failed + 1)); }; }
echo "perf run: $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) CPUs"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
step "$here/bench/staging_benchmark"
step "$here/bench/copy_benchmark"
step "$here/bench/shim_benchmark"
(cd "$here" && step "$here/bin/go_internal_rawcuda__rawcuda_test" -test.run '^$' -test.bench 'CgoNoop' \
  -test.benchtime "${SLIMCUDA_BENCHTIME:-0.5s}" -test.count 3)
(cd "$here" && step "$here/bin/go_slimcuda__slimcuda_test" -test.run '^$' -test.bench 'Copy|AllocFree' \
  -test.benchtime "${SLIMCUDA_BENCHTIME:-0.5s}" -test.count 3)
for cache in 1 0; do
  echo
  echo "## demo model, SLIMCUDA_CACHING_ALLOCATOR=$cache"
  SLIMCUDA_CACHING_ALLOCATOR=$cache "$here/slimcuda" run -device cuda -iterations 1000 "$here/demo.slimcuda" ||
    failed=$((failed + 1))
done
echo
echo "perf: $failed failed"
((failed == 0))
