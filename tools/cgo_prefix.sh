# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# tools/cgo_prefix.sh — sourced by tools/lint.sh, tools/go_race.sh and tools/go_plain.sh, which
# build the cgo package outside Bazel: `cgo_prefix NAME` installs the library (tools/install.sh)
# into ${TMPDIR:-/tmp}/slimcuda-NAME/prefix, sets $prefix, and exports PKG_CONFIG_PATH (cgo finds
# slimcuda.pc) and CGO_LDFLAGS (naming the prefix, so the go command's cache never keeps another
# prefix's flags). Returns the install's status.
cgo_prefix() {
  prefix="${TMPDIR:-/tmp}/slimcuda-$1/prefix"
  bash tools/install.sh --prefix "$prefix" >/dev/null || return
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" CGO_LDFLAGS="-L$prefix/lib"
}
