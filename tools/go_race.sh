#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/go_race.sh — the Go package's concurrency tests (many goroutines on one model, streams,
# caller-stream scopes, concurrent loads) under Go's race detector, with `go test -race` against
# the library tools/install.sh installs (rules_go's race mode does not build its standard
# library with the host Go SDK here). Run by .ci/run; on a GPU machine the GPU cases run too.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/cgo_prefix.sh
source tools/cgo_prefix.sh
cgo_prefix race
bazel build //models/demo:demo_package >/dev/null 2>&1
demo="$(bazel info bazel-bin 2>/dev/null)/models/demo/demo.slimcuda"
if ! out=$(LD_LIBRARY_PATH="$prefix/lib" SLIMCUDA_DEMO_PACKAGE="$demo" GOFLAGS=-mod=mod \
  go test -race -count=1 -v -run 'Concurrent|Stream|Goroutine' ./go/slimcuda 2>&1); then
  # The failing tests whole (their assertion messages), then the summary.
  echo "$out" | grep -vE '^\s*--- (PASS|SKIP)|^=== (RUN|PAUSE|CONT)' | tail -80
  echo "go_race: go test -race failed"
  exit 1
fi
echo "$out" | grep -E '^(--- |ok|FAIL|PASS)'
