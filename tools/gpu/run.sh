#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh [--bench | --sanitize TOOL | --ptx | --ptx-jit] — on the GPU machine, from the folder tools/gpu/bundle.sh
# made: runs every test binary with SLIMCUDA_REQUIRE_GPU=1 (a missing GPU fails instead of
# skipping), lists the skips by reason (skips.py: a reason off its allow-list fails the run)
# and ends with one line "N passed, N failed, N skipped" counting individual tests.
# --bench also runs the benchmarks (C++ binaries and the Go benchmarks) afterwards.
# --sanitize TOOL runs the C++ test binaries under compute-sanitizer --tool TOOL (memcheck,
# racecheck, synccheck, initcheck); a sanitizer report fails the binary.
# --ptx runs the C++ test binaries of the PTX-only build (ptx/: --config=ptx_jit, compute_80
# PTX and no SASS, so every slimcuda kernel is JIT-compiled by the driver; cuBLAS and cuDNN run
# their own SASS). --ptx-jit runs them with CUDA_FORCE_PTX_JIT=1 too, less the tests that
# call cuBLAS or cuDNN, which cannot start under it (filters.txt).
# filters.txt lists, per mode (memcheck, racecheck, ptx-jit), the tests a mode leaves out
# and why.
# SLIMCUDA_GPU_ONLY=REGEX runs only the test binaries whose names match (e.g. csrc_graph__).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bins="$here/bin"
ptx=""
if [[ "${1:-}" == --ptx || "${1:-}" == --ptx-jit ]]; then
  ptx="$1"
  bins="$here/ptx/bin"
fi
# tools/gpu/carry.sh leaves the fixtures out (the carry limit): they come from the tree the
# bundle is unpacked in.
if [[ ! -d "$here/testdata" && -d "$here/../testdata" ]]; then
  mkdir -p "$here/testdata"
  find "$here/../testdata" -mindepth 1 -maxdepth 1 ! -name BUILD.bazel -exec cp -r {} "$here/testdata/" \;
fi
export SLIMCUDA_REQUIRE_GPU=1
# Two-GPU cases skip on one GPU; on a two-GPU machine run with SLIMCUDA_REQUIRE_GPUS=2.
export SLIMCUDA_REQUIRE_GPUS="${SLIMCUDA_REQUIRE_GPUS:-1}"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -n "$ptx" ]] && export LD_LIBRARY_PATH="$here/ptx/lib:$LD_LIBRARY_PATH"
SLIMCUDA_FIXTURES="$(printf '%s ' "$here"/testdata/*.json)"
export SLIMCUDA_FIXTURES SLIMCUDA_DEMO_PACKAGE="$here/demo.slimcuda" SLIMCUDA_DEMO_SYNC_PACKAGE="$here/demo_sync.slimcuda"
export SLIMCUDA_DEMO_MODEL_JSON="$here/testdata/demo_model.json" SLIMCUDA_PT2_JSON="$here/testdata/pt2.json"
export SLIMCUDA_DEMO_CPU_PT2="$here/models/demo_cpu.pt2" SLIMCUDA_DEMO_CUDA_PT2="$here/models/demo_cuda.pt2"
SLIMCUDA_TEST_MODELS="$(printf '%s ' "$here"/models/*.slimcuda)"
export SLIMCUDA_TEST_MODELS SLIMCUDA_TEST_LIBRARY="$here/models/libconstant_1.so" SLIMCUDA_TEST_MODELS_DIR="$here/models" \
  SLIMCUDA_DEMO_CPU_SO="$here/models/libdemo_cpu.so"
if [[ -n "$ptx" ]]; then # the demo model's kernels from the PTX-only build too
  export SLIMCUDA_DEMO_PACKAGE="$here/ptx/demo.slimcuda" SLIMCUDA_DEMO_SYNC_PACKAGE="$here/ptx/demo_sync.slimcuda" \
    SLIMCUDA_DEMO_CUDA_PT2="$here/ptx/demo_cuda.pt2"
fi
if [[ "$ptx" == --ptx-jit ]]; then
  export CUDA_FORCE_PTX_JIT=1
  # The first run JIT-compiles every kernel; a private cache shows that cost each time.
  CUDA_CACHE_PATH="$(mktemp -d)"
  export CUDA_CACHE_PATH
