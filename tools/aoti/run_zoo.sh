#!/usr/bin/env bash
# tools/aoti/run_zoo.sh [BUNDLE] [OUT] — on the GPU machine, from the repository root, with
# the folder tools/gpu/bundle.sh made (default gpu-bundle): exports the zoo with PyTorch's
# AOTInductor, converts every model to a slimcuda package, runs each through the C API
# (tools/aoti/zoo_runner; without and with a non-blocking caller stream) and through the Go
# CLI (`slimcuda run -inputs -save`), compares with PyTorch eager, times PyTorch's own
# AOTInductor runner on the same .so and inputs, and ends with "N passed, N failed".
set -uo pipefail
bundle="${1:-gpu-bundle}"
out="${2:-${TMPDIR:-/tmp}/slimcuda-zoo}"
bundle="$(cd "$bundle" && pwd)"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
passed=0 failed=0
count() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }

echo "zoo: $(date -u '+%Y-%m-%d %H:%M UTC'), torch $(python3 -c 'import torch; print(torch.__version__)')"
python3 tools/aoti/export_models.py "$out" || { echo "0 passed, 1 failed"; exit 1; }
: >"$out/results.jsonl"
for d in "$out"/*/; do
  d="${d%/}"
  name="$(basename "$d")"
  [[ -f "$d/model.pt2" ]] || continue
  if ! python3 tools/aoti/pt2_to_package.py "$d" "$bundle/pack"; then
    failed=$((failed + 1))
    continue
  fi
  count bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' | tee -a '$out/results.jsonl'"
  count bash -c "set -o pipefail; '$bundle/zoo_runner' '$d' --stream | tee -a '$out/results.jsonl'"
  for c in "$d"/batch_*/; do
    c="${c%/}"
    count bash -c "set -o pipefail; '$bundle/slimcuda' run -device cuda -json -iterations 0 -inputs '$c' -save '$c/cli' '$d/model.slimcuda' \
      >/dev/null && python3 tools/aoti/compare.py '$c' '$c/cli' | sed 's/^/cli: /'"
  done
done
python3 tools/aoti/export_models.py "$out" --time-runner 200 | tail -1
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
torch_t = json.load(open(os.path.join(out, "torch_runner.json")))
rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl")) if l.strip()]
print("| model | caller stream | cases | max abs err | max rel err | slimcuda µs/call | torch runner µs/call | ratio |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    t = torch_t.get(r["model"], {})
    tu = t.get("torch_runner_us_median")
    ratio = f"{r['slimcuda_us_median'] / tu:.3f}" if tu else t.get("error", "n/a")
    print(f"| {r['model']} | {'yes' if r['stream'] else 'no'} | {len(r['cases'])} | "
          f"{max(c['max_abs'] for c in r['cases']):.2e} | {max(c['max_rel'] for c in r['cases']):.2e} | "
          f"{r['slimcuda_us_median']:.1f} | {tu if tu is None else f'{tu:.1f}'} | {ratio} |")
for name in sorted(os.listdir(out)):
    p = os.path.join(out, name, "shims.json")
    if os.path.exists(p):
        print(f"shims {name}: {' '.join(json.load(open(p)))}")
PY
echo "$passed passed, $failed failed"
((failed == 0))
