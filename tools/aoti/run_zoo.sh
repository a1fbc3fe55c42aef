#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/run_zoo.sh [--only NAME,...] [BUNDLE] [WORK] — on the GPU machine, from the
# repository root, with the folder tools/gpu/bundle.sh made (default gpu-bundle): exports the
# zoo with PyTorch's AOTInductor (tools/aoti/export_models.py, 8 exports at once: every model
# the default libtorch-free way, the transformers also with the Triton recipe), and as each
# export ends (the others still compiling) loads it into slimcuda, runs it through the C API
# (zoo_runner, without and with a non-blocking caller stream) and the Go CLI (`slimcuda run
# -inputs -save`: the case's input_<i>.npy in, output_<i>.npy out; every case) and compares
# with PyTorch eager (the model's tolerance, meta.json). When every export is done (a quiet
# machine): times each model through slimcuda (both ways) and PyTorch's own runner on the same
# .pt2 and inputs, 200 warm-up calls, median of 200. Ends with "N passed, N failed, N skipped".
#
# Environment:
#   ZOO_ONLY="a b" (or --only a,b)  variants or models (a model: each of its variants)
#   ZOO_EXPORT_ONLY=1   export only (and record each export's undefined shims): no checks, no timing
#   ZOO_LOAD=package    convert each .pt2 with pt2_to_package.py and load the .slimcuda (default);
#            pt2        load the .pt2 itself (slimcuda_model_load_file on model.pt2; the CLI too)
#   ZOO_ALSO_PT2=1      with ZOO_LOAD=package: also load each .pt2 directly and check it
#   ZOO_WEIGHTS=so|archive|both  where the exports keep their weights (default: so for package,
#                       both for pt2); archive variants (NAME__archive) load only with ZOO_LOAD=pt2
#   ZOO_RECIPE=default|triton  one recipe for every model (default: each model's own recipes)
#   ZOO_JOBS=8          exports at once
#   ZOO_PYTHON=python3  the Python with torch, torchvision, timm and transformers
#   ZOO_DEVICE=cpu      export for the CPU (a dry run of the export phase without a GPU: with
#                       ZOO_EXPORT_ONLY=1)
#   ZOO_RESERVE_S=120   seconds of the budget kept for checks, timing and the report
#   ZOO_BUDGET_S=540    wall-time budget: exports not started 120 s (export only: 30 s) before its end are skipped,
#                       running ones stopped; timing stops 20 s before it; the report is written
#                       after every phase (and on SIGTERM/SIGINT), so a cut-off run keeps its results
# WORK (default $TMPDIR/slimcuda-zoo) keeps the exports; results.md (the tables for
# docs/runs/aoti-zoo.md), fallback-shims.md (tools/aoti/shim_coverage.py), results.jsonl,
# torch_runner.json, failures.jsonl and every model's meta.json/shims.json/export.log (as
# models/VARIANT.meta.json ...) go to $OUT when it is set.
set -uo pipefail
only="${ZOO_ONLY:-}"
if [[ "${1:-}" == "--only" ]]; then
  only="${2:?--only needs NAME,...}"
  shift 2
fi
only="${only//,/ }"
bundle="${1:-gpu-bundle}"
work="${2:-${TMPDIR:-/tmp}/slimcuda-zoo}"
bundle="$(cd "$bundle" && pwd)"
report="${OUT:-$work}"
load="${ZOO_LOAD:-package}"
case "$load" in package) weights_default=so ;; pt2) weights_default=both ;; *)
  echo "run_zoo: ZOO_LOAD must be package or pt2" >&2
  exit 2
  ;;
esac
weights="${ZOO_WEIGHTS:-$weights_default}"
export_only="${ZOO_EXPORT_ONLY:-0}"
budget="${ZOO_BUDGET_S:-540}"
t_start=$(date +%s)
mkdir -p "$work" "$report"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
iterations=200 warmup=200
passed=0 failed=0 skipped=0
fail() { # VARIANT WHAT: one failure, recorded for the report
  failed=$((failed + 1))
  printf '{"variant": "%s", "failed": "%s"}\n' "$1" "$2" >>"$work/failures.jsonl"
}
check() { # VARIANT WHAT COMMAND...: a counted check, its failure recorded
  local v="$1" what="$2"
  shift 2
  if "$@"; then passed=$((passed + 1)); else fail "$v" "$what"; fi
}
stamp() { echo "zoo: $(date -u '+%H:%M:%S') (+$(($(date +%s) - t_start)) s) $*"; }
left() { echo $((t_start + budget - $(date +%s))); } # seconds of the budget left

