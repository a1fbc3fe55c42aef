#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/lint.sh — the linters CI runs (each reports its findings; the script fails if any does):
#   gofmt -l, go vet and staticcheck (pinned in tools/setup.sh) over the Go module and
#   tools/consumer/goapp, against a library installed by tools/install.sh (plain go build needs
#   it through pkg-config); shellcheck over tools/**/*.sh and .ci/run; clang-format (.clang-format)
#   over our C, C++ and CUDA sources; the dependency order of csrc/'s components
#   (tools/check_layers.sh); function length (tools/check_function_length.py); the SPDX
#   header on every source file (CONTRIBUTING.md); every relative Markdown link resolves
#   (tools/check_doc_links.py).
#   buildifier runs in tools/check_module.sh.
# Fix formatting with: gofmt -w go tools; clang-format -i $(git ls-files '*.c' '*.cc' '*.h' '*.cu').
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
fail=()
say() { printf 'lint: %s\n' "$*"; }
run() { # name, command...
  local name="$1"
  shift
  if "$@"; then say "$name: clean"; else say "$name: FINDINGS (above)"; fail+=("$name"); fi
}
bin="$(go env GOPATH)/bin"

gofiles=$(git ls-files '*.go')
# shellcheck disable=SC2086 # one file name per word
gofmt_check() { local out; out=$(gofmt -l $gofiles); [[ -z "$out" ]] || { echo "$out"; return 1; }; }
run "gofmt" gofmt_check

# go vet and staticcheck compile the cgo packages: install the library where pkg-config finds it.
# shellcheck source=tools/cgo_prefix.sh
source tools/cgo_prefix.sh
if ! cgo_prefix lint; then
  say "tools/install.sh failed: cannot vet the cgo packages"
  exit 1
fi
go_lint() { # in DIR: go vet ./... && staticcheck ./...
  (cd "$1" && GOFLAGS=-mod=mod go vet ./... && GOFLAGS=-mod=mod "$bin/staticcheck" ./...)
}
run "go vet + staticcheck (module)" go_lint .
run "go vet + staticcheck (tools/consumer/goapp)" go_lint tools/consumer/goapp
# Without cgo the package cannot work: its build must fail with go/slimcuda/nocgo.go's one
# error, which names the fix, and not with whatever cgo-only name a pure-Go file used first.
nocgo_check() {
  local out
  if out=$(CGO_ENABLED=0 GOFLAGS=-mod=mod go build ./go/slimcuda 2>&1); then
    echo "CGO_ENABLED=0 go build ./go/slimcuda succeeded"
    return 1
  fi
  [[ $(grep -c ': ' <<<"$out") == 1 && "$out" == *"undefined: slimcuda_requires_cgo__"* ]] || { echo "$out"; return 1; }
}
run "CGO_ENABLED=0 build error" nocgo_check

mapfile -t shfiles < <(git ls-files 'tools/*.sh' 'tools/**/*.sh' '.ci/run')
run "shellcheck (${#shfiles[@]} scripts)" shellcheck -x "${shfiles[@]}"

# csrc/'s components depend only downward (tools/layers.txt); the checker first proves it fails.
layers_check() { bash tools/check_layers.sh --self-test && bash tools/check_layers.sh; }
run "layers (tools/layers.txt)" layers_check
# No library function over 80 lines without a `// long: <reason>` beside it.
run "function length" python3 tools/check_function_length.py

mapfile -t cfiles < <(git ls-files '*.c' '*.cc' '*.h' '*.hpp' '*.cu' '*.cuh')
run "clang-format (${#cfiles[@]} files)" clang-format --dry-run --Werror "${cfiles[@]}"

# Every source file of ours carries the SPDX header (CONTRIBUTING.md).
spdx_check() {
  local missing
  missing=$(git ls-files '*.go' '*.c' '*.cc' '*.h' '*.hpp' '*.cu' '*.cuh' '*.fbs' '*.lds' '*.sh' '*.py' '*.bzl' '*BUILD.bazel' \
    '*.BUILD' '*CMakeLists.txt' '*.cmake.in' MODULE.bazel WORKSPACE .ci/run | xargs grep -L 'SPDX-License-Identifier: Apache-2.0')
  [[ -z "$missing" ]] || { echo "no SPDX header: $missing"; return 1; }
}
run "SPDX headers" spdx_check
doc_links_check() { python3 tools/check_doc_links.py --self-test && python3 tools/check_doc_links.py; }
run "Markdown links" doc_links_check

((${#fail[@]} == 0)) || { say "failed: ${fail[*]}"; exit 1; }
say "all clean"
