// SPDX-License-Identifier: Apache-2.0
#include "csrc/testing/spin.h"

#include <cuda_runtime_api.h>

namespace {

__device__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(uint64_t nanoseconds) {
  const uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < nanoseconds) {
    __nanosleep(1000);
  }
}

}  // namespace

extern "C" int32_t slimcuda_testing_spin(int64_t microseconds, void* stream) {
  if (microseconds < 0 || microseconds > 10'000'000) return 0x12;  // InvalidArgument
  if (microseconds == 0) return 0;
  spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint64_t>(microseconds) * 1000u);
  if (cudaGetLastError() != cudaSuccess) return 0x01;  // Internal (the error is cleared)
  return 0;
}
