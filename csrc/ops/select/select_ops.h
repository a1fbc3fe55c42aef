// SPDX-License-Identifier: Apache-2.0
#pragma once

// The unique family for the proxy executor (csrc/proxy): ATen ops without a C shim, which
// AOTInductor reaches through aoti_torch_proxy_executor_call_function.

#include <memory>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// aten::_unique2(self, sorted, return_inverse, return_counts) (consecutive false; the
/// values always sorted, which ATen's sorted=False allows) and
/// aten::unique_consecutive(self, return_inverse, return_counts, dim=None) (consecutive
/// true): out[0] the distinct values of self (1-D, self's dtype; equal values by ATen's
/// ordering: -0.0 equal to 0.0, every NaN distinct, NaNs last), out[1] int64 inverse
/// indices of self's shape ([0] unless return_inverse), out[2] int64 counts ([0] unless
/// return_counts); contiguous, on self's device. Any dtype, any strides, 0-d and empty
/// tensors. CUDA: ctx is the caller stream of self's device (current); one synchronization
/// reads the number of values; NotSupported while the stream is being captured.
[[nodiscard]] Error unique(const char* op, const SlimTensor& self, bool consecutive, bool return_inverse,
                           bool return_counts, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]);

/// aten::unique_dim(self, dim, sorted, return_inverse, return_counts) (consecutive false;
/// always sorted) and aten::unique_consecutive(self, return_inverse, return_counts, dim)
/// with a dim (consecutive true): the distinct slices along dim (lexicographic order of their
/// elements by ATen's ordering; a slice holding NaN equals no other), contiguous; out[1] int64
/// [self.size(dim)] inverse indices and out[2] int64 counts, which the CPU always returns (as
/// ATen's CPU kernel) and CUDA only when asked for ([0] otherwise, as ATen's CUDA kernel).
/// self at least 1-D; dim in range; no zero-size dimension but dim (ATen's messages).
[[nodiscard]] Error unique_dim(const char* op, const SlimTensor& self, int64_t dim, bool consecutive,
                               bool return_inverse, bool return_counts, const StreamContext& ctx,
                               std::unique_ptr<SlimTensor> out[3]);

}  // namespace slimcuda::ops
