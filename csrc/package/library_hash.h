// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimcuda {

/// The integrity hash of a model library's bytes in a package: XXH3-128 (Debian's xxHash),
/// in xxHash's canonical (big-endian) byte order. It detects corruption — a truncated
/// download, a flipped bit — before the bytes reach the dynamic loader. It is no
/// signature: whoever can write a package can write its hash.
inline constexpr size_t kLibraryHashBytes = 16;

struct LibraryHash {
  uint8_t bytes[kLibraryHashBytes];
};

[[nodiscard]] LibraryHash library_hash(const uint8_t* data, size_t size) noexcept;

/// The hash as 32 lowercase hex digits (in its canonical byte order). Throws std::bad_alloc.
[[nodiscard]] std::string library_hash_hex(const LibraryHash& hash);

/// Whether `expected` (kLibraryHashBytes bytes) is the hash of data[0, size).
[[nodiscard]] bool library_hash_matches(const uint8_t* data, size_t size, const uint8_t* expected) noexcept;

}  // namespace slimcuda
