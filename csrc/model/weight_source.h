// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "slimcuda/error.h"

namespace slimcuda {

/// Where a model's weights come from when they are not inside its library: a byte range
/// that can be read piecewise (the `.pt2` reader gives one per archive entry: a zero-copy
/// view of a STORED entry in the mmap'ed archive, or a reader of a compressed one). The
/// uploader reads only the ranges the constants name, chunk by chunk: no source is ever
/// read into one buffer of its own size.
///
/// Thread safety: size, read, view and identity may be called from several threads at
/// once. A source must outlive every upload reading from it (ConstantEntry holds it by
/// shared_ptr).
class WeightSource {
 public:
  virtual ~WeightSource() = default;

  /// The number of bytes the source holds.
  [[nodiscard]] virtual uint64_t size() const noexcept = 0;
  /// Copies [offset, offset + n) into dst (host memory of at least n bytes). A range past
  /// size() -> InvalidProgram (the archive promised bytes it does not hold); an I/O failure
  /// -> AccessFailed. Never a partial read reported as success.
  [[nodiscard]] virtual Error read(uint64_t offset, size_t n, void* dst) const noexcept = 0;
  /// All size() bytes in host memory, valid as long as the source, or nullptr when the
  /// bytes are not in memory as they are (then read() is the only way).
  [[nodiscard]] virtual const uint8_t* view() const noexcept { return nullptr; }
  /// A string naming these bytes stably (a file's device, inode, size and modification
  /// time, an archive entry's name...): two sources with the same non-empty identity hold
  /// the same bytes, so their uploads may be shared (WeightsCache). Empty: never shared.
  [[nodiscard]] virtual std::string identity() const { return {}; }

 protected:
  WeightSource() = default;

 public:
  // Sources are shared by pointer; a copy could outlive the mapping it points into.
  WeightSource(const WeightSource&) = delete;
  WeightSource& operator=(const WeightSource&) = delete;
  WeightSource(WeightSource&&) = delete;
  WeightSource& operator=(WeightSource&&) = delete;
};

/// A whole file mapped read-only (MAP_PRIVATE): view() is the mapping, identity() the
/// file's device, inode, size and modification time. An empty file has a null view and
/// size 0.
class MappedFileSource final : public WeightSource {
 public:
  /// Opens and maps `path`. Missing file -> NotFound; not readable -> AccessFailed; not a
  /// regular file -> InvalidArgument; mmap failure -> OutOfResources.
  [[nodiscard]] static Error open(const std::string& path, std::shared_ptr<MappedFileSource>* out) noexcept;
  ~MappedFileSource() override;

  [[nodiscard]] uint64_t size() const noexcept override { return size_; }
  [[nodiscard]] Error read(uint64_t offset, size_t n, void* dst) const noexcept override;
  [[nodiscard]] const uint8_t* view() const noexcept override { return data_; }
  [[nodiscard]] std::string identity() const override { return identity_; }

 private:
  MappedFileSource() = default;

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  std::string identity_;
};

/// Bytes someone else owns, in memory (tests, and weights a caller already holds): they
/// must stay valid and unchanged while the source is used. `identity` as above ("" = never
/// shared). `with_view` false hides the view, so uploads take the read() path (tests).
class MemorySource final : public WeightSource {
 public:
  MemorySource(const void* data, uint64_t size, std::string identity = {}, bool with_view = true) noexcept
      : data_(static_cast<const uint8_t*>(data)), size_(size), identity_(std::move(identity)), with_view_(with_view) {}

  [[nodiscard]] uint64_t size() const noexcept override { return size_; }
  [[nodiscard]] Error read(uint64_t offset, size_t n, void* dst) const noexcept override;
  [[nodiscard]] const uint8_t* view() const noexcept override { return with_view_ ? data_ : nullptr; }
  [[nodiscard]] std::string identity() const override { return identity_; }

 private:
  const uint8_t* data_;
  uint64_t size_;
  std::string identity_;
  bool with_view_;
};

}  // namespace slimcuda
