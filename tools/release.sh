#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/release.sh [--out DIR] — the release archive: DIR/slimcuda-<version>-linux-x86_64.tar.gz
# (default DIR: dist/), for users who build nothing. It holds one folder of that name laid out
# as tools/install.sh installs (bin/slimcuda, include/slimcuda/, lib/ with libslimcuda and the
# CUDA runtime it was built with, lib/pkgconfig, lib/cmake/slimcuda, share/slimcuda: the demo
# model, its reference and the Go package's sources), LICENSE and README beside them. Every
# file finds the others relatively, so it works wherever it is unpacked:
#   tar xzf slimcuda-<version>-linux-x86_64.tar.gz
#   slimcuda-<version>-linux-x86_64/bin/slimcuda run        # the demo, checked
# tools/consumer/check.sh --release checks exactly that, and C, CMake and Go programs against it.
set -euo pipefail
usage() { echo "usage: tools/release.sh [--out DIR]"; }
out=dist
while (($#)); do
  case "$1" in
    --out) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "release: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version=$(tr -d ' \n' <VERSION)
name="slimcuda-$version-linux-x86_64"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bash tools/install.sh --prefix "$stage/$name" >&2
install -m 0644 LICENSE "$stage/$name/LICENSE"
cat >"$stage/$name/README" <<README
slimcuda $version: run PyTorch AOTInductor models (.pt2) on CUDA without libtorch.

  bin/slimcuda run [MODEL]      run a model (default: the demo in share/slimcuda), checked
  bin/slimcuda info [MODEL]     the machine, and a model's device, inputs and outputs
  bin/slimcuda help COMMAND     each command's flags

C and C++:  cc app.c \$(PKG_CONFIG_PATH=\$PWD/lib/pkgconfig pkg-config --cflags --libs slimcuda)
CMake:      cmake -DCMAKE_PREFIX_PATH=\$PWD ...; find_package(slimcuda CONFIG REQUIRED);
            target_link_libraries(app PRIVATE slimcuda::slimcuda)
Go:         in your go.mod, require github.com/slimcuda/slimcuda v0.0.0 and
            replace github.com/slimcuda/slimcuda => \$PWD/share/slimcuda/src;
            build with PKG_CONFIG_PATH=\$PWD/lib/pkgconfig (cgo)
Headers: include/slimcuda/ (slimcuda.h is the C ABI). Linux x86-64, glibc; a GPU needs an
NVIDIA driver for CUDA 13. License: LICENSE (Apache-2.0).
README
# Reproducible: sorted names, fixed owner and times, no time in the gzip header.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00' -C "$stage" -cf - "$name" |
  gzip -n >"$out/$name.tar.gz"
echo "$out/$name.tar.gz"
