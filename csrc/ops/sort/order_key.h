// SPDX-License-Identifier: Apache-2.0
#pragma once

// An element's place in ATen's sort order as an unsigned integer of the element's width,
// for the CPU sorts (std::stable_sort) and CUB's radix sorts alike, so both devices order
// every value the same way: integers by value, floating values by value with -0.0 equal to
// +0.0 and every NaN (either sign, any payload) above +inf, as ATen sorts NaN as the
// largest value. Descending order is the complement of the key (a stable ascending sort of
// it keeps ties in input order, as ATen's stable descending sort does).

#include <cstdint>

#include "csrc/tensor/convert.h"
#include "slimcuda/types.h"

namespace slimcuda::ops {

/// IEEE bits -> key: the sign bit set for positives, all bits flipped for negatives.
template <typename U>
SLIMCUDA_HD inline U float_order_key(U bits, U inf_bits) {
  const U sign = static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
  const U mag = static_cast<U>(bits & static_cast<U>(~sign));
  if (mag > inf_bits) return static_cast<U>(~U(0));  // NaN: above everything
  if (mag == 0) return sign;                         // -0.0 sorts with +0.0
  return (bits & sign) != 0 ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
}

/// The key of the element at p (dtype a ScalarType code), in the low element-size bytes.
SLIMCUDA_HD inline uint64_t order_key(const char* p, int dtype) {
  using convert::read_as;
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Bool:
      return read_as<uint8_t>(p) != 0 ? 1u : 0u;
    case ScalarType::Byte:
      return read_as<uint8_t>(p);
    case ScalarType::Char:
      return static_cast<uint8_t>(read_as<uint8_t>(p) ^ 0x80u);
    case ScalarType::Short:
      return static_cast<uint16_t>(read_as<uint16_t>(p) ^ 0x8000u);
    case ScalarType::Int:
      return read_as<uint32_t>(p) ^ 0x80000000u;
    case ScalarType::Long:
      return read_as<uint64_t>(p) ^ 0x8000000000000000ull;
    case ScalarType::Half:
      return float_order_key<uint16_t>(read_as<uint16_t>(p), 0x7c00u);
    case ScalarType::BFloat16:
      return float_order_key<uint16_t>(read_as<uint16_t>(p), 0x7f80u);
    case ScalarType::Float:
      return float_order_key<uint32_t>(read_as<uint32_t>(p), 0x7f800000u);
    case ScalarType::Double:
      return float_order_key<uint64_t>(read_as<uint64_t>(p), 0x7ff0000000000000ull);
  }
  return 0;
}

/// order_key, complemented (within `bytes` bytes) for a descending sort.
SLIMCUDA_HD inline uint64_t directed_key(const char* p, int dtype, int bytes, bool descending) {
  const uint64_t k = order_key(p, dtype);
  if (!descending) return k;
  const uint64_t mask = bytes >= 8 ? ~0ull : ((1ull << (8 * bytes)) - 1);
  return ~k & mask;
}

}  // namespace slimcuda::ops
