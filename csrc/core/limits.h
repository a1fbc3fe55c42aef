// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace slimcuda {

/// The most dimensions a tensor may have (PyTorch's CUDA limit).
inline constexpr int64_t kMaxDims = 25;

/// Device indices are int8 (DeviceIndex): at most this many GPUs, 0..kMaxDevices-1.
inline constexpr int kMaxDevices = 128;

}  // namespace slimcuda
