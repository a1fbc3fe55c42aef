#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/fuzz/fuzz.sh [SECONDS] — fuzz the model readers for SECONDS each (default 20):
#   1. libFuzzer (clang 14, with ASan and UBSan) on ModelPackage::parse, on check_elf (the
#      ELF shape check run before a library reaches the dynamic loader), and on the .pt2
#      reader (csrc/archive/archive_fuzzer.cc: libzip's parse and our checks of the archive,
#      reads of every entry, the model folder, metadata and wrapper input checks), and on the
#      .pt2's constants metadata (csrc/model/archive_constants.h: wrapper declarations,
#      weights_config.json), and on the proxy executor's readers (csrc/proxy/
#      extern_nodes_fuzzer.cc: the extern-kernel node file, each node's binding to op
#      schemas, the generated source's call sites);
#   2. Go's native fuzzer on the CLI's .npy reader (FuzzRead in go/npy/npy_test.go):
#      Go code, which `go test -fuzz` instruments for coverage. It does not fuzz the C reader:
#      cgo code is not instrumented, so a Go fuzzer over it only replays random mutations
#      ("new interesting: 0"); libFuzzer (1.) covers that.
# Seeds: testdata/packages/*.slimcuda and testdata/pt2/*.pt2 (libFuzzer), the target's f.Add
# seeds (Go). SLIMCUDA_FUZZ_BUILD=DIR only builds the libFuzzer binaries and their seed
# corpora into DIR (for a long run on a machine with more cores: tools/fuzz/fuzz_many.sh).
# Crashes are
# kept in fuzz-out/ (git-ignored); Go keeps its failing inputs in go/npy/testdata/fuzz/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-20}"
out="$PWD/fuzz-out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- libFuzzer -----------------------------------------------------------------------------
mkdir -p "$work/gen/csrc/package" "$work/include/slimcuda" "$work/corpus"
flatc --cpp --scoped-enums -o "$work/gen/csrc/package" csrc/package/package.fbs
for h in csrc/core/*.h; do ln -s "$PWD/$h" "$work/include/slimcuda/$(basename "$h")"; done
# shellcheck disable=SC2054 # -fsanitize takes a comma-separated list
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. -I"$work/gen" -I"$work/include")
reader=(csrc/package/model_package.cc csrc/package/elf_check.cc csrc/package/library_hash.cc
  csrc/core/last_error.cc csrc/core/error.cc)
# The compiles and the runs below go side by side, as many at once as the machine has cores
# (CI has two): the same seconds of fuzzing each, in less wall time.
cores=$(nproc)
pids=()
bg() { # command...: in the background, at most $cores at once
  "$@" &
  pids+=($!)
  while (($(jobs -rp | wc -l) >= cores)); do wait -n || true; done
}
join() { # waits for every bg command; fails if one did
  local p rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  pids=()
  return "$rc"
}
bg clang++-14 "${flags[@]}" csrc/package/package_fuzzer.cc "${reader[@]}" -o "$work/package_fuzzer"
bg clang++-14 "${flags[@]}" csrc/package/elf_fuzzer.cc csrc/package/elf_check.cc csrc/core/last_error.cc \
  csrc/core/error.cc -o "$work/elf_fuzzer"
bg clang++-14 "${flags[@]}" csrc/archive/archive_fuzzer.cc csrc/archive/pt2_archive.cc csrc/archive/pt2_model.cc \
  csrc/archive/pt2_versions.cc \
  csrc/package/file_reader.cc csrc/package/elf_check.cc csrc/core/last_error.cc csrc/core/error.cc \
  -lzip -lz -o "$work/archive_fuzzer"
bg clang++-14 "${flags[@]}" csrc/model/archive_constants_fuzzer.cc csrc/model/archive_constants.cc csrc/core/last_error.cc \
  csrc/core/error.cc -o "$work/archive_constants_fuzzer"
cuda_include="${SLIMCUDA_CUDA_PREFIX:-/opt/slimcuda/cuda-13.0}/include" # the tensor headers' CUDA types
bg clang++-14 "${flags[@]}" -I"$cuda_include" csrc/proxy/extern_nodes_fuzzer.cc csrc/proxy/extern_nodes.cc \
  csrc/proxy/op_schema.cc csrc/proxy/binding.cc csrc/proxy/call_sites.cc csrc/core/last_error.cc csrc/core/error.cc \
  -o "$work/extern_nodes_fuzzer"
join || { echo "fuzz: a fuzzer did not compile"; exit 1; }
cp testdata/packages/*.slimcuda "$work/corpus/"
mkdir -p "$work/pt2_corpus"
cp testdata/pt2/*.pt2 testdata/pt2/hostile/*.pt2 "$work/pt2_corpus/"
# One export of each PyTorch version (and the refusals): their version records and container ABI.
for f in testdata/pt2_versions/*/*.pt2; do cp "$f" "$work/pt2_corpus/$(basename "$(dirname "$f")")_$(basename "$f")"; done
# ELF seeds: the test model libraries inside the packages (a valid and an unloadable one).
mkdir -p "$work/elf_corpus"
python3 - "$work/corpus" "$work/elf_corpus" <<'PY'
import pathlib, sys
src, dst = map(pathlib.Path, sys.argv[1:])
for p in src.glob("valid*.slimcuda"):
    data = p.read_bytes()
    at = data.find(b"\x7fELF")
    if at >= 4:
        n = int.from_bytes(data[at - 4:at], "little")
        (dst / (p.stem + ".so")).write_bytes(data[at:at + n])
