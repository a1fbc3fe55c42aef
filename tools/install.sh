#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/install.sh --prefix DIR [--shim-prefix P] [-- BAZEL_FLAGS...] — build libslimcuda.so and
# the slimcuda CLI with Bazel and install them for programs outside this repository.
# --shim-prefix P exports the shims as P##aoti_torch_* and no plain aoti_torch_* (to share a
# process with libtorch). Flags after -- go to `bazel build` (e.g. --config=ptx_jit: kernels as
# compute_80 PTX only, a quicker build that every supported GPU JITs at first use):
#   DIR/bin/slimcuda                        the CLI (finds the library through RUNPATH $ORIGIN/../lib)
#   DIR/include/slimcuda/*.h, *.hpp         public headers (C ABI slimcuda.h, its C++ slimcuda.hpp, version.h,
#                                           caller_stream.h, ...)
#   DIR/lib/libslimcuda.so.<major>          the library (SONAME; finds libcudart beside it: RUNPATH $ORIGIN)
#   DIR/lib/libslimcuda.so                  -> libslimcuda.so.<major>, for linkers (-lslimcuda)
#   DIR/lib/libcudart.so.<major>            the CUDA runtime it was built against
#   DIR/lib/libsleef.so.3                   SLEEF, the vector math CPU exports call (Debian's)
#   DIR/lib/pkgconfig/slimcuda.pc           for `pkg-config --cflags --libs slimcuda` and cgo
#   DIR/lib/cmake/slimcuda/slimcudaConfig.cmake, slimcudaConfigVersion.cmake
#                                           find_package(slimcuda CONFIG REQUIRED) -> slimcuda::slimcuda
#   DIR/share/slimcuda/demo.slimcuda, demo_model.json
#                                           the demo model and its exact outputs: `slimcuda run`
#                                           with no model finds them beside bin/
#   DIR/share/slimcuda/src/                 the Go package's sources (module github.com/slimcuda/slimcuda,
#                                           standard library only): `replace` to it from a go.mod
#   DIR/share/doc/slimcuda/LICENSE
# Every file refers to the others relatively (RUNPATH $ORIGIN, pkg-config's ${pcfiledir}, the
# CMake file's own folder), so the tree may be moved or unpacked anywhere (tools/release.sh).
# Then: g++ app.cc $(PKG_CONFIG_PATH=DIR/lib/pkgconfig pkg-config --cflags --libs slimcuda),
# or in CMake: cmake -DCMAKE_PREFIX_PATH=DIR ... with target_link_libraries(app slimcuda::slimcuda).
# The version is the repository's VERSION file.
set -euo pipefail
usage() {
  echo "usage: tools/install.sh --prefix DIR [--shim-prefix PREFIX] [-- BAZEL_FLAGS...]"
  echo
  echo "Builds libslimcuda.so and the slimcuda CLI with Bazel and installs them, the headers, a"
  echo "pkg-config file and a CMake package under DIR. --shim-prefix exports every shim as"
  echo "PREFIX##aoti_torch_* (to share a process with libtorch). Flags after -- go to bazel build"
  echo "(e.g. --config=ptx_jit: every kernel as compute_80 PTX only, a quicker build)."
}
bazel_flags=()
prefix=""
shim_prefix=""
while (($#)); do
  case "$1" in
    --prefix) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --shim-prefix) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; shim_prefix="$2"; shift 2 ;;
    --shim-prefix=*) shim_prefix="${1#--shim-prefix=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; bazel_flags=("$@"); break ;;
    *) echo "install: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -n "$prefix" ]] || { usage >&2; exit 2; }
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version=$(tr -d ' \n' <VERSION)
major=${version%%.*}
lib="libslimcuda.so.$major"

echo "install: building //csrc:$lib and //go/cmd/slimcuda (shim prefix '${shim_prefix}')"
# Bazel's own messages stay visible: a failed build says why.
if ! bazel build --ui_event_filters=-info --noshow_progress "--//csrc/shims:prefix=$shim_prefix" ${bazel_flags[@]+"${bazel_flags[@]}"} \
  "//csrc:$lib" //csrc:public_headers //go/cmd/slimcuda //models/demo:demo_package; then
  echo "install: the Bazel build failed (its errors are above)" >&2
  exit 1
