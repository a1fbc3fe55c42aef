#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/fuzz/fuzz_many.sh DIR FUZZER CORPUS RUNS JOBS [libFuzzer flags...] — a long libFuzzer
# run over many cores: JOBS processes of DIR/FUZZER (built by SLIMCUDA_FUZZ_BUILD=DIR
# tools/fuzz/fuzz.sh), each from the seed corpus DIR/CORPUS with its own seed, output corpus
# and artifact folder, each for RUNS/JOBS executions. Prints each job's executions and the
# total; a crash, leak or limit hit in any job fails the run (its log's tail is printed and
# its input kept in DIR/out/FUZZER.N/).
set -uo pipefail
[[ $# -ge 5 ]] || { sed -n 3,8p "$0" >&2; exit 2; }
dir="$1" fuzzer="$2" corpus="$3" runs="$4" jobs="$5"
shift 5
out="$dir/out"
mkdir -p "$out"
per=$(((runs + jobs - 1) / jobs))
pids=()
for ((k = 0; k < jobs; ++k)); do
  j="$out/$fuzzer.$k"
  mkdir -p "$j/corpus"
  "$dir/$fuzzer" -runs="$per" -seed=$((k + 1)) -print_final_stats=1 -artifact_prefix="$j/" "$@" \
    "$j/corpus" "$dir/$corpus" >"$j/log" 2>&1 &
  pids+=($!)
done
total=0 failed=0
for ((k = 0; k < jobs; ++k)); do
  j="$out/$fuzzer.$k"
  if ! wait "${pids[$k]}"; then
    failed=$((failed + 1))
    echo "fuzz_many: $fuzzer job $k failed:"
    tail -30 "$j/log"
  fi
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$j/log" | tail -1)
  echo "fuzz_many: $fuzzer job $k: ${n:-?} executions"
  total=$((total + ${n:-0}))
done
echo "fuzz_many: $fuzzer: $total executions in $jobs jobs, $failed failed"
((failed == 0))
