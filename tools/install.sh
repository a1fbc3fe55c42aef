#!/usr/bin/env bash
# tools/install.sh --prefix DIR [--shim-prefix P] — build libslimcuda.so with Bazel and
# install it for programs outside this repository. --shim-prefix P exports the shims as
# P##aoti_torch_* and no plain aoti_torch_* (to share a process with libtorch):
#   DIR/include/slimcuda/*.h          public headers (C ABI slimcuda.h, C++ caller_stream.h, ...)
#   DIR/lib/libslimcuda.so            the library (finds libcudart beside it: RUNPATH $ORIGIN)
#   DIR/lib/libcudart.so.<major>      the CUDA runtime it was built against
#   DIR/lib/pkgconfig/slimcuda.pc     for `pkg-config --cflags --libs slimcuda` and cgo
# Then: g++ app.cc $(PKG_CONFIG_PATH=DIR/lib/pkgconfig pkg-config --cflags --libs slimcuda)
set -euo pipefail
usage() { echo "usage: tools/install.sh --prefix DIR [--shim-prefix PREFIX]" >&2; exit 2; }
prefix=""
shim_prefix=""
while (($#)); do
  case "$1" in
    --prefix) [[ $# -ge 2 ]] || usage; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --shim-prefix) [[ $# -ge 2 ]] || usage; shim_prefix="$2"; shift 2 ;;
    --shim-prefix=*) shim_prefix="${1#--shim-prefix=}"; shift ;;
    -h | --help) usage ;;
    *) echo "install: unknown option $1" >&2; usage ;;
  esac
done
[[ -n "$prefix" ]] || usage
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "install: building //csrc:libslimcuda.so (shim prefix '${shim_prefix}')"
bazel build "--//csrc/shims:prefix=$shim_prefix" //csrc:libslimcuda.so //csrc:public_headers 2>/dev/null
mkdir -p "$prefix/include/slimcuda" "$prefix/lib/pkgconfig"
for label in $(bazel query 'labels(srcs, //csrc:public_headers)' 2>/dev/null); do
  h="${label#//}"
  h="${h/://}"
  [[ -f "$h" ]] || h="bazel-bin/$h" # generated (shim_prefix.h)
  install -m 0644 "$h" "$prefix/include/slimcuda/"
done
install -m 0755 bazel-bin/csrc/libslimcuda.so "$prefix/lib/libslimcuda.so"
cudart=$(readelf -d bazel-bin/csrc/libslimcuda.so | sed -n 's/.*NEEDED.*\[\(libcudart[^]]*\)\].*/\1/p')
install -m 0755 "$(bazel info output_base 2>/dev/null)/external/local_cuda/lib/$cudart" "$prefix/lib/$cudart"
version=$(sed -n 's/^ *version = "\([^"]*\)".*/\1/p' MODULE.bazel | head -n 1)
cat >"$prefix/lib/pkgconfig/slimcuda.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: slimcuda
Description: Run AOTInductor-compiled PyTorch models on CUDA without libtorch, on the caller's stream
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lslimcuda
PC
echo "install: $prefix (headers: $(ls "$prefix/include/slimcuda" | tr '\n' ' '); libs: libslimcuda.so $cudart)"
