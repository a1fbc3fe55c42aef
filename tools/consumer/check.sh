#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/consumer/check.sh — install slimcuda into temporary prefixes (plain, and with the
# shim prefix slimcuda_) and build and run C and C++ programs against them with nothing but
# pkg-config or dlopen, as an outside user would.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The go command caches the flags pkg-config gave without noticing when they change; CGO_LDFLAGS
# is part of its cache key, so naming the prefix there keeps stale flags out.
installed="${TMPDIR:-/tmp}/slimcuda-consumer"
rm -rf "$installed"
bash tools/install.sh --prefix "$installed/prefix"
export PKG_CONFIG_PATH="$installed/prefix/lib/pkgconfig" CGO_LDFLAGS="-L$installed/prefix/lib"
read -ra pc <<<"$(pkg-config --cflags --libs slimcuda)"
cc -std=c11 -Wall -Werror tools/consumer/consumer.c -o "$dir/consumer_c" "${pc[@]}"
c++ -std=c++17 -Wall -Werror tools/consumer/consumer.cc -o "$dir/consumer_cc" "${pc[@]}"
"$dir/consumer_c"
"$dir/consumer_cc"
# CMake: find_package(slimcuda CONFIG REQUIRED) + target_link_libraries(app slimcuda::slimcuda).
cmake -S tools/consumer/cmake -B "$dir/cmake" -DCMAKE_PREFIX_PATH="$installed/prefix" >/dev/null
cmake --build "$dir/cmake" >/dev/null
"$dir/cmake/cmake_consumer"
# Installed files carry no Bazel-internal search paths, and the installed CLI runs.
lib=$(basename "$(readlink -f "$installed/prefix/lib/libslimcuda.so")")
[[ $(readelf -d "$installed/prefix/lib/$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p') == "$lib" ]] ||
  { echo "consumer: $lib's SONAME is not $lib" >&2; exit 1; }
for f in "$installed/prefix/lib/$lib" "$installed/prefix/bin/slimcuda"; do
  # shellcheck disable=SC2016 # a literal $ORIGIN
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qvE '\[\$ORIGIN(/\.\./lib)?\]$'; then
    echo "consumer: $f has a Bazel-internal RUNPATH: $(readelf -d "$f" | grep -E 'R(UN)?PATH')" >&2
    exit 1
  fi
done
"$installed/prefix/bin/slimcuda" --version
# The demo model from C++ and from a Go program outside this module (plain go build).
bazel build //models/demo:demo_package 2>/dev/null
demo="$PWD/bazel-bin/models/demo/demo.slimcuda"
c++ -std=c++17 -Wall -Werror tools/consumer/model_consumer.cc -o "$dir/model_consumer" "${pc[@]}"
"$dir/model_consumer" "$demo" | tee "$dir/model_consumer.out"
want=$(python3 -c "import json;c=[c for c in json.load(open('testdata/demo_model.json'))['cases'] if c['name']=='run_cpu_batch_4'][0];print('%.8f'%sum(c['expect_output']))")
grep -q "output sum $want" "$dir/model_consumer.out" || { echo "consumer: model_consumer sum differs from $want" >&2; exit 1; }
# The same through slimcuda.hpp, built with pkg-config and with CMake.
c++ -std=c++17 -Wall -Wextra -Werror tools/consumer/hpp_consumer.cc -o "$dir/hpp_consumer" "${pc[@]}"
for exe in "$dir/hpp_consumer" "$dir/cmake/cmake_hpp_consumer"; do
  "$exe" "$demo" | tee "$dir/hpp_consumer.out"
  grep -q "output sum $want" "$dir/hpp_consumer.out" || { echo "consumer: $exe sum differs from $want" >&2; exit 1; }
done
(cd tools/consumer/goapp && GOFLAGS=-mod=mod go build -o "$dir/goapp" .)
"$dir/goapp" "$demo" testdata/demo_model.json
# A program that knows only PyTorch's shim signatures, against the plain and the prefixed
# install (dlopen: no slimcuda header, no link-time dependency).
cc -std=c11 -Wall -Werror tools/consumer/shim_consumer.c -o "$dir/shim_consumer" -ldl
"$dir/shim_consumer" "$installed/prefix/lib/libslimcuda.so"
bash tools/check_shims.sh "$installed/prefix/lib/libslimcuda.so"
bash tools/install.sh --prefix "$dir/prefixed" --shim-prefix slimcuda_
grep -q 'define SLIMCUDA_SHIM_PREFIX slimcuda_' "$dir/prefixed/include/slimcuda/shim_prefix.h"
"$dir/shim_consumer" "$dir/prefixed/lib/libslimcuda.so" slimcuda_
bash tools/check_shims.sh "$dir/prefixed/lib/libslimcuda.so" slimcuda_
if "$dir/shim_consumer" "$dir/prefixed/lib/libslimcuda.so" >/dev/null 2>&1; then
  echo "consumer: the prefixed library still answers to plain aoti_torch_* names" >&2
  exit 1
fi
bazel build //csrc:libslimcuda.so.0 2>/dev/null # leave the default build in bazel-bin
# The installed library exports exactly its ABI (tools/exports.txt), nothing internal.
bash tools/check_exports.sh "$installed/prefix/lib/$lib"
echo "consumer: C, C++ (slimcuda.h and slimcuda.hpp) and CMake programs built against the installed library passed"