fi
mkdir -p "$prefix/bin" "$prefix/include/slimcuda" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/slimcuda" \
  "$prefix/share/slimcuda/src" "$prefix/share/doc/slimcuda"
for label in $(bazel query 'labels(srcs, //csrc:public_headers)' 2>/dev/null); do
  h="${label#//}"
  h="${h/://}"
  [[ -f "$h" ]] || h="bazel-bin/$h" # generated (shim_prefix.h, version.h)
  install -m 0644 "$h" "$prefix/include/slimcuda/"
done
install -m 0755 "bazel-bin/csrc/$lib" "$prefix/lib/$lib"
chmod u+w "$prefix/lib/$lib"
ln -sf "$lib" "$prefix/lib/libslimcuda.so"
cudart=$(readelf -d "bazel-bin/csrc/$lib" | sed -n 's/.*NEEDED.*\[\(libcudart[^]]*\)\].*/\1/p')
install -m 0755 "$(bazel info output_base 2>/dev/null)/external/local_cuda/lib/$cudart" "$prefix/lib/$cudart"
# SLEEF (the vector math CPU exports call) is Debian's shared library: beside libslimcuda
# too, so the tree runs where libsleef3 is not installed.
sleef=$(ldd "bazel-bin/csrc/$lib" | awk '$1 == "libsleef.so.3" {print $3}')
[[ -n "$sleef" ]] || { echo "install: libslimcuda.so does not link libsleef.so.3" >&2; exit 1; }
install -m 0644 "$sleef" "$prefix/lib/libsleef.so.3"
# The CLI: Bazel's binary carries RUNPATHs into its runfiles tree; the installed one finds the
# library in ../lib only (and a GPU machine's driver through the system's search path).
install -m 0755 bazel-bin/go/cmd/slimcuda/slimcuda_/slimcuda "$prefix/bin/slimcuda"
# Bazel links with RUNPATHs into its own output tree (_solib_k8/...); the installed files
# search only the install (patchelf is a Debian package tools/setup.sh installs).
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
patchelf --set-rpath '$ORIGIN' "$prefix/lib/$lib"
# shellcheck disable=SC2016
patchelf --set-rpath '$ORIGIN/../lib' "$prefix/bin/slimcuda"
# shellcheck disable=SC2016 # ${pcfiledir} is pkg-config's: the folder of this .pc file
cat >"$prefix/lib/pkgconfig/slimcuda.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: slimcuda
Description: Run AOTInductor-compiled PyTorch models on CUDA without libtorch, on the caller's stream
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lslimcuda
PC
sed "s/@SLIMCUDA_LIB@/$lib/" tools/cmake/slimcudaConfig.cmake.in >"$prefix/lib/cmake/slimcuda/slimcudaConfig.cmake"
sed "s/@SLIMCUDA_VERSION@/$version/" tools/cmake/slimcudaConfigVersion.cmake.in \
  >"$prefix/lib/cmake/slimcuda/slimcudaConfigVersion.cmake"
# The demo and its reference (the CLI looks in ../share/slimcuda beside its bin/).
install -m 0644 bazel-bin/models/demo/demo.slimcuda testdata/demo_model.json "$prefix/share/slimcuda/"
install -m 0644 LICENSE "$prefix/share/doc/slimcuda/"
# The Go package for plain `go build` (cgo finds the library through pkg-config): its
# sources without tests, and a go.mod without the test-only requirements, so a program's
# `replace github.com/slimcuda/slimcuda => DIR/share/slimcuda/src` needs nothing downloaded.
for pkg in go/slimcuda go/npy; do
  [[ -d "$pkg" ]] || continue
  mkdir -p "$prefix/share/slimcuda/src/$pkg"
  find "$pkg" -maxdepth 1 -type f \( -name '*.go' -o -name '*.h' \) ! -name '*_test.go' \
    -exec install -m 0644 {} "$prefix/share/slimcuda/src/$pkg/" \;
done
printf 'module github.com/slimcuda/slimcuda\n\ngo %s\n' "$(sed -n 's/^go //p' go.mod)" >"$prefix/share/slimcuda/src/go.mod"
echo "install: slimcuda $version in $prefix (headers: $(find "$prefix/include/slimcuda" -name '*.h*' -printf '%f ')" \
  "libs: $lib $cudart; bin/slimcuda; lib/cmake/slimcuda; share/slimcuda: the demo, the Go package)"