fi
logs="${SLIMCUDA_GPU_LOGS:-$here/logs}"
mkdir -p "$logs"
# The CUDA .pt2 with its weights in the archive (csrc/c_api/pt2_load_test.cc, go/slimcuda/
# load_test.go): exported here with the machine's PyTorch unless given; without one
# those tests fail (SLIMCUDA_REQUIRE_GPU=1).
# The decode-step model with a KV cache in its buffers (csrc/c_api/decode_test.cc,
# go/slimcuda/decode_test.go): tools/aoti/decoder.py's export, made here too unless given.
# The two exports run side by side.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  if [[ -z "${SLIMCUDA_PT2_CUDA_WEIGHTS:-}" ]]; then
    python3 "$here/export_weights_example.py" "$here/weights-export" cuda >"$logs/export_weights_example.log" 2>&1 &
  fi
  if [[ -z "${SLIMCUDA_PT2_CUDA_MIXED:-}" ]]; then # a CPU constant in a CUDA model
    python3 "$here/export_weights_example.py" "$here/mixed-export" cuda mixed >"$logs/export_mixed_example.log" 2>&1 &
  fi
  if [[ -z "${SLIMCUDA_DECODER_DIR:-}" ]]; then
    python3 "$here/decoder.py" "$here/decoder-export" --oob >"$logs/decoder_export.log" 2>&1 &
  fi
  wait
  if [[ -z "${SLIMCUDA_PT2_CUDA_WEIGHTS:-}" && -f "$here/weights-export/model.pt2" ]]; then
    export SLIMCUDA_PT2_CUDA_WEIGHTS="$here/weights-export/model.pt2"
  fi
  if [[ -z "${SLIMCUDA_PT2_CUDA_MIXED:-}" && -f "$here/mixed-export/y.bin" ]]; then
    export SLIMCUDA_PT2_CUDA_MIXED="$here/mixed-export/model.pt2"
  fi
  # The same export unpacked (model.so, weights.blob, wrapper.cpp): csrc/model/constants_test.
  if [[ -z "${SLIMCUDA_PT2_EXPORT_DIR:-}" && -f "$here/weights-export/model.so" ]]; then
    export SLIMCUDA_PT2_EXPORT_DIR="$here/weights-export"
  fi
  if [[ -z "${SLIMCUDA_DECODER_DIR:-}" && -f "$here/decoder-export/reference.json" ]]; then
    export SLIMCUDA_DECODER_DIR="$here/decoder-export"
  fi
fi

echo "gpu run: $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)${ptx:+ ($ptx: the PTX-only build${CUDA_FORCE_PTX_JIT:+, CUDA_FORCE_PTX_JIT=1})}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

wrap=()
if [[ "${1:-}" == "--sanitize" ]]; then
  cs="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  # API errors are not reported: the bad-input tests provoke them on purpose (an impossible
  # cudaMalloc must come back as SLIMCUDA_ERR_OUT_OF_MEMORY), and every CUDA return value is
  # checked by the library and asserted by the tests anyway.
  wrap=("$cs" --tool "${2:?--sanitize needs a tool}" --error-exitcode 9 --print-limit 20)
  [[ "$2" == memcheck ]] && wrap+=(--report-api-errors no)
  # racecheck reports shared-memory hazards inside cuDNN's own sm90 flash-attention kernels
  # (wgmma/TMA, synchronized through mbarriers, which racecheck does not follow: NVIDIA's
  # tool has known false positives on them). That code is the vendor's, not ours, and its
  # outputs match the references; it is left out so that a hazard in slimcuda's kernels
  # fails the run. SLIMCUDA_RACECHECK_VENDOR=1 checks it too (docs/runs/gpu.md, 18:30 UTC).
  if [[ "$2" == racecheck && "${SLIMCUDA_RACECHECK_VENDOR:-0}" != 1 ]]; then
    wrap+=(--kernel-name-exclude kns=cudnn_generated_fort_native_sdpa_sm90_flash_fprop)
  fi
  # SLIMCUDA_SANITIZER_ARGS: more compute-sanitizer options, for a diagnosis.
  read -r -a extra <<<"${SLIMCUDA_SANITIZER_ARGS:-}"
  wrap+=("${extra[@]}")
  echo "sanitizer: ${wrap[*]}"
fi

