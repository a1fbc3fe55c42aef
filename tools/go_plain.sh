#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/go_plain.sh — README's promise for plain `go test ./...` outside Bazel (in full in
# docs/go.md, "Building"): in a copy of the tracked files (no bazel-bin/, so none of the
# packages Bazel builds), with no SLIMCUDA_* variable set and the library that
# tools/install.sh installs, every test passes or skips saying why. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/cgo_prefix.sh
source tools/cgo_prefix.sh
cgo_prefix plain
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$copy"
while read -r v; do unset "$v"; done < <(compgen -e | grep '^SLIMCUDA_' || true)
cd "$copy"
if ! out=$(GOFLAGS=-mod=mod go test -count=1 -v ./... 2>&1); then
  echo "$out" | grep -E -A3 -- '^\s*--- FAIL|^(FAIL|panic)' | tail -60
  echo "go_plain: plain go test ./... failed in a checkout without Bazel's outputs"
  exit 1
fi
echo "$out" | grep -E '^(ok|\?|FAIL)'
echo "go_plain: $(grep -cE -- '^\s*--- PASS' <<<"$out") passed, $(grep -cE -- '^\s*--- SKIP' <<<"$out") skipped" \
  "($(grep -c ' is built by Bazel: ' <<<"$out") for a package only Bazel builds), 0 failed"
