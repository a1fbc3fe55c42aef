// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// Checks a device index from an untrusted caller (the C ABI, a shim, a package): -1 (the
/// current device) or 0..kMaxDevices-1, else InvalidArgument naming `function`. Whether
/// the device exists is the CUDA layer's question (cuda::resolve_device).
[[nodiscard]] Error check_device_index(int64_t index) noexcept;

/// check_device_index, then the index as a DeviceIndex.
[[nodiscard]] Error to_device_index(int64_t index, DeviceIndex* out) noexcept;

}  // namespace slimcuda
