// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda.h>  // the driver API's types only: its functions come through the runtime

namespace slimcuda::staging {

// The driver's stream memory operations, reached through the runtime (no libcuda link):
// nullptr where the driver or the device lacks them. stream_flags_available (staged_copy.h)
// says whether the stream-flag pipeline may use them on a device.
struct StreamMemOps {
  CUresult (*wait)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = nullptr;
  CUresult (*write)(CUstream, CUdeviceptr, cuuint32_t, unsigned int) = nullptr;
};

// Looked up once, on first use.
const StreamMemOps& stream_mem_ops();

}  // namespace slimcuda::staging
