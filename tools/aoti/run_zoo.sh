#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/run_zoo.sh [BUNDLE] [WORK] — on the GPU machine, from the repository root, with
# the folder tools/gpu/bundle.sh made (default gpu-bundle): exports the zoo with PyTorch's
# AOTInductor the default libtorch-free way (tools/aoti/export_models.py, 8 exports at once;
# ZOO_RECIPE=triton for the old Triton-only recipe), and as each export ends (the others still
# compiling): converts it to a slimcuda package, runs it through the C API (zoo_runner, without
# and with a non-blocking caller stream) and the Go CLI (`slimcuda run -inputs -save`: the
# case's input_<i>.npy in, output_<i>.npy out; every case) and compares with PyTorch eager (the model's tolerance, meta.json). When every export
# is done (a quiet machine): times each model through slimcuda (both ways) and PyTorch's own
# runner on the same .pt2 and inputs, 200 warm-up calls, median of 200. Ends with
# "N passed, N failed"; WORK (default $TMPDIR/slimcuda-zoo) keeps the exports, and
# results.md (the table for docs/aoti-zoo.md), results.jsonl, torch_runner.json and every
# model's meta.json/shims.json/export.log are copied to $OUT when it is set.
set -uo pipefail
bundle="${1:-gpu-bundle}"
work="${2:-${TMPDIR:-/tmp}/slimcuda-zoo}"
bundle="$(cd "$bundle" && pwd)"
report="${OUT:-$work}"
mkdir -p "$work" "$report"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
iterations=200 warmup=200
passed=0 failed=0
count() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }
stamp() { echo "zoo: $(date -u '+%H:%M:%S') $*"; }

stamp "start $(date -u '+%Y-%m-%d'), torch $(python3 -c 'import torch; print(torch.__version__)'), $(nproc) cores"
: >"$work/check.jsonl"
: >"$work/results.jsonl"
nm -D --defined-only "$bundle/lib/libslimcuda.so.0" | awk '{print $NF}' | sort -u >"$work/libslimcuda.symbols"

check_model() { # convert and check one exported model
  local d="$1" c
  if ! python3 tools/aoti/pt2_to_package.py "$d" "$bundle/pack"; then
    failed=$((failed + 1))
    return
  fi
  count bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --iterations 0 --save | tee -a '$work/check.jsonl'"
  count bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --iterations 0 --stream | tee -a '$work/check.jsonl'"
  for c in "$d"/batch_*/; do
    c="${c%/}"
    count bash -c "set -o pipefail; '$bundle/slimcuda' run -device cuda -json -iterations 0 -inputs '$c' -save '$c/cli' '$d/model.slimcuda' \
      >/dev/null && python3 tools/aoti/compare.py '$c' '$c/cli' | sed 's/^/cli: /'"
  done
}

stamp "phase 1: export (background) + convert + check as each export ends"
while read -r status name; do
  case "$status" in
    exported) stamp "check $name"; check_model "$work/$name" ;;
    failed) failed=$((failed + 1)) ;;
  esac
done < <(python3 tools/aoti/export_models.py "$work" --recipe "${ZOO_RECIPE:-default}" --jobs "${ZOO_JOBS:-8}")

stamp "phase 2: timing, slimcuda"
models=()
for d in "$work"/*/; do
  d="${d%/}"
  [[ -f "$d/model.slimcuda" ]] || continue
  models+=("$(basename "$d")")
  for mode in "" --stream; do
    # shellcheck disable=SC2086
    "$bundle/zoo_runner" "$d" --iterations "$iterations" --warmup "$warmup" $mode >>"$work/results.jsonl" ||
      { echo "zoo: timing $(basename "$d") $mode failed"; failed=$((failed + 1)); }
  done
done
stamp "phase 3: timing, PyTorch's runner"
((${#models[@]})) && python3 tools/aoti/export_models.py "$work" --time-runner "$iterations" --warmup "$warmup" \
  --only "${models[@]}" | grep -v '^runner: .*"pass": true'
stamp "phase 4: report"
python3 - "$work" >"$work/results.md" <<'PY'
import json, os, sys
work = sys.argv[1]
torch_t = json.load(open(os.path.join(work, "torch_runner.json"))) if os.path.exists(os.path.join(work, "torch_runner.json")) else {}
rows = [json.loads(l) for l in open(os.path.join(work, "results.jsonl")) if l.strip()]
have = set(open(os.path.join(work, "libslimcuda.symbols")).read().split())
print("| model | dtype | caller stream | cases | max abs err | max rel err | tolerance (atol, rtol) | slimcuda µs/call | PyTorch runner µs/call | ratio | runner max abs err |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in sorted(rows, key=lambda r: (r["model"], r["stream"])):
    t = torch_t.get(r["model"], {})
    tu, su = t.get("torch_runner_us_median"), r.get("slimcuda_us_median") or 0
    ratio = f"{su / tu:.3f}" if tu and su else t.get("error", "n/a")[:60]
    tol = r["tolerance"]
    fmt = lambda v: "n/a" if v is None else f"{v:.2e}"
    print(f"| {r['model']} | {r['dtype']} | {'yes' if r['stream'] else 'no'} | {len(r['cases'])} | "
          f"{fmt(max((c['max_abs'] for c in r['cases']), key=lambda v: -1 if v is None else v))} | "
          f"{fmt(max((c['max_rel'] for c in r['cases']), key=lambda v: -1 if v is None else v))} | "
          f"{tol['name']}: {tol['atol']:g}, {tol['rtol']:g} | {su:.1f} | {'n/a' if tu is None else f'{tu:.1f}'} | "
          f"{ratio} | {fmt(t.get('max_abs_vs_eager'))}{'' if t.get('pass', True) else ' (fail)'} |")
print()
print("| model | export s | undefined aoti_torch_* shims | ATen fallbacks | missing from libslimcuda.so |")
print("|---|---|---|---|---|")
for name in sorted(os.listdir(work)):
    p = os.path.join(work, name, "shims.json")
    if not os.path.exists(p):
        continue
    shims = json.load(open(p))
    meta_p = os.path.join(work, name, "meta.json")
    secs = json.load(open(meta_p)).get("export_seconds") if os.path.exists(meta_p) else None
    fb = [s.replace("aoti_torch_cuda_", "") for s in shims if s.startswith("aoti_torch_cuda_")]
    missing = [s for s in shims if s not in have]
    print(f"| {name} | {secs} | {len(shims)} | {' '.join(fb) or '—'} | {' '.join(missing) or '—'} |")
PY
cat "$work/results.md"
if [[ "$report" != "$work" ]]; then
  cp "$work/results.md" "$work/results.jsonl" "$work/check.jsonl" "$report/" 2>/dev/null
  cp "$work/torch_runner.json" "$report/" 2>/dev/null
  for d in "$work"/*/; do
    n="$(basename "$d")"
    mkdir -p "$report/models/$n"
    cp "$d"/meta.json "$d"/shims.json "$d"/export.log "$report/models/$n/" 2>/dev/null
  done
fi
stamp "done"
echo "$passed passed, $failed failed"
((failed == 0))
