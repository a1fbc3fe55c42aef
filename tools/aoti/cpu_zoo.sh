#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/aoti/cpu_zoo.sh [WORK] — the CPU zoo, from the repository root, on any x86-64 Linux
# machine (no GPU): exports the zoo's models for the CPU with PyTorch's AOTInductor
# (tools/aoti/export_models.py --device cpu, the libtorch-free default recipe), loads each
# .pt2 in slimcuda on the CPU (zoo_runner --load pt2: every case against eager within the
# model's tolerance) and times it beside PyTorch's own runner on the same .pt2 and inputs,
# both with OMP_NUM_THREADS threads; prints the table of docs/aoti-zoo.md ("The CPU zoo").
# tools/aoti/cpu_zoo.sh --fixtures [WORK] — exports the small fixture variants instead and
# writes them to testdata/cpu_zoo/ and testdata/cpu_zoo.json (cpu_zoo_fixtures.py).
#
# Environment: ZOO_PYTHON (a Python with torch, torchvision and transformers: make one with
# tools/aoti/torch_venv.sh VENV; default python3), ZOO_JOBS (exports at once, default 2),
# OMP_NUM_THREADS (default: the machine's cores), ZOO_ITERATIONS / ZOO_WARMUP (timed calls
# and warm-up calls, default 20 / 5). Ends with "N passed, N failed".
set -uo pipefail
fixtures=0
if [[ "${1:-}" == "--fixtures" ]]; then
  fixtures=1
  shift
fi
work="${1:-${TMPDIR:-/tmp}/slimcuda-cpu-zoo}"
py="${ZOO_PYTHON:-python3}"
jobs="${ZOO_JOBS:-2}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
iterations="${ZOO_ITERATIONS:-20}"
warmup="${ZOO_WARMUP:-5}"
zoo=(audio_conv1d gru hf_bert hf_gpt2 hf_llama hf_t5_encoder hf_vit kv_decoder tv_resnet18)
fixture_zoo=(audio_conv1d gru cpu_bert cpu_gpt2 cpu_llama cpu_t5_encoder cpu_vit cpu_conv_options cpu_kv_decoder
  cpu_mixtral cpu_embedding_bag_recsys cpu_spatial_transformer)
if [[ $fixtures == 1 ]]; then
  # Fixtures run on every x86-64 CI machine: at most AVX2 (an AVX-512 export dies with SIGILL
  # elsewhere; tools/check_fixture_isa.sh), also when made on an AVX-512 machine: Inductor's
  # vector code capped at AVX2, and gcc's -march=native replaced (portable_cxx.sh). A fresh
  # Inductor cache, so no kernel compiled earlier with other flags is reused. Vector code
  # calls SLEEF, which libslimcuda links. TORCHINDUCTOR_VEC_ISA_OK=1: PyTorch 2.11's check of
  # the vector ISA links its test program without libtorch in the libtorch-free recipe, so it
  # fails on the program's own Sleef_expf8_u10 and Inductor writes scalar code; with a warm
  # Inductor cache (a check compiled once with libtorch) the same export is vectorized and
  # calls SLEEF. The fixtures take the vectorized form, which needs more of slimcuda.
  export TORCHINDUCTOR_VEC_ISA_OK="${TORCHINDUCTOR_VEC_ISA_OK:-1}"
  export ATEN_CPU_CAPABILITY="${ATEN_CPU_CAPABILITY:-avx2}"
  export CXX="${CXX:-$PWD/tools/aoti/portable_cxx.sh}"
  export TORCHINDUCTOR_CACHE_DIR="$work/inductor-cache"
  rm -rf "$TORCHINDUCTOR_CACHE_DIR"
  "$py" tools/aoti/export_models.py "$work" --device cpu --jobs "$jobs" --only "${fixture_zoo[@]}" || exit 1
  "$py" tools/aoti/cpu_zoo_fixtures.py "$work" testdata
  exit $?
fi
"$py" tools/aoti/export_models.py "$work" --device cpu --jobs "$jobs" --only "${zoo[@]}"
bazel build //tools/aoti:zoo_runner >/dev/null || exit 1
passed=0
failed=0
: >"$work/slimcuda.jsonl"
for m in "${zoo[@]}"; do
  if bazel-bin/tools/aoti/zoo_runner "$work/$m" --load pt2 --iterations "$iterations" --warmup "$warmup" \
    >"$work/$m/slimcuda.json"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "cpu_zoo: $m failed: $(tail -1 "$work/$m/slimcuda.json")" >&2
  fi
  cat "$work/$m/slimcuda.json" >>"$work/slimcuda.jsonl"
done
"$py" tools/aoti/export_models.py "$work" --device cpu --time-runner "$iterations" --warmup "$warmup" \
  --only "${zoo[@]}" >/dev/null
"$py" - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
runner = json.load(open(os.path.join(work, "torch_runner.json")))
print(f"| model | match | µs slimcuda | µs PyTorch's runner | × | threads |")
print("|---|---|---|---|---|---|")
for line in open(os.path.join(work, "slimcuda.jsonl")):
    s = json.loads(line)
    r = runner.get(s["model"], {})
    us, ref = s.get("slimcuda_us_median"), r.get("torch_runner_us_median")
    ratio = f"{us / ref:.1f}" if us and ref else "—"
    print(f"| {s['model']} | {'yes' if s.get('pass') else 'NO'} | {us or 0:,.0f} | {ref or 0:,.0f} | {ratio} | "
          f"{os.environ['OMP_NUM_THREADS']} |")
PY
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
