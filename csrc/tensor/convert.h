// SPDX-License-Identifier: Apache-2.0
#pragma once

// Element conversions between slimcuda's dtypes, in plain integer code compiled for both
// the host (copy_host.cc) and the GPU (copy_kernels.cu): CPU and GPU copies agree bit for
// bit. Floating to integer truncates (NaN -> 0, out of range saturates), to bool means != 0,
// half and bfloat16 round to nearest even.
#include <cstdint>
#include <cstring>

#include "slimcuda/types.h"

#if defined(__CUDACC__)
#define SLIMCUDA_HD __host__ __device__
#else
#define SLIMCUDA_HD
#endif

namespace slimcuda::convert {

// A loaded element, in the two forms conversions need.
struct Wide {
  double f;
  int64_t i;
  bool floating;
};

SLIMCUDA_HD inline int64_t float_to_int64(double f) {
  if (!(f == f)) return 0;  // NaN
  if (f >= 9.2233720368547758e18) return INT64_MAX;
  if (f <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(f);
}

template <typename T>
SLIMCUDA_HD inline T read_as(const char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
SLIMCUDA_HD inline void write_as(char* p, T v) {
  memcpy(p, &v, sizeof(T));
}

// IEEE half and bfloat16 conversions, round to nearest even, in plain integer code: the
// host and the device run exactly the same code, so CPU and GPU copies agree bit for bit.
SLIMCUDA_HD inline uint32_t float_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

SLIMCUDA_HD inline float bits_float(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

SLIMCUDA_HD inline uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65536 or inf
  const int exp = static_cast<int>(abs >> 23) - 112;                     // half's biased exponent
  uint32_t mant = abs & 0x7fffffu;
  if (exp <= 0) {  // a half subnormal (or zero)
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t m = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t m = mant >> 13;
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1u))) ++m;
  const uint32_t h = (static_cast<uint32_t>(exp) << 10) + m;  // a mantissa carry bumps the exponent
  return static_cast<uint16_t>(sign | (h >= 0x7c00u ? 0x7c00u : h));
}

SLIMCUDA_HD inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  exp = 113;  // subnormal: normalize
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --exp;
  }
  return bits_float(sign | (exp << 23) | ((mant & 0x3ffu) << 13));
}

SLIMCUDA_HD inline uint16_t float_to_bfloat16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

SLIMCUDA_HD inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

SLIMCUDA_HD inline Wide load(const char* p, int dtype) {
  Wide w{0.0, 0, false};
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Byte:
      w.i = read_as<uint8_t>(p);
      break;
    case ScalarType::Char:
      w.i = read_as<int8_t>(p);
      break;
    case ScalarType::Short:
      w.i = read_as<int16_t>(p);
      break;
    case ScalarType::Int:
      w.i = read_as<int32_t>(p);
      break;
    case ScalarType::Long:
      w.i = read_as<int64_t>(p);
      break;
    case ScalarType::Bool:
      w.i = read_as<uint8_t>(p) != 0;
      break;
    case ScalarType::Half:
      w.f = half_to_float(read_as<uint16_t>(p));
      w.floating = true;
      break;
    case ScalarType::BFloat16:
      w.f = bfloat16_to_float(read_as<uint16_t>(p));
      w.floating = true;
      break;
    case ScalarType::Float:
      w.f = read_as<float>(p);
      w.floating = true;
      break;
    case ScalarType::Double:
      w.f = read_as<double>(p);
      w.floating = true;
      break;
  }
  if (w.floating) {
    w.i = float_to_int64(w.f);
  } else {
    w.f = static_cast<double>(w.i);
  }
  return w;
}

SLIMCUDA_HD inline void store(char* p, int dtype, const Wide& w) {
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Byte:
      write_as<uint8_t>(p, static_cast<uint8_t>(w.i));
      break;
    case ScalarType::Char:
      write_as<int8_t>(p, static_cast<int8_t>(w.i));
      break;
    case ScalarType::Short:
      write_as<int16_t>(p, static_cast<int16_t>(w.i));
      break;
    case ScalarType::Int:
      write_as<int32_t>(p, static_cast<int32_t>(w.i));
      break;
    case ScalarType::Long:
      write_as<int64_t>(p, w.i);
      break;
    case ScalarType::Bool:
      write_as<uint8_t>(p, w.floating ? (w.f != 0.0) : (w.i != 0));
      break;
    case ScalarType::Half:
      write_as<uint16_t>(p, float_to_half(static_cast<float>(w.f)));
      break;
    case ScalarType::BFloat16:
      write_as<uint16_t>(p, float_to_bfloat16(static_cast<float>(w.f)));
      break;
    case ScalarType::Float:
      write_as<float>(p, static_cast<float>(w.f));
      break;
    case ScalarType::Double:
      write_as<double>(p, w.f);
      break;
  }
}

// Copies one element; same dtype copies the bytes (exact for every type, NaN payloads too).
SLIMCUDA_HD inline void copy_element(char* d, int dst_t, const char* s, int src_t, int es) {
  if (dst_t == src_t) {
    switch (es) {
      case 1:
        write_as<uint8_t>(d, read_as<uint8_t>(s));
        break;
      case 2:
        write_as<uint16_t>(d, read_as<uint16_t>(s));
        break;
      case 4:
        write_as<uint32_t>(d, read_as<uint32_t>(s));
        break;
      default:
        write_as<uint64_t>(d, read_as<uint64_t>(s));
        break;
    }
  } else {
    store(d, dst_t, load(s, src_t));
  }
}

}  // namespace slimcuda::convert
