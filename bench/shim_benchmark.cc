// SPDX-License-Identifier: Apache-2.0
// shim_benchmark: tensor allocation and strided copies through the aoti_torch_* shims,
// against raw CUDA in the same run.
//   - empty_strided + delete_tensor_object (CUDA) vs cudaMalloc+cudaFree and
//     cudaMallocAsync+cudaFreeAsync; empty_strided_pinned + delete vs cudaHostAlloc+cudaFreeHost
//   - copy_ of a transposed 64 MiB float32 tensor into a contiguous one vs a contiguous
//     device-to-device cudaMemcpyAsync of the same bytes (bandwidth, CUDA events)
// Usage: shim_benchmark   (needs a GPU; exits 2 without one)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/benchmark_checks.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/slimcuda.h"

namespace {

// Median over rounds of the mean microseconds per call.
double median_us(const std::function<void()>& op, int iters, int rounds = 9) {
  for (int i = 0; i < 3; ++i) op();
  std::vector<double> r;
  for (int k = 0; k < rounds; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) op();
    r.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters);
  }
  std::nth_element(r.begin(), r.begin() + rounds / 2, r.end());
  return r[rounds / 2];
}

// Median GPU milliseconds of `op` enqueued on `stream`, by CUDA events.
double median_gpu_ms(const std::function<void()>& op, cudaStream_t stream, int rounds = 15) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  op();
  cudaStreamSynchronize(stream);
  std::vector<float> r;
  for (int k = 0; k < rounds; ++k) {
    cudaEventRecord(a, stream);
    op();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    r.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::nth_element(r.begin(), r.begin() + rounds / 2, r.end());
  return r[rounds / 2];
}

}  // namespace

int main() {
  int32_t devices = 0;
  CHECK_SC(slimcuda_device_count(&devices));
  if (devices == 0) {
    std::fprintf(stderr, "shim_benchmark: no CUDA device\n");
    return 2;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::printf("| allocation + free | bytes | µs per pair |\n|---|---|---|\n");
  for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20, int64_t{64} << 20}) {
    const int iters = bytes >= (int64_t{64} << 20) ? 20 : 200;
    const double shim = median_us(
        [&] {
          AtenTensorHandle t = nullptr;
          CHECK_SC(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &bytes, nullptr, 0, 1, 0, &t));
          CHECK_SC(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t));
        },
        iters);
    const double raw = median_us(
        [&] {
          void* p = nullptr;
          cudaMalloc(&p, bytes);
          cudaFree(p);
        },
        iters);
    const double async = median_us(
        [&] {
          void* p = nullptr;
          cudaMallocAsync(&p, bytes, stream);
          cudaFreeAsync(p, stream);
        },
        iters);
    const double pinned = median_us(
        [&] {
          AtenTensorHandle t = nullptr;
          CHECK_SC(SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(1, &bytes, nullptr, 0, 0, 0, &t));
          CHECK_SC(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t));
        },
        bytes >= (int64_t{64} << 20) ? 3 : 20, 5);
    const double host_alloc = median_us(
        [&] {
          void* p = nullptr;
          cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
          cudaFreeHost(p);
        },
        bytes >= (int64_t{64} << 20) ? 3 : 20, 5);
    std::printf("| empty_strided CUDA + delete | %lld | %.2f |\n", static_cast<long long>(bytes), shim);
    std::printf("| raw cudaMalloc + cudaFree | %lld | %.2f |\n", static_cast<long long>(bytes), raw);
    std::printf("| raw cudaMallocAsync + cudaFreeAsync | %lld | %.2f |\n", static_cast<long long>(bytes), async);
    std::printf("| empty_strided_pinned + delete | %lld | %.2f |\n", static_cast<long long>(bytes), pinned);
    std::printf("| raw cudaHostAlloc + cudaFreeHost | %lld | %.2f |\n", static_cast<long long>(bytes), host_alloc);
  }
  cudaStreamSynchronize(stream);

  // 64 MiB float32: [4096, 4096], copied from its transposed view into a contiguous tensor.
  const int64_t n = 4096, sizes[2] = {n, n}, t_strides[2] = {1, n};
  AtenTensorHandle src = nullptr, dst = nullptr, view = nullptr;
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, sizes, nullptr, 6, 1, 0, &src));
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, sizes, nullptr, 6, 1, 0, &dst));
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(src, 2, sizes, t_strides, 0, &view));
  void *sp = nullptr, *dp = nullptr;
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(src, &sp));
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(dst, &dp));
  const double bytes = static_cast<double>(n * n * 4);
  double transposed_ms = 0, contiguous_copy_ms = 0, raw_ms = 0;
  {
    slimcuda::CallerStreamGuard guard(stream);  // copy_ runs on the current (caller) stream
    transposed_ms = median_gpu_ms([&] { CHECK_SC(SLIMCUDA_SHIM(aoti_torch_copy_)(dst, view, 0)); }, stream);
    contiguous_copy_ms = median_gpu_ms([&] { CHECK_SC(SLIMCUDA_SHIM(aoti_torch_copy_)(dst, src, 0)); }, stream);
  }
  raw_ms = median_gpu_ms([&] { cudaMemcpyAsync(dp, sp, n * n * 4, cudaMemcpyDeviceToDevice, stream); }, stream);
  // A device copy reads and writes every byte: count both.
  auto gbps = [&](double ms) { return 2 * bytes / (ms * 1e-3) / 1e9; };
  std::printf("\n| 64 MiB float32 device copy | ms | GB/s (read+write) | vs raw contiguous |\n|---|---|---|---|\n");
  std::printf("| raw cudaMemcpyAsync D2D, contiguous | %.3f | %.0f | 1.000 |\n", raw_ms, gbps(raw_ms));
  std::printf("| copy_ contiguous -> contiguous | %.3f | %.0f | %.3f |\n", contiguous_copy_ms, gbps(contiguous_copy_ms),
              raw_ms / contiguous_copy_ms);
  std::printf("| copy_ transposed view -> contiguous | %.3f | %.0f | %.3f |\n", transposed_ms, gbps(transposed_ms),
              raw_ms / transposed_ms);
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(view));
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(src));
  CHECK_SC(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(dst));
  slimcuda_stream_release(stream);  // the caches forget it first (slimcuda.h)
  cudaStreamDestroy(stream);
  return 0;
}
