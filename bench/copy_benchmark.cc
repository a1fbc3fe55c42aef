// SPDX-License-Identifier: Apache-2.0
// copy_benchmark: host<->device copies through slimcuda against raw CUDA, in one run.
//
// For each size (4 B, 4 KiB, 1 MiB, 64 MiB) and direction it times, on pinned host memory:
//   raw cudaMemcpy                      vs  slimcuda copy with no caller stream
//   raw cudaMemcpyAsync + stream sync   vs  slimcuda copy with a caller stream selected
// Runs alternate raw/slimcuda rounds and report the median per-copy time, so drift hits
// both sides alike. Output: a Markdown table (docs/benchmarks.md keeps the dated figures).
//
// Usage: copy_benchmark [--quick]   (needs a GPU; exits 2 without one)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/benchmark_checks.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/slimcuda.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median over `rounds` of the mean time of `iters` calls, in microseconds.
double time_us(const std::function<void()>& op, int iters) {
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) op();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iters;
}

struct Pair {
  double raw_us, slim_us;
};

Pair compare(const std::function<void()>& raw, const std::function<void()>& slim, size_t bytes, bool quick) {
  const int iters = static_cast<int>(
      std::clamp<size_t>((quick ? 64 : 512) * 1024 * 1024 / std::max<size_t>(bytes, 1), 5, quick ? 2000 : 20000));
  const int rounds = quick ? 5 : 11;
  for (int i = 0; i < 3; ++i) {  // warm-up
    raw();
    slim();
  }
  std::vector<double> r, s;
  for (int k = 0; k < rounds; ++k) {
    r.push_back(time_us(raw, iters));
    s.push_back(time_us(slim, iters));
  }
  std::nth_element(r.begin(), r.begin() + rounds / 2, r.end());
  std::nth_element(s.begin(), s.begin() + rounds / 2, s.end());
  return {r[rounds / 2], s[rounds / 2]};
}

std::string size_name(size_t b) {
  if (b >= (1u << 20)) return std::to_string(b >> 20) + " MiB";
  if (b >= (1u << 10)) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  require_gpu_or_exit("copy_benchmark");
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, driver = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  std::printf("device: %s, runtime %d, driver %d; pinned host memory; median of rounds\n\n", prop.name, runtime,
              driver);

  const size_t kMax = 64u << 20;
  void* host = nullptr;
  void* dev = nullptr;
  CHECK_CUDA(cudaHostAlloc(&host, kMax, cudaHostAllocDefault));
  CHECK_CUDA(cudaMalloc(&dev, kMax));
  std::memset(host, 1, kMax);
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf(
      "| size | dir | raw cudaMemcpy µs | slimcuda µs | Δ µs | ratio | raw async+sync µs | slimcuda on caller stream "
      "µs | Δ µs | ratio | slimcuda GB/s (stream) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t bytes : {size_t{4}, size_t{4096}, size_t{1} << 20, kMax}) {
    for (int h2d = 1; h2d >= 0; --h2d) {
      const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
      void* dst = h2d ? dev : host;
      const void* src = h2d ? host : dev;
      auto slim = [&] {
        CHECK_SC(h2d ? slimcuda_copy_host_to_device(dst, src, bytes, 0)
                     : slimcuda_copy_device_to_host(dst, src, bytes, 0));
      };
      const Pair sync = compare([&] { CHECK_CUDA(cudaMemcpy(dst, src, bytes, kind)); }, slim, bytes, quick);
      Pair async{};
      {
        slimcuda::CallerStreamGuard guard(stream);
        async = compare(
            [&] {
              CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
              CHECK_CUDA(cudaStreamSynchronize(stream));
            },
            slim, bytes, quick);
      }
      std::printf("| %s | %s | %.2f | %.2f | %+.2f | %.3f | %.2f | %.2f | %+.2f | %.3f | %.2f |\n",
                  size_name(bytes).c_str(), h2d ? "H2D" : "D2H", sync.raw_us, sync.slim_us, sync.slim_us - sync.raw_us,
                  sync.raw_us / sync.slim_us, async.raw_us, async.slim_us, async.slim_us - async.raw_us,
                  async.raw_us / async.slim_us, bytes / async.slim_us / 1e3);
    }
  }
  std::printf("\nratio = raw time / slimcuda time (1.000 = same speed; bandwidth ratio for large sizes)\n");
  CHECK_SC(slimcuda_stream_release(stream));  // the caches forget it first (slimcuda.h)
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaFreeHost(host));
  return 0;
}
