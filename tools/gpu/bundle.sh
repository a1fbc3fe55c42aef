#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/gpu/bundle.sh [DIR] — build every test and benchmark binary and copy it, with what
# it needs at run time, into DIR (default gpu-bundle/, git-ignored) for the GPU machine,
# which has no Bazel and no Go. There: `bash DIR/run.sh` (see tools/gpu/run.sh).
#
# DIR/bin/      test binaries (C++ gtest and Go test, named <package>__<target>)
# DIR/bench/    benchmark binaries (their Go benchmarks live in the Go test binaries)
# DIR/lib/      libslimcuda.so.<major>, libcudart.so.<major>, libzip.so.4 and libsleef.so.3 (Debian's, which
#               libslimcuda.so needs), and libslimcuda_testing.so (the Go tests' stream-spinning
#               kernel)
# DIR/testdata/ the shared fixtures
# DIR/slimcuda  the CLI (LD_LIBRARY_PATH=DIR/lib DIR/slimcuda info)
# DIR/demo.slimcuda  the demo model package (demo_sync.slimcuda: its variant CUDA graphs cannot capture)
# DIR/models/   the loader's test models (models/testing: packages and one library)
# DIR/zoo_runner, DIR/pack  for tools/aoti/run_zoo.sh (real AOTInductor exports)
# DIR/export_weights_example.py  the CUDA export with weights in the archive (run.sh runs it)
# DIR/decoder.py  the decode-step export with a KV cache (run.sh runs it); DIR/decode the
#               Go decode loop (examples/decode)
# DIR/ptx/      the C++ test binaries, libslimcuda.so and the demo model of the PTX-only build
#               (--config=ptx_jit: no SASS), for run.sh --ptx and --ptx-jit; built last, since
#               it overwrites bazel-bin. SLIMCUDA_BUNDLE_PTX=0 leaves it out.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:-gpu-bundle}"

tests=$(bazel query 'kind("(cc|go)_test", //...)' 2>/dev/null | sort)
benches=$(bazel query 'attr(name, "_benchmark$", kind("cc_binary", //...))' 2>/dev/null | sort)
echo "bundle: building $(echo "$tests" | wc -l) tests and $(echo "$benches" | wc -l) benchmarks"
# shellcheck disable=SC2086
bazel build $tests $benches //csrc:libslimcuda.so //csrc/testing:libslimcuda_testing.so //go/cmd/slimcuda //models/demo:demo_package //models/demo:demo_sync_package //models/demo:libdemo_cpu.so //models/demo:demo_pt2 //models/testing:all \
  //tools/aoti:zoo_runner //csrc/package:pack //examples/decode >/dev/null

rm -rf "$out"
mkdir -p "$out/bin" "$out/bench" "$out/lib" "$out/testdata"
bin_of() { # label -> path of its executable under bazel-bin
  local pkg="${1#//}" name
  name="${pkg#*:}"
  pkg="${pkg%%:*}"
  if [[ -x "bazel-bin/$pkg/$name" ]]; then
    echo "bazel-bin/$pkg/$name"
  else # rules_go puts go_test binaries in <name>_/<name>
    echo "bazel-bin/$pkg/${name}_/$name"
  fi
}
for t in $tests; do
  pkg="${t#//}"
  cp -L "$(bin_of "$t")" "$out/bin/$(echo "${pkg%%:*}" | tr / _)__${t#*:}"
done
for b in $benches; do
  cp -L "$(bin_of "$b")" "$out/bench/"
done
cp -L bazel-bin/csrc/libslimcuda.so.0 bazel-bin/csrc/testing/libslimcuda_testing.so "$out/lib/"
ln -sf libslimcuda.so.0 "$out/lib/libslimcuda.so" # for programs that link -lslimcuda
cp -L "$(bin_of //go/cmd/slimcuda:slimcuda)" "$out/slimcuda"
cp -L bazel-bin/tools/aoti/zoo_runner bazel-bin/csrc/package/pack "$out/"
cp tools/aoti/export_weights_example.py "$out/" # run.sh makes the CUDA weights export with it
cp tools/aoti/decoder.py tools/aoti/export_models.py "$out/" # and the decoder's (export_models: --runner)
cp -L "$(bin_of //examples/decode:decode)" "$out/decode"
cp -L bazel-slimcuda/external/local_cuda/lib/libcudart.so.* "$out/lib/" 2>/dev/null ||
  cp -L "$(bazel info output_base 2>/dev/null)"/external/local_cuda/lib/libcudart.so.[0-9]* "$out/lib/"
