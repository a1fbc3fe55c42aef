// SPDX-License-Identifier: Apache-2.0
#pragma once

// Element access for the CPU reference ops: float32, float16 and bfloat16 read as double
// and written back with one rounding (float16/bfloat16 round to nearest even, as c10).

#include <cstdint>
#include <cstring>
#include <vector>

#include "csrc/tensor/convert.h"
#include "slimcuda/types.h"

namespace slimcuda::ops {

inline double load_element(const char* base, ScalarType t, int64_t index) noexcept {
  switch (t) {
    case ScalarType::Float: {
      float f;
      std::memcpy(&f, base + index * 4, 4);
      return f;
    }
    case ScalarType::Half: {
      uint16_t h;
      std::memcpy(&h, base + index * 2, 2);
      return convert::half_to_float(h);
    }
    case ScalarType::BFloat16: {
      uint16_t h;
      std::memcpy(&h, base + index * 2, 2);
      return convert::bfloat16_to_float(h);
    }
    default:
      return 0.0;  // check_gemm/check_convolution admit only the three above
  }
}

inline void store_element(char* base, ScalarType t, int64_t index, double v) noexcept {
  const float f = static_cast<float>(v);
  switch (t) {
    case ScalarType::Float:
      std::memcpy(base + index * 4, &f, 4);
      break;
    case ScalarType::Half: {
      const uint16_t h = convert::float_to_half(f);
      std::memcpy(base + index * 2, &h, 2);
      break;
    }
    case ScalarType::BFloat16: {
      const uint16_t h = convert::float_to_bfloat16(f);
      std::memcpy(base + index * 2, &h, 2);
      break;
    }
    default:
      break;
  }
}

/// Rounds v as an element of type t would store it (float32 accumulation of a half op
/// keeps float precision; this gives the value after the final store).
inline double round_to(ScalarType t, double v) noexcept {
  char buf[4];
  store_element(buf, t, 0, v);
  return load_element(buf, t, 0);
}

/// rows x cols elements of t at `base` (element offset `at`, element strides rs and cs) as a
/// contiguous row-major float matrix in `into` (float32 rows with a unit stride copied whole):
/// how the CPU ops hand a strided operand of any dtype to BLAS.
inline void gather_floats(const char* base, ScalarType t, int64_t at, int64_t rows, int64_t cols, int64_t rs,
                          int64_t cs, std::vector<float>& into) {
  into.resize(static_cast<size_t>(rows * cols));
  if (t == ScalarType::Float) {
    const float* f = reinterpret_cast<const float*>(base) + at;
    for (int64_t i = 0; i < rows; ++i) {
      float* row = into.data() + i * cols;
      if (cs == 1) {
        std::memcpy(row, f + i * rs, static_cast<size_t>(cols) * sizeof(float));
      } else {
        for (int64_t j = 0; j < cols; ++j) row[j] = f[i * rs + j * cs];
      }
    }
    return;
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      into[i * cols + j] = static_cast<float>(load_element(base, t, at + i * rs + j * cs));
    }
  }
}

}  // namespace slimcuda::ops
