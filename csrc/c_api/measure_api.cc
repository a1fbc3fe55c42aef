// slimcuda_measure_*: slimcuda against the raw CUDA runtime, side by side in one process,
// for the `slimcuda bench` command (the benchmarks of record live in the *_benchmark
// binaries and in docs/benchmarks.md).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "csrc/core/c_entry.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/slimcuda.h"

using namespace slimcuda;  // NOLINT: thin C shells

namespace {

constexpr int kRounds = 7;

template <typename Op>
double mean_us(int iterations, Op&& op) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) op();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Alternates rounds of raw and slimcuda so drift hits both; medians of the rounds.
template <typename Raw, typename Slim>
void compare(int iterations, Raw&& raw, Slim&& slim, double* raw_us, double* slim_us) {
  raw();
  slim();
  std::vector<double> r, s;
  for (int k = 0; k < kRounds; ++k) {
    r.push_back(mean_us(iterations, raw));
    s.push_back(mean_us(iterations, slim));
  }
  *raw_us = median(r);
  *slim_us = median(s);
}

}  // namespace

extern "C" {

int32_t slimcuda_measure_copy(size_t nbytes, int32_t direction, int32_t with_stream, int32_t iterations,
                              double* raw_us, double* slimcuda_us) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, raw_us && slimcuda_us, Error::InvalidArgument, "null output");
    SLIMCUDA_CHECK_OR_RETURN_AT(function, nbytes > 0 && iterations > 0 && (direction == 0 || direction == 1),
                                Error::InvalidArgument, "nbytes, iterations > 0; direction 0 or 1");
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(-1, &device));
    void *host = nullptr, *dev = nullptr;
    cudaStream_t stream = nullptr;
    SLIMCUDA_CUDA_TRY_AT(function, cudaHostAlloc(&host, nbytes, cudaHostAllocDefault));
    SLIMCUDA_CUDA_TRY_AT(function, cudaMalloc(&dev, nbytes));
    SLIMCUDA_CUDA_TRY_AT(function, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const bool h2d = direction == 0;
    void* dst = h2d ? dev : host;
    void* src = h2d ? host : dev;
    const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    auto slim = [&] {
      h2d ? slimcuda_copy_host_to_device(dst, src, nbytes, device) : slimcuda_copy_device_to_host(dst, src, nbytes, device);
    };
    if (with_stream) {
      CallerStreamGuard guard(stream);
      compare(
          iterations,
          [&] {
            cudaMemcpyAsync(dst, src, nbytes, kind, stream);
            cudaStreamSynchronize(stream);
          },
          slim, raw_us, slimcuda_us);
    } else {
      compare(iterations, [&] { cudaMemcpy(dst, src, nbytes, kind); }, slim, raw_us, slimcuda_us);
    }
    cudaStreamDestroy(stream);
    cudaFree(dev);
    cudaFreeHost(host);
    SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
    return Error::Ok;
  });
}

int32_t slimcuda_measure_alloc(size_t nbytes, int32_t iterations, double* raw_us, double* slimcuda_us) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, raw_us && slimcuda_us, Error::InvalidArgument, "null output");
    SLIMCUDA_CHECK_OR_RETURN_AT(function, nbytes > 0 && iterations > 0, Error::InvalidArgument,
                                "nbytes, iterations > 0");
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(-1, &device));
    compare(
        iterations,
        [&] {
          void* p = nullptr;
          cudaMalloc(&p, nbytes);
          cudaFree(p);
        },
        [&] {
          void* p = nullptr;
          slimcuda_device_alloc(nbytes, device, 0, &p);
          slimcuda_device_free(p, device);
        },
        raw_us, slimcuda_us);
    SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
    return Error::Ok;
  });
}

}  // extern "C"
