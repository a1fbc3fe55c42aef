// SPDX-License-Identifier: Apache-2.0
#pragma once

// Shared by the shim files: handle <-> SlimTensor and argument checks.
#include "csrc/entry/c_entry.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::shims {

inline SlimTensor* tensor(AtenTensorHandle h) noexcept { return reinterpret_cast<SlimTensor*>(h); }
inline AtenTensorHandle handle(SlimTensor* t) noexcept { return reinterpret_cast<AtenTensorHandle>(t); }

}  // namespace slimcuda::shims

/// In a shim body: fails with InvalidArgument (naming the pointer) when `ptr` is null.
#define SLIMCUDA_SHIM_NOT_NULL(ptr) \
  SLIMCUDA_CHECK_OR_RETURN((ptr) != nullptr, ::slimcuda::Error::InvalidArgument, "null " #ptr)
