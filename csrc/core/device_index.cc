// SPDX-License-Identifier: Apache-2.0
#include "csrc/core/device_index.h"

#include "csrc/core/limits.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

Error check_device_index(int64_t index) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(index >= -1 && index < kMaxDevices, Error::InvalidArgument,
                           "device index %lld out of range (-1 for the current device, or 0..%d)",
                           static_cast<long long>(index), kMaxDevices - 1);
  return Error::Ok;
}

Error to_device_index(int64_t index, DeviceIndex* out) noexcept {
  SLIMCUDA_RETURN_IF_ERROR(check_device_index(index));
  *out = static_cast<DeviceIndex>(index);
  return Error::Ok;
}

}  // namespace slimcuda