# libzip (the .pt2 reader) is Debian's shared library; the GPU machine may lack it.
cp -L "$(ldd bazel-bin/csrc/libslimcuda.so.0 | awk '$1 == "libzip.so.4" {print $3}')" "$out/lib/"
cp -L "$(ldd bazel-bin/csrc/libslimcuda.so.0 | awk '$1 == "libsleef.so.3" {print $3}')" "$out/lib/" # likewise SLEEF
# Every fixture folder (the Go and C++ suites read them through testdata/*.json).
find testdata -mindepth 1 -maxdepth 1 ! -name BUILD.bazel -exec cp -r {} "$out/testdata/" \;
cp -L bazel-bin/models/demo/demo.slimcuda bazel-bin/models/demo/demo_sync.slimcuda "$out/"
mkdir -p "$out/models"
cp -L bazel-bin/models/testing/*.slimcuda bazel-bin/models/testing/libconstant_1.so \
  bazel-bin/models/demo/libdemo_cpu.so bazel-bin/models/demo/demo_cpu.pt2 bazel-bin/models/demo/demo_cuda.pt2 \
  "$out/models/"
cp tools/gpu/run.sh "$out/run.sh"
cp tools/gpu/skips.py "$out/skips.py" # run.sh: the skips by reason, and the allow-list
cp tools/gpu/perf.sh "$out/perf.sh"
cp tools/gpu/filters.txt "$out/"

if [[ "${SLIMCUDA_BUNDLE_PTX:-1}" == 1 ]]; then
  ctests=$(bazel query 'kind("cc_test", //...)' 2>/dev/null | sort)
  # shellcheck disable=SC2086
  bazel build --config=ptx_jit $ctests //csrc:libslimcuda.so //models/demo:demo_package //models/demo:demo_sync_package \
    //models/demo:demo_pt2 >/dev/null
  mkdir -p "$out/ptx/bin" "$out/ptx/lib"
  for t in $ctests; do
    pkg="${t#//}"
    cp -L "$(bin_of "$t")" "$out/ptx/bin/$(echo "${pkg%%:*}" | tr / _)__${t#*:}"
  done
  cp -L bazel-bin/csrc/libslimcuda.so.0 "$out/ptx/lib/"
  cp -L bazel-bin/models/demo/demo.slimcuda bazel-bin/models/demo/demo_sync.slimcuda bazel-bin/models/demo/demo_cuda.pt2 "$out/ptx/"
  # What run.sh --ptx proves rests on this: the library holds no SASS, only compute_80 PTX.
  cuobjdump="${SLIMCUDA_CUDA_PREFIX:-/opt/slimcuda/cuda-13.0}/bin/cuobjdump"
  if [[ -x "$cuobjdump" ]]; then
    # (captured first: grep -q would close the pipe early, and pipefail counts that)
    elf=$("$cuobjdump" --list-elf "$out/ptx/lib/libslimcuda.so.0" 2>&1)
    ptx=$("$cuobjdump" --list-ptx "$out/ptx/lib/libslimcuda.so.0" 2>&1)
    if grep -q '\.cubin$' <<<"$elf" || ! grep -q 'sm_80\.ptx$' <<<"$ptx"; then
      echo "bundle: the PTX-only libslimcuda.so holds SASS or lacks compute_80 PTX"
      exit 1
    fi
  fi
fi
chmod -R u+w "$out"
echo "bundle: $out: $(find "$out/bin" -maxdepth 1 -type f | wc -l) test binaries ($(find "$out/ptx/bin" -maxdepth 1 -type f 2>/dev/null | wc -l) PTX-only), $(find "$out/bench" -maxdepth 1 -type f | wc -l) benchmarks, $(du -sh "$out" | cut -f1)"