py="${ZOO_PYTHON:-python3}" # the Python with torch (and torchvision, timm, transformers)
# torch's version and its generated CUDA shim header (the coverage table's list), read once
{ read -r torch_version && read -r shim_header; } < <("$py" -c 'import os, torch; print(torch.__version__)
print(os.path.join(os.path.dirname(torch.__file__), "include/torch/csrc/inductor/aoti_torch/generated/c_shim_cuda.h"))')
stamp "start $(date -u '+%Y-%m-%d'), torch ${torch_version:-not found}, $(nproc) cores," \
  "load $load, weights $weights, budget ${budget} s${only:+, only: $only}"
for f in check.jsonl results.jsonl status.jsonl failures.jsonl torch_runner.json; do : >"$work/$f"; done
echo '{}' >"$work/torch_runner.json"
symbols="$work/libslimcuda.symbols"
nm -D --defined-only "$bundle/lib/libslimcuda.so.0" | awk '{print $NF}' | sort -u >"$symbols"

write_report() { # the tables so far, into $work and $report
  "$py" tools/aoti/zoo_report.py "$work" "$symbols" >"$work/results.md"
  "$py" tools/aoti/shim_coverage.py --header "$shim_header" --library-symbols "$symbols" --zoo "$work" \
    --source "zoo run $(date -u '+%Y-%m-%d %H:%M UTC'), torch $torch_version" \
    >"$work/fallback-shims.md" || echo "zoo: shim_coverage.py failed"
  if [[ "$report" != "$work" ]]; then
    cp "$work/results.md" "$work/fallback-shims.md" "$work/results.jsonl" "$work/check.jsonl" \
      "$work/status.jsonl" "$work/failures.jsonl" "$work/torch_runner.json" "$report/" 2>/dev/null
    # One flat folder (models/VARIANT.meta.json, .shims.json, .export.log): the device
    # machine's file return drops folders nested too deep.
    local d n f
    mkdir -p "$report/models"
    for d in "$work"/*/; do
      n="$(basename "$d")"
      for f in meta.json shims.json export.log; do
        [[ -f "$d/$f" ]] && cp "$d/$f" "$report/models/$n.$f"
      done
    done
  fi
}
finish() {
  write_report
  cat "$work/results.md"
  stamp "done"
  echo "$passed passed, $failed failed, $skipped skipped"
  ((failed == 0))
}
on_signal() {
  stamp "stopped by a signal: writing what was measured"
  fail run "stopped by a signal"
  finish
  exit 1
}
trap on_signal TERM INT

checked=() # variants loaded and checked (the ones to time)
meta_field() { # DIR FIELD: meta.json's top-level FIELD ("" when absent)
  "$py" -c 'import json, sys
v = json.load(open(sys.argv[1] + "/meta.json")).get(sys.argv[2])
print(v if isinstance(v, str) else "yes" if v else "")' "$1" "$2"
}
detection_check() { # DIR SAVED: a detector's outputs saved by zoo_runner (CASE/SAVED/), matched by compare.py
  local c rc=0
  for c in "$1"/batch_*/; do
    "$py" tools/aoti/compare.py "${c%/}" "${c%/}/$2" | sed "s/^/$2: /" || rc=1
  done
  return $rc
}
check_model() { # load and check one exported model
  local d="$1" name c model load="$load" det
  name="$(basename "$d")"
  # A model whose meta.json says "load": "pt2" (the detectors: a package carries no
  # extern-kernel nodes for nms and roi_align) is loaded from its .pt2 whatever ZOO_LOAD says;
  # a detector's outputs ("detections") are matched by compare.py from what zoo_runner saved.
  [[ "$(meta_field "$d" load)" == pt2 ]] && load=pt2
  det="$(meta_field "$d" detections)"
  if [[ "$load" == package ]]; then
    if [[ "$name" == *__archive ]]; then # the converter takes the weights from the .so
      stamp "skip $name: weights in the archive load only from the .pt2 (ZOO_LOAD=pt2)"
      skipped=$((skipped + 1))
      return
    fi
    if ! "$py" tools/aoti/pt2_to_package.py "$d" "$bundle/pack"; then
      fail "$name" "conversion (pt2_to_package.py)"
      return
    fi
    model="$d/model.slimcuda"
  else
    model="$d/model.pt2"
  fi
  checked+=("$name")
  check "$name" "C API" bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --load '$load' --iterations 0 --save | tee -a '$work/check.jsonl' | tee -a '$work/results.jsonl'"
  [[ -n "$det" ]] && check "$name" "C API, detections" detection_check "$d" capi
  check "$name" "C API, caller stream" bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --load '$load' --iterations 0 --stream | tee -a '$work/check.jsonl' | tee -a '$work/results.jsonl'"
  [[ -n "$det" ]] && check "$name" "C API, caller stream, detections" detection_check "$d" capi_stream
  if [[ "$load" == package && "${ZOO_ALSO_PT2:-0}" == 1 ]]; then # the same .pt2 loaded directly, too
    check "$name" "C API, .pt2" bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --load pt2 --iterations 0 --stream | tee -a '$work/check.jsonl' | tee -a '$work/results.jsonl'"
  fi
  for c in "$d"/batch_*/; do
    c="${c%/}"
    check "$name" "CLI $(basename "$c")" bash -c "set -o pipefail; '$bundle/slimcuda' run -device cuda -json -iterations 0 -inputs '$c' -save '$c/cli' '$model' \
      >/dev/null && '$py' tools/aoti/compare.py '$c' '$c/cli' | sed 's/^/cli: /'"
  done
}

stamp "phase 1: export (background)$([[ "$export_only" == 1 ]] || echo ' + load + check as each export ends')"
reserve=${ZOO_RESERVE_S:-120} # for the checks' tail, the timing and the report
[[ "$export_only" == 1 ]] && reserve=30
export_args=(--jobs "${ZOO_JOBS:-8}" --weights "$weights" --device "${ZOO_DEVICE:-cuda}"
  --deadline "$((t_start + budget - reserve))")
[[ -n "${ZOO_RECIPE:-}" ]] && export_args+=(--recipe "$ZOO_RECIPE")
# shellcheck disable=SC2206 # one name per word
[[ -n "$only" ]] && export_args+=(--only $only)
while read -r status name; do
  [[ -n "${name:-}" ]] || continue
  printf '{"variant": "%s", "status": "%s"}\n' "$name" "$status" >>"$work/status.jsonl"
  case "$status" in
    exported) [[ "$export_only" == 1 ]] || {
      stamp "check $name"
      check_model "$work/$name"
    } ;;
    failed) fail "$name" "export" ;;
    skipped) skipped=$((skipped + 1)) ;;
  esac
