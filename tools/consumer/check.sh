#!/usr/bin/env bash
# tools/consumer/check.sh — install slimcuda into a temporary prefix and build and run a C
# and a C++ program against it with nothing but pkg-config, as an outside user would.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bash tools/install.sh --prefix "$dir/prefix"
export PKG_CONFIG_PATH="$dir/prefix/lib/pkgconfig"
cc -std=c11 -Wall -Werror tools/consumer/consumer.c -o "$dir/consumer_c" $(pkg-config --cflags --libs slimcuda)
c++ -std=c++17 -Wall -Werror tools/consumer/consumer.cc -o "$dir/consumer_cc" $(pkg-config --cflags --libs slimcuda)
"$dir/consumer_c"
"$dir/consumer_cc"
# The installed library exports the C ABI and the kernels' host stubs, nothing unprefixed.
nm -D --defined-only "$dir/prefix/lib/libslimcuda.so" | awk '{print $3}' >"$dir/exports"
grep -q '^slimcuda_copy_host_to_device$' "$dir/exports"
grep -q '^slimcuda_caller_stream_push$' "$dir/exports"
grep -q '_ZN8slimcuda7kernels15fill_f32_kernel' "$dir/exports"
if grep -vE '^(slimcuda_|aoti_torch_|_ZN[KRO]*8slimcuda|_ZT[VIS]N8slimcuda)' "$dir/exports"; then
  echo "consumer: libslimcuda.so exports symbols outside its ABI (above)" >&2
  exit 1
fi
echo "consumer: C and C++ programs built against the installed library passed; $(wc -l <"$dir/exports") exported symbols"
