// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for what a `.pt2` says about external weights (archive_constants.h):
// the wrapper source's constants_info_ declarations (first byte even) and pickle_weights'
// weights_config.json (odd). Any bytes must give Ok or InvalidProgram, never a crash or a
// sanitizer report; what is accepted must hold the invariants the uploader relies on.
// Built and run by tools/fuzz/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "csrc/core/limits.h"
#include "csrc/model/archive_constants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data + 1);
  const size_t n = size - 1;
  auto dims_ok = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& stride) {
    if (shape.size() != stride.size() || static_cast<int64_t>(shape.size()) > slimcuda::kMaxDims) return false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0 || stride[d] < 0) return false;
    }
    return true;
  };
  if (data[0] % 2 == 0) {
    std::vector<slimcuda::WrapperConstant> w;
    const slimcuda::Error e = slimcuda::parse_wrapper_constants(text, n, &w);
    if (e != slimcuda::Error::Ok && e != slimcuda::Error::InvalidProgram) __builtin_trap();
    for (const auto& c : w) {
      if (c.name.empty() || c.offset < 0 || !dims_ok(c.shape, c.stride)) __builtin_trap();
    }
  } else {
    std::vector<slimcuda::PickledWeight> w;
    const slimcuda::Error e = slimcuda::parse_weights_config(text, n, &w);
    if (e != slimcuda::Error::Ok && e != slimcuda::Error::InvalidProgram) __builtin_trap();
    for (const auto& p : w) {
      if (p.file.empty() || p.file.find('/') != std::string::npos || p.offset < 0 || !dims_ok(p.shape, p.stride)) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
