#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check_layers.sh [--self-test] — csrc/'s components depend only downward, in the order
# of tools/layers.txt: every #include of another component and every //csrc/<component> label
# in a BUILD file (tools/check_layers.py says exactly what counts, and its one exemption: test
# code may use csrc/testing/). Findings name file and line; the script fails on any.
# --self-test: the checker must fail on a tiny tree with upward and same-level dependencies
# (an include, a public slimcuda/ header, a BUILD label) and pass on the same tree without them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ "${1:-}" != "--self-test" ]]; then
  exec python3 tools/check_layers.py "$@"
fi

checker="$PWD/tools/check_layers.py"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/csrc/{low,peer,high,testing} "$tree/tools"
printf 'low peer\nhigh\ntesting\n' >"$tree/tools/layers.txt"
printf '#include "csrc/low/low.h"\n' >"$tree/csrc/high/high.h"
printf 'slimcuda_headers(\n    name = "high",\n    hdrs = ["pub.h"],\n)\n' >"$tree/csrc/high/BUILD.bazel"
: >"$tree/csrc/high/pub.h"
: >"$tree/csrc/low/low.h"
: >"$tree/csrc/peer/peer.h"
: >"$tree/csrc/testing/fixtures.h"
# Test code may use csrc/testing/, and visibility is no dependency.
printf '#include "csrc/testing/fixtures.h"\n' >"$tree/csrc/low/low_test.cc"
cat >"$tree/csrc/low/BUILD.bazel" <<'EOF'
cc_library(
    name = "low",
    hdrs = ["low.h"],
    visibility = ["//csrc/high:__pkg__"],
)

cc_test(
    name = "low_test",
    srcs = ["low_test.cc"],
    deps = [":low", "//csrc/testing"],
)
EOF
if ! out=$(python3 "$checker" --root "$tree" 2>&1); then
  printf '%s\ncheck_layers --self-test: the clean tree failed\n' "$out"
  exit 1
fi

printf '#include "csrc/testing/fixtures.h"\n' >>"$tree/csrc/low/low.h"
printf '#include <cstdint>\n#include "csrc/peer/peer.h"\n#include "slimcuda/pub.h"\n' >>"$tree/csrc/low/low.h"
sed -i 's|deps = \[":low", |deps = [":low", "//csrc/high", |' "$tree/csrc/low/BUILD.bazel"
printf 'cc_library(\n    name = "more",\n    deps = ["//csrc/high"],\n)\n' >>"$tree/csrc/low/BUILD.bazel"
if out=$(python3 "$checker" --root "$tree" 2>&1); then
  printf '%s\ncheck_layers --self-test: upward dependencies passed\n' "$out"
  exit 1
fi
want=(
  "csrc/low/low.h:1: low depends on csrc/testing/fixtures.h, and testing is above low"
  "csrc/low/low.h:3: low depends on csrc/peer/peer.h, and peer is the same level as low"
  "csrc/low/low.h:4: low depends on slimcuda/pub.h (csrc/high/), and high is above low"
  "csrc/low/BUILD.bazel:10: low depends on //csrc/high, and high is above low"
  "csrc/low/BUILD.bazel:14: low depends on //csrc/high, and high is above low"
)
for line in "${want[@]}"; do
  grep -qF "$line" <<<"$out" || {
    printf '%s\ncheck_layers --self-test: expected a finding: %s\n' "$out" "$line"
    exit 1
  }
done
if [[ $(grep -c ': low depends on ' <<<"$out") -ne ${#want[@]} ]]; then
  printf '%s\ncheck_layers --self-test: expected exactly %d findings\n' "$out" "${#want[@]}"
  exit 1
fi
echo "check_layers --self-test: the checker passes a clean tree and names each of ${#want[@]} upward dependencies"
