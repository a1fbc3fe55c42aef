#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/consumer/check.sh — install slimcuda into temporary prefixes (plain, and with the
# shim prefix slimcuda_) and build and run C and C++ programs against them with nothing but
# pkg-config or dlopen, as an outside user would.
# tools/consumer/check.sh --release — the release archive (tools/release.sh) unpacked in an
# empty directory, used there as a user who has only the archive would: the CLI runs the demo
# it ships and checks it, and a C program (pkg-config), a CMake project and a Go module, each
# copied out of this repository, build and run against it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

release_check() {
  local archive u
  archive=$(bash tools/release.sh --out "$dir/dist")
  mkdir "$dir/user"
  cp tools/consumer/consumer.c tools/consumer/consumer.cc tools/consumer/model_consumer.cc tools/consumer/hpp_consumer.cc "$dir/user/"
  cp -r tools/consumer/cmake "$dir/user/cmake"
  mkdir "$dir/user/goapp"
  cp tools/consumer/goapp/main.go "$dir/user/goapp/main.go"
  sed -i 's|\.\./consumer\.cc|consumer.cc|' "$dir/user/cmake/CMakeLists.txt"
  cp "$dir/user/consumer.cc" "$dir/user/cmake/"
  # From here on nothing of the repository is used: only the archive and the copies (the
  # caller exits after this function, so the directory change is its last).
  cd "$dir/user"
  tar xzf "$archive"
  u="$PWD/$(basename "$archive" .tar.gz)"
  # The installed CLI: its own demo, checked against its own reference; no Bazel wording.
  "$u/bin/slimcuda" run | tee run.out
  grep -qE '^  reference: all [0-9]+ values match demo_model.json' run.out
  if "$u/bin/slimcuda" help run | grep -qi bazel; then
    echo "consumer: the installed CLI's help speaks of Bazel" >&2
    exit 1
  fi
  "$u/bin/slimcuda" info "$u/share/slimcuda/demo.slimcuda"
  # C and C++ through pkg-config; the .pc file finds its prefix from where it lies.
  export PKG_CONFIG_PATH="$u/lib/pkgconfig" CGO_LDFLAGS="-L$u/lib"
  read -ra pc <<<"$(pkg-config --cflags --libs slimcuda)"
  cc -std=c11 -Wall -Werror consumer.c -o consumer_c "${pc[@]}"
  ./consumer_c
  c++ -std=c++17 -Wall -Werror model_consumer.cc -o model_consumer "${pc[@]}"
  ./model_consumer "$u/share/slimcuda/demo.slimcuda"
  cmake -S cmake -B cmake-build -DCMAKE_PREFIX_PATH="$u" >/dev/null
  cmake --build cmake-build >/dev/null
  ./cmake-build/cmake_consumer
  # A Go module of its own, pointed at the archive's Go package; nothing is downloaded.
  printf 'module example.com/user\n\ngo 1.21\n\nrequire github.com/slimcuda/slimcuda v0.0.0\n\nreplace github.com/slimcuda/slimcuda => %s\n' \
    "$u/share/slimcuda/src" >goapp/go.mod
  (cd goapp && GOFLAGS=-mod=mod GOPROXY=off GOWORK=off go build -o ../goapp.bin .)
  ./goapp.bin "$u/share/slimcuda/demo.slimcuda" "$u/share/slimcuda/demo_model.json"
  echo "consumer: the release archive $(basename "$archive"), unpacked alone: CLI, C, C++, CMake and Go passed"
}

if [[ "${1:-}" == "--release" ]]; then
  release_check
  exit 0
fi
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
# PTX-only kernels (--config=ptx_jit): the same configuration as CI's prefixed test step, so
# this install reuses its build; nothing here runs a kernel.
bash tools/install.sh --prefix "$dir/prefixed" --shim-prefix slimcuda_ -- --config=ptx_jit
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
