#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check_shims.sh LIB [PREFIX] — the shims LIB exports are exactly those declared in
# csrc/shims/aoti_torch.h, named PREFIX##aoti_torch_*: none missing, none extra, and with
# a prefix no plain aoti_torch_* symbol at all.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lib="$1"
prefix="${2:-}"
declared=$(grep -ho 'SLIMCUDA_SHIM(aoti_torch_[A-Za-z0-9_]*)' csrc/shims/aoti_torch.h csrc/ops/aoti_torch_ops.h |
  sed "s/SLIMCUDA_SHIM(\(.*\))/${prefix}\1/" | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -E "^${prefix}aoti_torch_" | sort -u || true)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
plain=""
if [[ -n "$prefix" ]]; then
  plain=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -E '^aoti_torch_' || true)
fi
if [[ -n "$missing$extra$plain" ]]; then
  [[ -z "$missing" ]] || printf 'check_shims: declared but not exported:\n%s\n' "$missing"
  [[ -z "$extra" ]] || printf 'check_shims: exported but not declared:\n%s\n' "$extra"
  [[ -z "$plain" ]] || printf 'check_shims: unprefixed shims in a prefixed build:\n%s\n' "$plain"
  exit 1
fi
echo "check_shims: $(echo "$declared" | wc -l) shims exported as ${prefix}aoti_torch_*, exactly as declared"
