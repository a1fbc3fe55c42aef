// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/caching_config.h"

#include <cstdlib>
#include <cstring>

namespace slimcuda {

bool caching_enabled() noexcept {
  static const bool enabled = [] {
    const char* v = std::getenv("SLIMCUDA_CACHING_ALLOCATOR");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

}  // namespace slimcuda
