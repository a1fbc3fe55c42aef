#pragma once

#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// dst <- src, element by element: equal sizes (no broadcasting), any strides, any pair of
/// supported dtypes (converted like a C cast; floating to integer truncates, NaN -> 0,
/// to bool means != 0). A destination whose elements alias (a dimension of size > 1 with
/// stride 0, or more elements than the storage span they reach) -> InvalidArgument "the
/// destination has overlapping elements"; so the work is bounded by dst's storage. CPU<->CPU runs on the host; CUDA work runs in kernels on the
/// current stream (the caller stream if selected, else the legacy default stream), whose
/// device must be the CUDA tensor's.
///
/// Blocking: when a host tensor is involved (host<->device), the call returns once the
/// copy is complete. Device<->device on one GPU is enqueued and returns at once, like a
/// kernel launch. Between two GPUs: packed on the source GPU, copied peer to peer and
/// scattered on the destination GPU, blocking (after waiting for the caller stream).
[[nodiscard]] Error copy_tensor(const SlimTensor& dst, const SlimTensor& src, const char* function) noexcept;

}  // namespace slimcuda
