// SPDX-License-Identifier: Apache-2.0
#include "csrc/package/library_hash.h"

#include <cstring>

// Header-only use of xxHash: no library to link into libslimcuda.so.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace slimcuda {

static_assert(sizeof(XXH128_canonical_t) == kLibraryHashBytes);

LibraryHash library_hash(const uint8_t* data, size_t size) noexcept {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data, size));
  LibraryHash h;
  std::memcpy(h.bytes, canonical.digest, kLibraryHashBytes);
  return h;
}

std::string library_hash_hex(const LibraryHash& hash) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(2 * kLibraryHashBytes, '0');
  for (size_t i = 0; i < kLibraryHashBytes; ++i) {
    s[2 * i] = kDigits[hash.bytes[i] >> 4];
    s[2 * i + 1] = kDigits[hash.bytes[i] & 15];
  }
  return s;
}

bool library_hash_matches(const uint8_t* data, size_t size, const uint8_t* expected) noexcept {
  const LibraryHash h = library_hash(data, size);
  return std::memcmp(h.bytes, expected, kLibraryHashBytes) == 0;
}

}  // namespace slimcuda
