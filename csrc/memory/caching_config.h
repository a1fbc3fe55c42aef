// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace slimcuda {

/// Whether slimcuda's memory caches (the device pools and the pinned pool) are on in this
/// process: yes unless SLIMCUDA_CACHING_ALLOCATOR=0 was set when the library loaded. Read
/// once; every pool asks here, so they agree.
[[nodiscard]] bool caching_enabled() noexcept;

}  // namespace slimcuda
