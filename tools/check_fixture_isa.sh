#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every model library committed under testdata/ (inside a .pt2) runs on any x86-64 machine
# with AVX2: PyTorch compiles CPU exports with -march=native, so a fixture exported on an
# AVX-512 machine holds zmm instructions and dies with SIGILL on every CPU without them
# (it did, on an AMD EPYC, 2026-12-03). Export fixtures on a machine without AVX-512.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
checked=0
while IFS= read -r -d '' f; do
  python3 - "$f" "$tmp" <<'PY' || true
import sys, zipfile
try:
    z = zipfile.ZipFile(sys.argv[1])
except Exception:
    sys.exit(0)  # a malformed fixture on purpose
for i, n in enumerate(x for x in z.namelist() if x.endswith(".so")):
    try:
        open(f"{sys.argv[2]}/{i}.so", "wb").write(z.read(n))
    except Exception:
        pass
PY
  for so in "$tmp"/*.so; do
    [[ -e "$so" ]] || continue
    checked=$((checked + 1))
    # grep reads everything (no -q): an early exit would SIGPIPE objdump and fail the pipe
    if objdump -d "$so" 2>/dev/null | grep '%zmm' >/dev/null; then
      echo "check_fixture_isa: $f holds AVX-512 (zmm) instructions"
      bad=1
    fi
    rm -f "$so"
  done
done < <(find testdata -name '*.pt2' -print0)
echo "check_fixture_isa: $checked libraries checked"
exit "$bad"
