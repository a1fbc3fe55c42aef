// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace slimcuda {

/// Where memory lives. Values are ABI-stable (c10's numbering).
enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
};

/// A device ordinal; -1 means "the calling thread's current device".
using DeviceIndex = int8_t;
inline constexpr DeviceIndex kCurrentDevice = -1;

/// A device: type plus index (CPU tensors use -1 or 0).
struct Device {
  DeviceType type = DeviceType::CPU;
  DeviceIndex index = -1;

  [[nodiscard]] bool is_cuda() const noexcept { return type == DeviceType::CUDA; }
  friend bool operator==(const Device& a, const Device& b) noexcept {
    return a.type == b.type && (a.type == DeviceType::CPU || a.index == b.index);
  }
  friend bool operator!=(const Device& a, const Device& b) noexcept { return !(a == b); }
};

/// Element types, with c10's codes (the aoti_torch_dtype_* values).
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
};

}  // namespace slimcuda
