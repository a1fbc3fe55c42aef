// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/caching_config.h"

#include "csrc/config/config.h"

namespace slimcuda {

bool caching_enabled() noexcept { return config::get_bool(config::Key::CachingAllocator); }

}  // namespace slimcuda
