#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check_module.sh — static checks of the Bazel files that the offline build cannot
# exercise (modern Bazel is not obtainable here):
#   1. buildifier (from the Go module proxy) lints MODULE.bazel, WORKSPACE, BUILD and .bzl files;
#   2. rules_go and gazelle versions in MODULE.bazel exist as Go modules;
#   3. go.mod and WORKSPACE pin the same testify version, and go.sum the same hash;
#   4. .bazelversion names a release, WORKSPACE.bzlmod is empty;
#   5. VERSION (semver), MODULE.bazel's version and the library's SONAME major agree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILDTOOLS=github.com/bazelbuild/buildtools@v0.0.0-20260904073137-eaa4d125b423
fail=0
say() { printf 'check_module: %s\n' "$*"; }

bin="$(go env GOPATH)/bin"
if [[ ! -x "$bin/buildifier" ]] || ! grep -qs "$BUILDTOOLS" "$bin/.buildifier-version"; then
  say "installing buildifier ($BUILDTOOLS)"
  GOFLAGS='' go install "${BUILDTOOLS%@*}/buildifier@${BUILDTOOLS#*@}"
  echo "$BUILDTOOLS" >"$bin/.buildifier-version"
fi
files=$(git ls-files 'MODULE.bazel' 'WORKSPACE' '*BUILD.bazel' '*.bzl' 'third_party/*.BUILD' 'third_party/**/*.BUILD')
# Every warning on, native-cc-info and native-cc-common included: our .bzl files load CcInfo
# and cc_common from @rules_cc (Bazel 9 has no built-in ones; tools/bazel/rules_cc.bzl gives
# the offline Bazel 4.2.3 the same loads).
# shellcheck disable=SC2086
if "$bin/buildifier" -mode=check -lint=warn $files; then
  say "buildifier: $(echo "$files" | wc -l) files formatted and lint-clean"
else
  say "buildifier found problems (fix with: buildifier -lint=fix <file>)"
  fail=1
fi

for mod in rules_go:github.com/bazelbuild/rules_go gazelle:github.com/bazelbuild/bazel-gazelle; do
  name=${mod%%:*} path=${mod#*:}
  version=$(sed -n "s/^bazel_dep(name = \"$name\", version = \"\([^\"]*\)\".*/\1/p" MODULE.bazel)
  if [[ -z "$version" ]]; then
    say "MODULE.bazel declares no $name"
    fail=1
  elif GOFLAGS='' go mod download -json "$path@v$version" >/dev/null 2>&1; then
    newest=$(GOFLAGS='' go list -m -versions "$path" 2>/dev/null | tr ' ' '\n' | tail -n 1)
    say "MODULE.bazel $name $version exists ($path@v$version; newest on the proxy: ${newest:-unknown})"
  else
    say "MODULE.bazel $name $version: $path@v$version does not exist"
    fail=1
  fi
done

gomod=$(sed -n 's/^require github.com\/stretchr\/testify \(v[^ ]*\).*/\1/p; s/^\tgithub.com\/stretchr\/testify \(v[^ ]*\).*/\1/p' go.mod)
ws=$(awk '/name = "com_github_stretchr_testify"/{f=1} f && /version = /{gsub(/[",]/,"",$3); print $3; exit}' WORKSPACE)
wsum=$(awk '/name = "com_github_stretchr_testify"/{f=1} f && /sum = /{gsub(/[",]/,"",$3); print $3; exit}' WORKSPACE)
gosum=$(awk -v v="$gomod" '$1=="github.com/stretchr/testify" && $2==v {print $3}' go.sum)
if [[ -n "$gomod" && "$gomod" == "$ws" && "$wsum" == "$gosum" ]]; then
  say "testify $gomod: go.mod, go.sum and WORKSPACE agree"
else
  say "testify mismatch: go.mod '$gomod', WORKSPACE '$ws' (sum '$wsum', go.sum '$gosum')"
  fail=1
fi
# Modern Bazel: .bazelversion names a release; WORKSPACE.bzlmod exists and is empty.
if [[ $(head -n 1 .bazelversion 2>/dev/null) =~ ^[0-9]+\.[0-9]+\.[0-9]+$ && -f WORKSPACE.bzlmod && ! -s WORKSPACE.bzlmod ]]; then
  say ".bazelversion $(head -n 1 .bazelversion); WORKSPACE.bzlmod empty"
else
  say ".bazelversion must name a Bazel release and WORKSPACE.bzlmod must exist, empty"
  fail=1
fi

# One version: VERSION; MODULE.bazel's module version and the SONAME major in csrc/BUILD.bazel
# (which a BUILD file cannot read from VERSION) must say the same.
version=$(tr -d ' \n' <VERSION)
module_version=$(sed -n 's/^    version = "\([^"]*\)".*/\1/p' MODULE.bazel | head -n 1)
soname=$(sed -n 's/.*"-Wl,-soname,\(libslimcuda\.so\.[0-9]*\)".*/\1/p' csrc/BUILD.bazel)
if [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ && "$module_version" == "$version" &&
  "$soname" == "libslimcuda.so.${version%%.*}" ]] && grep -q "name = \"$soname\"" csrc/BUILD.bazel; then
  say "version $version: VERSION, MODULE.bazel and the SONAME $soname agree"
else
  say "version mismatch: VERSION '$version', MODULE.bazel '$module_version', SONAME '$soname' (want libslimcuda.so.${version%%.*})"
  fail=1
fi
exit $fail
