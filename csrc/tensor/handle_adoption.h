// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <vector>

#include "csrc/tensor/slim_tensor.h"

namespace slimcuda {

/// Handles a model library makes of tensors slimcuda lends it and never deletes, taken
/// over by slimcuda while one hand-over call runs on this thread.
///
/// Why: PyTorch 2.11's containers keep user-managed constants as
/// `MaybeOwningAtenTensorHandle(handle, /*user_managed=*/true)`, which calls
/// aoti_torch_new_tensor_handle on the handle given and never deletes the copy
/// (aoti_runtime/utils.h). PyTorch 2.15's keep the copy as a RAIIAtenTensorHandle instead,
/// which deletes it when the constant is replaced and when the container is destroyed.
/// While an adoption is installed, every handle aoti_torch_new_tensor_handle makes of one
/// of `lent` is recorded here and marked adopted (SlimTensor::adopted), which makes the
/// library's own delete of it a no-op: the owner deletes them once the container that
/// holds them is destroyed, whichever kind of container it was.
///
/// Threading: installed for the current thread only (a thread-local, living in
/// libslimcuda.so once); adoptions nest (the previous one is restored). Not copyable or
/// movable (it is the thread's current adoption until destroyed).
class HandleAdoption {
 public:
  explicit HandleAdoption(std::vector<const SlimTensor*> lent) noexcept;
  ~HandleAdoption();
  HandleAdoption(const HandleAdoption&) = delete;
  HandleAdoption& operator=(const HandleAdoption&) = delete;
  HandleAdoption(HandleAdoption&&) = delete;
  HandleAdoption& operator=(HandleAdoption&&) = delete;

  /// Called by aoti_torch_new_tensor_handle: `made` was copied from `source`.
  static void note(const SlimTensor* source, SlimTensor* made) noexcept;
  /// The handles adopted so far (the caller now owns them).
  [[nodiscard]] std::vector<std::unique_ptr<SlimTensor>> take() noexcept;

 private:
  std::vector<const SlimTensor*> lent_;
  std::vector<std::unique_ptr<SlimTensor>> adopted_;
  HandleAdoption* previous_;
  bool failed_ = false;  // out of host memory recording one: it leaks, as without adoption
};

}  // namespace slimcuda
