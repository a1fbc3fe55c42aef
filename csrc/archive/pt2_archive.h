// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "slimcuda/error.h"

namespace slimcuda {

/// One file inside a zip archive, as checked when the archive was opened.
struct ArchiveEntry {
  std::string name;              ///< the path inside the archive, as written
  uint64_t size = 0;             ///< uncompressed bytes
  uint64_t compressed_size = 0;  ///< bytes in the archive
  bool stored = true;            ///< STORED (what PyTorch writes); else DEFLATE
  uint32_t crc32 = 0;            ///< the archive's CRC-32 of the uncompressed bytes
  uint64_t index = 0;            ///< libzip's index
  uint64_t data_offset = 0;      ///< where its (compressed) bytes start in the archive
  bool located = false;          ///< data_offset is known (always for a STORED entry with bytes)
};

/// A zero-copy view of a STORED entry's bytes inside the archive's mapping.
struct ArchiveSpan {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// A PyTorch `.pt2` archive (a zip, as torch._inductor.aoti_compile_and_package writes it),
/// read in place through libzip: the file is mapped read-only (mmap), its central directory
/// is parsed and checked once at open, and nothing is ever extracted to disk.
///
/// Untrusted input: every entry is checked at open — a name that is empty, absolute, holds
/// a `..` component, a backslash or a NUL; a second entry of the same name; a compression
/// method other than STORED or DEFLATE, or encryption; a STORED entry whose two sizes differ
/// or whose bytes lie outside the file; a DEFLATE entry declaring more bytes than deflate
/// can expand its compressed bytes into (1032:1, the zip-bomb check); two entries whose
/// bytes overlap (nested inside one another, or sharing one deflate stream: the overlapping
/// zip bomb); more than kMaxEntries entries — all InvalidProgram, naming the entry. So the
/// entries' bytes add up to at most the archive's size. A file libzip cannot parse
/// (truncated, a central directory that disagrees with the local headers) is InvalidProgram
/// with libzip's reason.
///
/// The archive stays mapped while the object lives; views point into the mapping, so they
/// are valid exactly as long. The file must not be truncated meanwhile (reading a page past
/// the new end raises SIGBUS, as for any mapping). Const member functions are thread-safe
/// (reads of compressed entries serialize on one lock: libzip's zip_t is not thread-safe).
/// Not copyable or movable (one mapping, one zip_t).
class Pt2Archive {
 public:
  /// More entries than this is not an archive we read (PyTorch writes a few per model).
  static constexpr size_t kMaxEntries = 1 << 16;

  /// Maps the file at `path` (opened like read_regular_file: NotFound, AccessFailed,
  /// InvalidArgument for a non-regular file, OutOfResources) and opens it as a zip.
  [[nodiscard]] static Error open(const char* path, std::unique_ptr<Pt2Archive>* out) noexcept;
  /// Opens `size` bytes in memory as a zip, borrowing them: they must outlive the archive.
  [[nodiscard]] static Error open_memory(const uint8_t* data, size_t size, std::unique_ptr<Pt2Archive>* out) noexcept;
  /// Whether `size` bytes start like a zip (a local file header, or the end record of an
  /// empty archive): how slimcuda tells a .pt2 from its own package, whatever the name.
  [[nodiscard]] static bool looks_like_zip(const uint8_t* data, size_t size) noexcept;

  ~Pt2Archive();
  Pt2Archive(const Pt2Archive&) = delete;
  Pt2Archive& operator=(const Pt2Archive&) = delete;
  Pt2Archive(Pt2Archive&&) = delete;
  Pt2Archive& operator=(Pt2Archive&&) = delete;

  /// Every entry, in the archive's order.
  [[nodiscard]] const std::vector<ArchiveEntry>& entries() const noexcept { return entries_; }
  /// The entry named exactly `name`, or nullptr.
  [[nodiscard]] const ArchiveEntry* find(std::string_view name) const noexcept;
  /// The entries whose names start with `prefix` (e.g. "<root>data/constants/"), in order.
  [[nodiscard]] std::vector<const ArchiveEntry*> entries_under(std::string_view prefix) const;
  /// The archive's size in bytes.
  [[nodiscard]] size_t size() const noexcept { return size_; }
  /// What names the mapped file stably (its device, inode, size and modification time), for
  /// sharing what was uploaded from it (WeightSource::identity); empty for an archive opened
  /// from memory (its bytes have no name).
  [[nodiscard]] const std::string& identity() const noexcept { return identity_; }

  /// A zero-copy view of a STORED entry (NotSupported for a compressed one: use read).
  /// Not CRC-checked (see verify_crc).
  [[nodiscard]] Error view(const ArchiveEntry& entry, ArchiveSpan* out) const noexcept;
  /// Copies `size` bytes of the entry's uncompressed contents from `offset` into `dst`:
  /// STORED entries straight from the mapping (lock-free), compressed ones by streaming
  /// their decompression in chunks (from the entry's start: deflate cannot seek), keeping
  /// only the requested range. A range past the entry's end -> InvalidArgument; a compressed
  /// stream that ends early or is corrupt -> InvalidProgram. Nothing is CRC-checked unless
  /// the range is the whole entry (then a mismatch is InvalidProgram).
  [[nodiscard]] Error read(const ArchiveEntry& entry, uint64_t offset, uint64_t size, void* dst) const noexcept;
  /// Checks the entry's bytes against the archive's CRC-32 -> InvalidProgram on mismatch.
  [[nodiscard]] Error verify_crc(const ArchiveEntry& entry) const noexcept;

 private:
  Pt2Archive() = default;
  [[nodiscard]] static Error open_bytes(std::unique_ptr<Pt2Archive> a, std::unique_ptr<Pt2Archive>* out) noexcept;
  [[nodiscard]] Error check_entries();
  [[nodiscard]] Error locate(ArchiveEntry* e);
  [[nodiscard]] Error check_disjoint() const;
  [[nodiscard]] Error stream(const ArchiveEntry& entry, uint64_t offset, uint64_t size, uint8_t* dst) const;

  struct Source;  // libzip's view of the bytes (zip_source callback state)

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // munmap'ed at destruction; nullptr for borrowed bytes
  std::unique_ptr<Source> source_;
  void* zip_ = nullptr;  // zip_t*
  std::vector<ArchiveEntry> entries_;
  std::string identity_;
  mutable std::mutex zip_mutex_;  // zip_t and the source's position
};

/// The CRC-32 (zlib's) of n bytes, over several threads for large n (verify_crc's).
[[nodiscard]] uint32_t crc32_of(const uint8_t* p, uint64_t n) noexcept;

}  // namespace slimcuda
