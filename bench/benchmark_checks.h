// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks for the benchmarks: a benchmark has nothing sensible to do after a failed call,
// so it prints the call and the reason and exits with status 1.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "slimcuda/slimcuda.h"

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e = (call);                                                                      \
    if (e != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

// For slimcuda_* calls (int32_t status codes).
#define CHECK_SC(call)                                                        \
  do {                                                                        \
    int32_t rc = (call);                                                      \
    if (rc != SLIMCUDA_OK) {                                                  \
      std::fprintf(stderr, "%s: %s\n", #call, slimcuda_last_error_message()); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// For anything else: library calls returning slimcuda::Error, host allocations.
#define CHECK_OK(cond, what)                                                        \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s failed: %s\n", what, slimcuda_last_error_message()); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

// Benchmarks measure GPUs: without one they say why and exit with status 2.
inline void require_gpu_or_exit(const char* benchmark) {
  int32_t devices = 0;
  CHECK_SC(slimcuda_device_count(&devices));
  if (devices == 0) {
    std::fprintf(stderr, "%s: no CUDA device: %s\n", benchmark, slimcuda_last_error_message());
    std::exit(2);
  }
}
