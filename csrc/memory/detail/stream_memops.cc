// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/detail/stream_memops.h"

#include <cuda_runtime_api.h>

#include "csrc/memory/staged_copy.h"

namespace slimcuda {
namespace staging {

const StreamMemOps& stream_mem_ops() {
  static const StreamMemOps ops = [] {
    StreamMemOps o;
    void* wait = nullptr;
    void* write = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &wait, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess ||
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &write, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return o;
    }
    o.wait = reinterpret_cast<decltype(o.wait)>(wait);
    o.write = reinterpret_cast<decltype(o.write)>(write);
    return o;
  }();
  return ops;
}

}  // namespace staging

bool stream_flags_available(int device) noexcept {
  const staging::StreamMemOps& ops = staging::stream_mem_ops();
  if (ops.wait == nullptr || ops.write == nullptr) return false;
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterSupported, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return supported != 0;
}

}  // namespace slimcuda
