// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/retire_stream.h"

#include "csrc/memory/device_memory.h"
#include "csrc/memory/pinned_pool.h"

namespace slimcuda::memory {

void retire_stream(void* stream) noexcept {
  if (stream == nullptr) return;  // the legacy default stream is never destroyed
  device_memory::retire_stream(stream);
  pinned_retire_stream(stream);
}

}  // namespace slimcuda::memory