PY
# Seeds for the .pt2's constants metadata: a wrapper declaration block (first byte 0) and a
# weights_config.json (first byte 1), written here.
mkdir -p "$work/constants_corpus"
printf '\0constants_info_[0].name = "w";\n constants_info_[0].data_size = 64;\n constants_info_[0].shape = {2, 3};\n constants_info_[0].stride = {3, 1};\n constants_info_[0].device_type = cached_torch_device_type_cpu;\n constants_info_[0].from_folded = false;\n' >"$work/constants_corpus/wrapper"
printf '\1{"l.w": ["weight_0", [2, 3], [3, 1], 0], "l.b": ["weight_1", [3], [1], 2]}' >"$work/constants_corpus/config"
# Seeds for the proxy readers: the node files and wrapper sources of the proxy test archives
# and of the real Mixtral export (first byte 0: a node file, 1: a wrapper source).
mkdir -p "$work/nodes_corpus"
python3 - "$work/nodes_corpus" testdata/pt2/proxy_*.pt2 testdata/cpu_zoo/cpu_mixtral/model.pt2 <<'PY'
import pathlib, sys, zipfile
dst = pathlib.Path(sys.argv[1])
for i, path in enumerate(sys.argv[2:]):
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(".wrapper.json") or (name.endswith(".json") and "/model/" in name and "metadata" not in name):
                kind = 0
            elif name.endswith(".wrapper.cpp") or name.endswith(".cpp"):
                kind = 1
            else:
                continue
            data = z.read(name)
            if kind == 1 and b"aoti_torch_proxy_executor_call_function" not in data:
                continue
            (dst / f"{i}_{pathlib.Path(name).name}").write_bytes(bytes([kind]) + data)
PY
if [[ -n "${SLIMCUDA_FUZZ_BUILD:-}" ]]; then
  mkdir -p "$SLIMCUDA_FUZZ_BUILD"
  cp "$work"/*_fuzzer "$SLIMCUDA_FUZZ_BUILD/"
  cp -r "$work/corpus" "$work/pt2_corpus" "$work/elf_corpus" "$work/constants_corpus" "$work/nodes_corpus" \
    "$SLIMCUDA_FUZZ_BUILD/"
  echo "fuzz: libFuzzer binaries and seed corpora in $SLIMCUDA_FUZZ_BUILD"
  exit 0
fi
libfuzz() { # name binary corpus [libFuzzer flags]: its report in $work/<name>.out
  {
    echo "fuzz: libFuzzer on $1 for ${seconds}s"
    "$2" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/" -rss_limit_mb=4096 \
      "${@:4}" "$3" 2>"$work/$1.log" || { tail -40 "$work/$1.log"; return 1; }
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs' "$work/$1.log" | sed "s/^/fuzz: $1 /"
  } >"$work/$1.out" 2>&1
}
fuzzers=(ModelPackage::parse check_elf Pt2Archive archive_constants extern_nodes)
bg libfuzz ModelPackage::parse "$work/package_fuzzer" "$work/corpus"
bg libfuzz check_elf "$work/elf_fuzzer" "$work/elf_corpus"
# A hostile archive must cost what it weighs (docs/hostile-archives.md): one allocation over
# 64 MB, or 1 GB resident (ASan's own overhead included), is a finding.
bg libfuzz Pt2Archive "$work/archive_fuzzer" "$work/pt2_corpus" -rss_limit_mb=1024 -malloc_limit_mb=64
bg libfuzz archive_constants "$work/archive_constants_fuzzer" "$work/constants_corpus"
bg libfuzz extern_nodes "$work/extern_nodes_fuzzer" "$work/nodes_corpus" -rss_limit_mb=1024 -malloc_limit_mb=64
found=0
join || found=1
for f in "${fuzzers[@]}"; do cat "$work/$f.out"; done
((found == 0)) || { echo "fuzz: a libFuzzer run failed (its log above)"; exit 1; }

# --- Go native fuzzing ------------------------------------------------------------------------
# The CLI's .npy reader (package npy, pure Go: no library to install) on untrusted files.
echo "fuzz: go test -fuzz FuzzRead (go/npy) for ${seconds}s"
# From the seeds alone: with the corpus an earlier run cached ($GOCACHE/fuzz) a short run may
# find nothing new, and the coverage check below would fail on any machine that fuzzed before.
go clean -fuzzcache
(cd go/npy && GOFLAGS=-mod=mod go test -run '^$' -fuzz '^FuzzRead$' -fuzztime "${seconds}s" \
  -parallel 2 . 2>&1 | tee "$work/gofuzz.log" | tail -3)
# On a failure, the fuzzer's own words (a crasher's path, or a worker that hung) above all.
grep -q '^ok' "$work/gofuzz.log" || { grep -vE '^fuzz: elapsed' "$work/gofuzz.log" | tail -30; exit 1; }
# Coverage guidance must work here: a run that finds nothing new learned nothing.
grep -Eq 'new interesting: [1-9]' "$work/gofuzz.log" || { echo "fuzz: Go fuzzer found no new coverage"; exit 1; }
