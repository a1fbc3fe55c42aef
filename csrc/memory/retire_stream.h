// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "csrc/memory/caching_config.h"

namespace slimcuda::memory {

// Every memory pool at once: the per-GPU device pools (device_memory) and the pinned host
// pool (pinned). What concerns all of them goes through here, so no pool includes another.

/// Before `stream` is destroyed: waits for it where a pool holds blocks of it, then no
/// cached block, device or pinned, refers to it any more (a later stream at the same
/// address must not inherit its blocks' ordering).
void retire_stream(void* stream) noexcept;

}  // namespace slimcuda::memory
