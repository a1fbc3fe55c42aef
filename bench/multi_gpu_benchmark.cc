// SPDX-License-Identifier: Apache-2.0
// multi_gpu_benchmark: aggregate host-to-device bandwidth with one GPU copying and with
// every GPU copying at once (one thread per GPU, each on its own caller stream, pinned
// host buffers), through slimcuda and through raw cudaMemcpyAsync + sync, in one run.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "slimcuda/caller_stream.h"
#include "slimcuda/slimcuda.h"

namespace {

constexpr size_t kBytes = size_t{256} << 20;
constexpr int kCopies = 20;

struct Gpu {
  int device;
  void* host = nullptr;
  void* dev = nullptr;
  cudaStream_t stream = nullptr;
};

// Seconds for every GPU in `gpus` to do kCopies copies at once.
double run(std::vector<Gpu>& gpus, bool raw) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (Gpu& g : gpus) {
    threads.emplace_back([&, g] {
      cudaSetDevice(g.device);
      slimcuda::CallerStreamGuard guard(g.stream);
      ++ready;
      while (!go.load()) {
      }
      for (int i = 0; i < kCopies; ++i) {
        if (raw) {
          cudaMemcpyAsync(g.dev, g.host, kBytes, cudaMemcpyHostToDevice, g.stream);
          cudaStreamSynchronize(g.stream);
        } else if (slimcuda_copy_host_to_device(g.dev, g.host, kBytes, g.device) != SLIMCUDA_OK) {
          std::fprintf(stderr, "copy: %s\n", slimcuda_last_error_message());
        }
      }
    });
  }
  while (ready.load() < static_cast<int>(gpus.size())) {
  }
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  int32_t n = 0;
  if (slimcuda_device_count(&n) != SLIMCUDA_OK || n == 0) {
    std::fprintf(stderr, "multi_gpu_benchmark: no CUDA device\n");
    return 2;
  }
  std::vector<Gpu> all;
  for (int d = 0; d < n; ++d) {
    Gpu g{d};
    cudaSetDevice(d);
    cudaHostAlloc(&g.host, kBytes, cudaHostAllocPortable);
    cudaMalloc(&g.dev, kBytes);
    cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
    all.push_back(g);
  }
  cudaSetDevice(0);
  std::printf("| GPUs copying at once | path | aggregate H2D GB/s | per GPU GB/s |\n|---|---|---|---|\n");
  for (int k = 1; k <= n; k = (k == 1 && n > 1) ? n : k + n) {
    std::vector<Gpu> some(all.begin(), all.begin() + k);
    for (int pass = 0; pass < 2; ++pass) {
      run(some, pass == 0);  // warm-up
    }
    for (int pass = 0; pass < 2; ++pass) {
      const bool raw = pass == 0;
      const double s = run(some, raw);
      const double gbps = static_cast<double>(kBytes) * kCopies * k / s / 1e9;
      std::printf("| %d | %s | %.1f | %.1f |\n", k, raw ? "raw cudaMemcpyAsync+sync" : "slimcuda (caller stream)", gbps,
                  gbps / k);
    }
    if (n == 1) break;
  }
  for (Gpu& g : all) {
    cudaSetDevice(g.device);
    slimcuda_stream_release(g.stream);  // the caches forget it first (slimcuda.h)
    cudaStreamDestroy(g.stream);
    cudaFree(g.dev);
    cudaFreeHost(g.host);
  }
  return 0;
}
