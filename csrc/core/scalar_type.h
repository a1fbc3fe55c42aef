// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "slimcuda/types.h"

namespace slimcuda {

/// Bytes per element of `type`; 0 for values that are not a ScalarType we support.
[[nodiscard]] constexpr size_t element_size(ScalarType type) noexcept {
  switch (type) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool:
      return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return 2;
    case ScalarType::Int:
    case ScalarType::Float:
      return 4;
    case ScalarType::Long:
    case ScalarType::Double:
      return 8;
  }
  return 0;
}

/// Whether `code` (an int32 from the C ABI) names a supported ScalarType.
[[nodiscard]] constexpr bool is_supported_scalar_type(int32_t code) noexcept {
  return code >= 0 && code <= 127 && element_size(static_cast<ScalarType>(code)) != 0;
}

/// float32, float64, float16 or bfloat16.
[[nodiscard]] constexpr bool is_floating(ScalarType t) noexcept {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}

/// "float32", "int64", ...; "unknown" otherwise.
[[nodiscard]] const char* scalar_type_name(ScalarType type) noexcept;

}  // namespace slimcuda
