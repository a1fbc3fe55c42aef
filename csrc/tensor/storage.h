// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>

#include "csrc/cuda/stream_context.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// Memory behind one or more tensors: owned (freed with the last reference) or borrowed
/// (the caller keeps it alive). Shared by views through std::shared_ptr; thread-safe to
/// share, not to mutate.
class Storage {
 public:
  enum class Kind {
    Borrowed,  ///< someone else's memory; never freed here
    Device,    ///< from the device allocator registry (CPU or CUDA)
    Pinned,    ///< page-locked host memory (cudaHostAlloc)
  };

  /// Owned memory of `device` (index resolved) from the allocator registry; nbytes 0 gives a
  /// null pointer. CUDA memory is ordered on ctx.for_allocation(device.index).
  [[nodiscard]] static Error allocate(size_t nbytes, Device device, const StreamContext& ctx,
                                      std::shared_ptr<Storage>* out) noexcept;
  /// Owned page-locked host memory ordered on ctx.stream(): really pinned, or an error
  /// (NotSupported without a CUDA driver) — never a pageable fallback.
  [[nodiscard]] static Error allocate_pinned(size_t nbytes, const StreamContext& ctx,
                                             std::shared_ptr<Storage>* out) noexcept;
  /// Borrowed memory: `data` stays valid while tensors use it.
  [[nodiscard]] static std::shared_ptr<Storage> borrow(void* data, size_t nbytes, Device device);

  ~Storage();
  // Storages are shared by pointer, never copied: a copy would free the memory twice.
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  Storage(Storage&&) = delete;
  Storage& operator=(Storage&&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] size_t nbytes() const noexcept { return nbytes_; }
  [[nodiscard]] Device device() const noexcept { return device_; }
  [[nodiscard]] Kind kind() const noexcept { return kind_; }

  /// For borrowed memory that belongs to something with a lifetime of its own (a model's
  /// library or container): keeps `owner` alive as long as this storage, so a tensor never
  /// outlives the memory it points to. Only the first owner given is kept. Thread-safe.
  void retain_owner(std::shared_ptr<const void> owner) noexcept;

 private:
  Storage(void* data, size_t nbytes, Device device, Kind kind) noexcept
      : data_(data), nbytes_(nbytes), device_(device), kind_(kind) {}

  void* data_;
  size_t nbytes_;
  Device device_;
  Kind kind_;
  std::shared_ptr<const void> owner_;  // set once (retain_owner), released after the memory
};

}  // namespace slimcuda
