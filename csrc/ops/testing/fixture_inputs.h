// SPDX-License-Identifier: Apache-2.0
#pragma once

// The operands of the PyTorch-made op fixtures (testdata/ops.json, vision_ops.json,
// scatter_ops.json), regenerated here as tools/ops/make_*_fixtures.py write them,
// so the JSON carries only seeds: element j of operand t of a case with seed `seed` is
// splitmix64's hash of (seed, t, j) mapped onto the seventeen values -1, -7/8, ..., 1 (exact
// in every floating dtype).

#include <cstdint>

namespace slimcuda::testing {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Element j of generated operand t of the case with this seed.
inline double fixture_input_value(int64_t seed, int64_t t, int64_t j) {
  const uint64_t r = splitmix64(static_cast<uint64_t>(seed) * 1000003ull + static_cast<uint64_t>(t) * 7919ull +
                                static_cast<uint64_t>(j));
  return (static_cast<double>(r % 17) - 8.0) / 8.0;
}

}  // namespace slimcuda::testing
