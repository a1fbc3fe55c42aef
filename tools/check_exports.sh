#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check_exports.sh [LIB] — what libslimcuda.so exports (nm -D --defined-only) is exactly
# tools/exports.txt: the C ABI, the shims and the caller-stream C++ API. An internal symbol
# appearing, or a public one vanishing, fails; update the list on purpose when the ABI
# changes (add, never edit: a changed signature is a new _v2 name).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lib="${1:-bazel-bin/csrc/libslimcuda.so.0}"
[[ -f "$lib" ]] || bazel build //csrc:libslimcuda.so.0 >/dev/null 2>&1 || { echo "check_exports: cannot build $lib" >&2; exit 1; }
# Lower-case b/d/r/t are LOCAL symbols: the linker keeps hidden thread_locals of inline
# functions (the cuDNN frontend's) in .dynsym for their TLS relocations; no other object can
# bind to them, so they are not exports.
got=$(nm -D --defined-only "$lib" | awk '$2 !~ /^[bdrt]$/ {print $3}' | sort)
want=$(sort tools/exports.txt)
if [[ "$got" != "$want" ]]; then
  echo "check_exports: $lib exports differ from tools/exports.txt:"
  diff <(echo "$want") <(echo "$got") | sed -n 's/^>/  exported, not listed:/p; s/^</  listed, not exported:/p'
  exit 1
fi
echo "check_exports: $(echo "$got" | wc -l) symbols, exactly tools/exports.txt ($(grep -c '^_Z' <<<"$got") C++: the caller-stream API)"
