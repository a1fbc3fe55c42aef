#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/require_gpu_check.sh — on a machine without a GPU (CI), proves that every GPU-bearing
# test target turns a missing GPU into a failure under SLIMCUDA_REQUIRE_GPU=1, as the GPU
# run relies on (tools/gpu/run.sh sets it: there, a skipped GPU test would check nothing).
#
# GPU-bearing: a cc_test or go_test whose sources gate on a GPU through the shared helpers
# (csrc/testing/fixtures.h: SLIMCUDA_REQUIRE_GPU_OR_SKIP, has_gpu, gpu_count, begin_case;
# go/internal/fixture and go/slimcuda's main_test: fx.Begin, requireGPU, gpu(t), ...), less
# the few listed below that have no GPU case. Each such target must FAIL under
# SLIMCUDA_REQUIRE_GPU=1 and SLIMCUDA_REQUIRE_GPUS=2, and its log must say
# SLIMCUDA_REQUIRE_GPU: a build error or a crash proves nothing. Test sources must not
# gate on a GPU privately (their own cudaGetDeviceCount(&n) or getenv of the variable), so
# that no target escapes this list; a test that interposes cudaGetDeviceCount to fake a
# fault is not gating.
# The binaries stop at their first failure (gtest_fail_fast, -test.failfast): cheap.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "require_gpu_check: this machine has a GPU; the check is for machines without one"
  exit 1
fi

# Targets whose sources use the gating but that have no GPU case: they test the gating
# itself, or read fixture files whose cases all run anywhere ("requires": "none").
not_gpu_bearing=(
  //csrc/testing:zero_case_rule_test   # the zero-case rule, on cases that never need a GPU
  //go/internal/fixture:fixture_test   # the Go fixture reader, with stand-in tests
  //go/internal/testkernel:testkernel_test # Require's skip and failure, with a stand-in test
  //csrc/package:package_test          # testdata/packages.json: every case "none"
  //csrc/c_api:package_api_test        # the same file through the C ABI
  //csrc/c_api:caller_stream_api_test  # testdata/caller_stream.json: every case "none"
  //csrc/c_api:pt2_versions_test       # testdata/pt2_versions.json: every case "none" (CPU exports)
  //csrc/c_api:pt2_hostile_test        # testdata/hostile_pt2.json: every case "none"
  //csrc/c_api:cpu_zoo_test            # testdata/cpu_zoo.json: every case "none" (CPU exports)
  //csrc/c_api:select_export_test      # testdata/select_export.json: one case, "none" (a CPU export)
)
gating='SLIMCUDA_REQUIRE_GPU_OR_SKIP|has_gpu\(\)|gpu_count\(\)|gpu_required\(\)|begin_case\(|fx\.Begin\(|requireGPU|gpuCount\(|\bgpu\(t\)|SLIMCUDA_REQUIRE_GPU'
private='cudaGetDeviceCount\(&|getenv\("SLIMCUDA_REQUIRE_GPU"\)|Getenv\("SLIMCUDA_REQUIRE_GPU"\)'
status=0
cc=() go=()
for target in $(bazel query 'kind("(cc|go)_test", //...)' 2>/dev/null); do
  srcs=$(bazel query "labels(srcs, $target)" 2>/dev/null | grep '^//' | sed 's#^//\([^:]*\):#\1/#')
  # shellcheck disable=SC2086 # one word per file
  if grep -qE "$gating" $srcs 2>/dev/null && [[ " ${not_gpu_bearing[*]} " != *" $target "* ]]; then
    if bazel query "kind(go_test, $target)" 2>/dev/null | grep -q .; then go+=("$target"); else cc+=("$target"); fi
  fi
  # shellcheck disable=SC2086
  if hits=$(grep -nE "$private" $srcs 2>/dev/null | grep -v '^go/internal/fixture/\|^csrc/testing/\|^go/slimcuda/main_test.go'); then
    echo "require_gpu_check: $target gates on a GPU privately (use csrc/testing/fixtures.h or go/internal/fixture):"
    while IFS= read -r line; do echo "    $line"; done <<<"$hits"
    status=1
  fi
done
echo "require_gpu_check: ${#cc[@]} C++ and ${#go[@]} Go GPU-bearing test targets"

check() { # flag-for-fail-fast targets...
  local arg="$1" out rc t log bad=0
  shift
  (($# == 0)) && return 0
  # SLIMCUDA_REQUIRE_GPUS=2 too: the two-GPU cases must fail as well (multi_gpu_test has no other).
  out=$(bazel test --test_env=SLIMCUDA_REQUIRE_GPU=1 --test_env=SLIMCUDA_REQUIRE_GPUS=2 --cache_test_results=no \
    --test_output=summary \
    --test_arg="$arg" "$@" 2>&1)
  rc=$?
  # Bazel's exit code 3: built, and tests failed. Anything else (1: build error) proves nothing.
  if ((rc != 3)); then
    echo "$out" | tail -20
    echo "require_gpu_check: bazel test exited $rc; want 3 (built, tests failed)"
    return 1
  fi
  for t in "$@"; do
    log="bazel-testlogs/$(sed 's#^//##; s#:#/#' <<<"$t")/test.log"
    if ! grep -qE "^$t +FAILED in" <<<"$out"; then
      echo "require_gpu_check: $t did not fail under SLIMCUDA_REQUIRE_GPU=1 without a GPU"
      bad=1
    elif ! grep -q 'SLIMCUDA_REQUIRE_GPU' "$log"; then
      echo "require_gpu_check: $t failed, but not for the missing GPU:"
      tail -5 "$log" | sed 's/^/    /'
      bad=1
    fi
  done
  return $bad
}
check --gtest_fail_fast "${cc[@]}" || status=1
check -test.failfast "${go[@]}" || status=1
((status == 0)) && echo "require_gpu_check: every GPU-bearing target fails under SLIMCUDA_REQUIRE_GPU=1, as it must"
exit $status