done < <("$py" tools/aoti/export_models.py "$work" "${export_args[@]}")
write_report
[[ "$export_only" == 1 ]] && {
  stamp "ZOO_EXPORT_ONLY=1: no checks, no timing"
  finish
  exit
}

stamp "phase 2: timing, slimcuda"
timed=()
for name in "${checked[@]}"; do
  if (($(left) < 20)); then
    stamp "budget spent: $name and later not timed"
    break
  fi
  timed+=("$name")
  l="$load"
  [[ "$(meta_field "$work/$name" load)" == pt2 ]] && l=pt2 # as check_model loaded it
  # The caller stream with CUDA graphs on, too: replay against a normal run, same outputs.
  for mode in "" --stream "--stream --graphs"; do
    # shellcheck disable=SC2086
    "$bundle/zoo_runner" "$work/$name" --load "$l" --iterations "$iterations" --warmup "$warmup" $mode \
      >>"$work/results.jsonl" || {
      stamp "timing $name $mode failed"
      fail "$name" "timing${mode:+ $mode}"
    }
  done
done
write_report
stamp "phase 3: timing, PyTorch's runner"
if ((${#timed[@]})) && (($(left) > 10)); then
  timeout "$(left)" "$py" tools/aoti/export_models.py "$work" --device "${ZOO_DEVICE:-cuda}" --time-runner "$iterations" --warmup "$warmup" \
    --only "${timed[@]}" | grep -v '^runner: .*"pass": true'
fi
stamp "phase 4: report"
finish
