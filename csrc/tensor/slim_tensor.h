// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/storage.h"
#include "slimcuda/error.h"
#include "slimcuda/scalar_type.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// A strided view of a Storage: what an AtenTensorHandle points to. Views made by
/// reinterpret/as_strided/new_tensor_handle share the storage; the memory goes when the
/// last tensor using it is deleted. The factories below validate untrusted input (sizes,
/// strides, dtype, device) and never allocate on overflow.
class SlimTensor {
 public:
  SlimTensor(std::shared_ptr<Storage> storage, std::vector<int64_t> sizes, std::vector<int64_t> strides,
             ScalarType dtype, int64_t storage_offset)
      : storage_(std::move(storage)),
        sizes_(std::move(sizes)),
        strides_(std::move(strides)),
        dtype_(dtype),
        storage_offset_(storage_offset) {}

  [[nodiscard]] const std::vector<int64_t>& sizes() const noexcept { return sizes_; }
  [[nodiscard]] const std::vector<int64_t>& strides() const noexcept { return strides_; }
  [[nodiscard]] int64_t dim() const noexcept { return static_cast<int64_t>(sizes_.size()); }
  [[nodiscard]] int64_t numel() const noexcept;
  [[nodiscard]] ScalarType dtype() const noexcept { return dtype_; }
  [[nodiscard]] size_t element_size() const noexcept { return slimcuda::element_size(dtype_); }
  [[nodiscard]] Device device() const noexcept { return storage_->device(); }
  [[nodiscard]] int64_t storage_offset() const noexcept { return storage_offset_; }
  [[nodiscard]] const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  /// Address of element 0 (storage data + offset * element size); null for empty storage.
  [[nodiscard]] void* data_ptr() const noexcept;
  [[nodiscard]] bool is_contiguous() const noexcept;

  /// Makes this tensor the same view as `other` (assign_tensors).
  void assign(const SlimTensor& other) { *this = other; }

  /// Whether slimcuda keeps this handle alive and deletes it itself (HandleAdoption): a
  /// model library's aoti_torch_delete_tensor_object of it is then a no-op. A property of
  /// this handle: copies and assignments do not take it.
  [[nodiscard]] bool adopted() const noexcept { return adopted_.value; }
  void set_adopted() noexcept { adopted_.value = true; }

 private:
  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  ScalarType dtype_;
  int64_t storage_offset_;
  struct HandleFlag {  // copying a tensor makes a new handle: the flag stays behind
    bool value = false;
    HandleFlag() = default;
    HandleFlag(const HandleFlag&) noexcept {}
    HandleFlag& operator=(const HandleFlag&) noexcept { return *this; }
    ~HandleFlag() = default;
  } adopted_;
};

/// Checks a dtype code, device type code and index from the C ABI and returns the Device
/// (CUDA index -1 resolved to the current device; CPU accepts -1 or 0).
[[nodiscard]] Error parse_device(int32_t dtype, int32_t device_type, int32_t device_index, ScalarType* out_dtype,
                                 Device* out_device) noexcept;

/// A new tensor's checked arguments (check_empty): what empty_strided allocates.
struct EmptySpec {
  std::vector<int64_t> sizes, strides;
  ScalarType dtype = ScalarType::Float;
  Device device;  ///< CUDA index resolved
  bool pinned = false;
  int64_t nbytes = 0;
  /// CUDA or pinned memory, ordered on a stream: entry points resolve a StreamContext only
  /// then, so CPU tensors work without a GPU.
  [[nodiscard]] bool needs_stream() const noexcept { return pinned || device.is_cuda(); }
};

/// Checks untrusted arguments of a new tensor (strides null = contiguous; pinned: page-
/// locked host memory, device must be CPU) in the contract's order, resolving a CUDA index
/// -1 to the current device. Allocates nothing.
[[nodiscard]] Error check_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                int32_t device_type, int32_t device_index, bool pinned, EmptySpec* out) noexcept;

/// A new tensor with fresh memory as `spec` says. CUDA and pinned memory are ordered on
/// `ctx` (the entry's caller_context; moved to the tensor's device with
/// StreamContext::for_allocation).
[[nodiscard]] Error empty_strided(const EmptySpec& spec, const StreamContext& ctx, SlimTensor** out) noexcept;

/// A tensor over memory the caller owns (borrowed).
[[nodiscard]] Error from_blob(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                              int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
                              SlimTensor** out) noexcept;

/// A new view of self's storage; it must fit inside the storage.
[[nodiscard]] Error reinterpret(const SlimTensor& self, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                int64_t storage_offset, SlimTensor** out) noexcept;

/// A new tensor with the same sizes, dtype and device and its own memory, holding a copy
/// of self: contiguous, or (preserve_strides) with self's strides and the storage span they
/// reach (O(span) work, as PyTorch). CUDA work and memory on `ctx`.
[[nodiscard]] Error clone(const SlimTensor& self, bool preserve_strides, const StreamContext& ctx,
                          SlimTensor** out) noexcept;

/// Whether clone(self, ...) needs a StreamContext (CUDA or pinned memory).
[[nodiscard]] inline bool clone_needs_stream(const SlimTensor& self) noexcept {
  return self.device().is_cuda() || self.storage()->kind() == Storage::Kind::Pinned;
}

}  // namespace slimcuda
