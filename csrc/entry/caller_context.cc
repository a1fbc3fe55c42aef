// SPDX-License-Identifier: Apache-2.0
#include "csrc/entry/caller_context.h"

#include <cuda_runtime_api.h>

#include <optional>

#include "csrc/cuda/device.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

Error caller_context(int device_index, StreamContext* out) noexcept {
  const std::optional<cudaStream_t> selection = getCallerStream();
  int device = -1;
  if (!selection.has_value()) {
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    *out = StreamContext::unselected(device);
    return Error::Ok;
  }
  SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device_for_stream(device_index, *selection, &device));
  *out = StreamContext::selected(*selection, device);
  return Error::Ok;
}

}  // namespace slimcuda
