// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace slimcuda {

/// Whether slimcuda's memory caches (the device pools and the pinned pool) are on in this
/// process: SLIMCUDA_CACHING_ALLOCATOR (csrc/config; on by default), a setting read once, at
/// its first use: memory a pool handed out must go back to it. Every pool asks here, so
/// they agree.
[[nodiscard]] bool caching_enabled() noexcept;

}  // namespace slimcuda