mode="${ptx#--}"
[[ "${1:-}" == --sanitize ]] && mode="$2"
passed=0 failed=0 skipped=0
for bin in "$bins"/*; do
  name=$(basename "$bin")
  if [[ -n "${SLIMCUDA_GPU_ONLY:-}" ]] && ! [[ "$name" =~ $SLIMCUDA_GPU_ONLY ]]; then continue; fi
  # The Go binaries fork the toolchain's runtime threads; the sanitizer runs cover C++ only.
  if ((${#wrap[@]} > 0)) && [[ "$name" == go_* ]]; then continue; fi
  # filters.txt: what this mode leaves out of a binary, and why (its comments).
  filter=() env_of=()
  if [[ -n "$mode" ]]; then
    read -r -a entry < <(awk -v m="$mode" -v n="$name" '$1 == m && $2 == n {$1 = $2 = ""; print}' "$here/filters.txt")
    if [[ "${entry[0]:-}" == "-" ]]; then
      echo "$name: left out under $mode (tools/gpu/filters.txt says why)"
      continue
    fi
    [[ -n "${entry[0]:-}" && "${entry[0]}" != "*" ]] && filter=("--gtest_filter=${entry[0]}")
    env_of=("${entry[@]:1}")
  fi
  log="$logs/$name.log"
  # As bazel test: a private, empty TEST_TMPDIR per test binary.
  TEST_TMPDIR="$(mktemp -d)"
  export TEST_TMPDIR
  if [[ "$name" == go_* ]]; then
    # No -test.run: with every test selected, the fixture mirror check runs (fixture.Verify).
    (cd "$here" && "$bin" -test.v -test.count=1 >"$log" 2>&1)
    rc=$?
    # Count top-level tests and subtests alike: every "--- PASS/FAIL/SKIP" line.
    p=$(grep -cE '^\s*--- PASS' "$log")
    f=$(grep -cE '^\s*--- FAIL' "$log")
    s=$(grep -cE '^\s*--- SKIP' "$log")
  else
    (cd "$here" && env "${env_of[@]}" "${wrap[@]}" "$bin" "${filter[@]}" --gtest_output="xml:$logs/$name.xml" >"$log" 2>&1)
    rc=$?
    xml="$logs/$name.xml"
    # The first match of each attribute is the <testsuites> total; gtest writes no skipped
    # total there, so skips are counted per test case.
    attr() { grep -m1 -o "$1=\"[0-9]*\"" "$xml" 2>/dev/null | grep -o '[0-9]*' || echo 0; }
    total=$(attr tests) f=$(attr failures) d=$(attr disabled)
    s=$(grep -c 'result="skipped"' "$xml" 2>/dev/null)
    p=$((total - f - s - d))
  fi
  # A binary that never calls CUDA (a host-only test) is nothing for the sanitizer to check.
  if ((${#wrap[@]} > 0 && rc == 255)) && grep -q 'terminated before first instrumented API call' "$log"; then
    rc=0
  fi
  if ((rc != 0 && f == 0)); then
    f=1 # crashed, or failed outside a test (e.g. the fixture mirror check)
  fi
  printf '%-50s rc=%-3d %4d passed %3d failed %3d skipped\n' "$name" "$rc" "$p" "$f" "$s"
  grep -E '^fixtures: ' "$log" | sed 's/^/    /'
  grep -E '^========= (ERROR|RACECHECK) SUMMARY' "$log" | sed 's/^/    /'
  if ((f > 0)); then
    grep -E 'Failure|FAIL|Error|error' "$log" | head -20 | sed 's/^/    | /'
  fi
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

if [[ "${1:-}" == "--bench" ]]; then
  for b in "$here"/bench/*; do
    echo
    echo "## $(basename "$b")"
    "$b" || failed=$((failed + 1))
  done
  for bin in "$here"/bin/go_*; do
    echo
    echo "## $(basename "$bin") benchmarks"
    (cd "$here" && "$bin" -test.run "^$" -test.bench . -test.benchtime "${SLIMCUDA_BENCHTIME:-1s}" -test.count "${SLIMCUDA_BENCHCOUNT:-1}") ||
      failed=$((failed + 1))
  done
fi

# Skips by reason; a reason not on skips.py's allow-list (one GPU: the no-GPU tests and the
# two-GPU ones) fails the run: a test that skipped here checked nothing.
echo
skips_ok=1
python3 "$here/skips.py" "$logs" || skips_ok=0
echo
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0 && skips_ok == 1))
