// SPDX-License-Identifier: Apache-2.0
// staging_benchmark: pageable copies, the host memcpy ceiling and the allocators' cache
// hits, each against raw CUDA in the same run (docs/benchmarks.md P1, P4, P5).
//
//   host memcpy of 1 GiB on 1, 4, 8 and 16 threads  -- the ceiling for any staging scheme
//   P1: pageable H2D / D2H, 1 MiB .. 1 GiB: raw cudaMemcpy (pageable), raw cudaMemcpy from
//       pinned memory, slimcuda_copy_* (the library's policy: staged from the threshold
//       on), and the staged copy forced at every size (to choose the threshold)
//   P4: device alloc+free on a cache hit vs cudaMalloc+cudaFree and cudaMallocAsync pairs
//   P5: pinned alloc+free on a cache hit vs cudaHostAlloc+cudaFreeHost
//
// Usage: staging_benchmark [--quick | --p1]   (needs a GPU; exits 2 without one)
//   --quick: sizes up to 256 MiB, fewer rounds; --p1: the host memcpy and P1 tables only
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/benchmark_checks.h"
#include "csrc/memory/device_allocator.h"
#include "csrc/memory/pinned_pool.h"
#include "csrc/memory/staged_copy.h"
#include "slimcuda/slimcuda.h"

namespace {

// The staged copy's context for a stream of device 0 (nullptr: the legacy default stream,
// unselected, as a copy without a caller stream).
slimcuda::StreamContext ctx_of(cudaStream_t stream) {
  return stream == nullptr ? slimcuda::StreamContext::unselected(0) : slimcuda::StreamContext::selected(stream, 0);
}

using Clock = std::chrono::steady_clock;

// Median seconds of `rounds` runs of op.
double median_s(const std::function<void()>& op, int rounds) {
  op();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    op();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(t.begin(), t.begin() + rounds / 2, t.end());
  return t[rounds / 2];
}

// Median µs per call over rounds of `iters` calls.
double per_call_us(const std::function<void()>& op, int iters, int rounds) {
  return median_s(
             [&] {
               for (int i = 0; i < iters; ++i) op();
             },
             rounds) *
         1e6 / iters;
}

double host_memcpy_gbs(char* dst, const char* src, size_t n, int threads) {
  return n / 1e9 /
         median_s(
             [&] {
               std::vector<std::thread> pool;
               const size_t slice = n / threads;
               for (int t = 0; t < threads; ++t) {
                 pool.emplace_back([=] { std::memcpy(dst + t * slice, src + t * slice, slice); });
               }
               for (std::thread& th : pool) th.join();
             },
             3);
}

std::string size_name(size_t b) {
  if (b >= (size_t{1} << 30)) return std::to_string(b >> 30) + " GiB";
  if (b >= (size_t{1} << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool p1_only = argc > 1 && std::strcmp(argv[1], "--p1") == 0;  // the memcpy ceiling and P1 only
  require_gpu_or_exit("staging_benchmark");
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; host threads: %u; staging threshold %zu bytes\n\n", prop.name,
              std::thread::hardware_concurrency(), slimcuda::staging_threshold());

  const size_t kMax = quick ? size_t{256} << 20 : size_t{1} << 30;
  char* pageable = static_cast<char*>(std::malloc(kMax));
  char* pageable2 = static_cast<char*>(std::malloc(kMax));
  CHECK_OK(pageable != nullptr && pageable2 != nullptr, "malloc");
  std::memset(pageable, 1, kMax);  // fault the pages in before timing
  std::memset(pageable2, 2, kMax);
  char* pinned = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kMax, cudaHostAllocDefault));
  std::memset(pinned, 3, kMax);
  void* dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, kMax));

  std::printf("## Host memcpy, %s (the ceiling for staging)\n\n| threads | GB/s |\n|---|---|\n",
              size_name(kMax).c_str());
  double memcpy4 = 0;
  for (int threads : {1, 4, 8, 16}) {
    const double gbs = host_memcpy_gbs(pageable2, pageable, kMax, threads);
    if (threads == 4) memcpy4 = gbs;
    std::printf("| %d | %.1f |\n", threads, gbs);
  }

  // Median GB/s of a staged copy of n bytes between `pageable` and `dev`, in the given shape.
  auto staged_gbs = [&](size_t n, bool h2d, cudaStream_t stream, const slimcuda::StagingConfig& config, int rounds) {
    return n / 1e9 /
           median_s(
               [&] {
                 void* to = h2d ? dev : pageable;
                 const void* from = h2d ? static_cast<void*>(pageable) : dev;
                 CHECK_OK(slimcuda::staged_copy(to, from, n, h2d, ctx_of(stream), config) == slimcuda::Error::Ok,
                          "staged_copy");
               },
               rounds);
  };
  // One "H2D / D2H" table cell (host to device measured first).
  auto print_staged_cell = [&](size_t n, cudaStream_t stream, const slimcuda::StagingConfig& config, int rounds) {
    const double h2d = staged_gbs(n, true, stream, config, rounds);
    const double d2h = staged_gbs(n, false, stream, config, rounds);
    std::printf(" %.1f / %.1f |", h2d, d2h);
  };

  std::printf(
      "\n## P1: pageable copies (GB/s, median)\n\n"
      "| size | dir | raw pageable | raw pinned | slimcuda buffer (policy) | slimcuda tensor (policy) | staged, events "
      "| staged, stream flags | goal 0.75×min(pinned, memcpy×4) | buffer / goal | tensor / goal |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  // A uint8 CUDA tensor over `dev` and a CPU tensor over `pageable`: the tensor path
  // (copy_tensor, the model-input path) through the same transfer engine.
  const int64_t tensor_bytes = static_cast<int64_t>(kMax);
  slimcuda_tensor* dev_tensor = nullptr;
  CHECK_SC(slimcuda_tensor_empty(1, &tensor_bytes, nullptr, SLIMCUDA_UINT8, SLIMCUDA_DEVICE_CUDA, 0, 0, &dev_tensor));
  void* tensor_data = nullptr;
  {
    slimcuda_tensor_info info{};
    CHECK_SC(slimcuda_tensor_get_info(dev_tensor, &info));
    tensor_data = info.data;
  }
  slimcuda::StagingConfig flags_config = slimcuda::staging_config();
  flags_config.stream_flags = true;
  const bool have_flags = slimcuda::stream_flags_available(0);
  for (size_t mib : {1, 2, 4, 8, 16, 64, 256, 1024}) {
    const size_t n = mib << 20;
    if (n > kMax) break;
    const int rounds = n >= (size_t{256} << 20) ? 3 : 7;
    for (int h2d = 1; h2d >= 0; --h2d) {
      const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
      auto gbs = [&](const std::function<void()>& op) { return n / 1e9 / median_s(op, rounds); };
      const double raw =
          gbs([&] { CHECK_CUDA(h2d ? cudaMemcpy(dev, pageable, n, kind) : cudaMemcpy(pageable, dev, n, kind)); });
      const double raw_pinned =
          gbs([&] { CHECK_CUDA(h2d ? cudaMemcpy(dev, pinned, n, kind) : cudaMemcpy(pinned, dev, n, kind)); });
      const double slim = gbs([&] {
        CHECK_SC(h2d ? slimcuda_copy_host_to_device(dev, pageable, n, 0)
                     : slimcuda_copy_device_to_host(pageable, dev, n, 0));
      });
      const double tensor = gbs([&] {
        const int64_t len = static_cast<int64_t>(n);
        slimcuda_tensor* view = nullptr;
        CHECK_SC(slimcuda_tensor_view(dev_tensor, 1, &len, nullptr, 0, &view));
        CHECK_SC(h2d ? slimcuda_tensor_copy_from_host(view, pageable, n, SLIMCUDA_UINT8)
                     : slimcuda_tensor_copy_to_host(view, pageable, n, SLIMCUDA_UINT8));
        slimcuda_tensor_delete(view);
      });
      (void)tensor_data;
      slimcuda::StagingConfig events_config = slimcuda::staging_config();
      events_config.stream_flags = false;
      const double staged = staged_gbs(n, h2d, nullptr, events_config, rounds);
      const double flagged = have_flags ? staged_gbs(n, h2d, nullptr, flags_config, rounds) : 0.0;
      const double goal = 0.75 * std::min(raw_pinned, memcpy4);
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", size_name(n).c_str(),
                  h2d ? "H2D" : "D2H", raw, raw_pinned, slim, tensor, staged, flagged, goal, slim / goal,
                  tensor / goal);
    }
  }

  slimcuda_tensor_delete(dev_tensor);

  // Where a small copy's time goes: the same chunking, with the calling thread driving each
  // chunk (events) and with every DMA enqueued at once behind flags (stream flags). If the
  // calling thread's ~15 µs per chunk were the cost, the flags would win at small chunks.
  if (have_flags) {
    std::printf(
        "\n## Events against stream flags by chunk: GB/s H2D / D2H (median of 9), 6 buffers, 8 threads\n\n"
        "| size | chunk | chunks | events | stream flags |\n|---|---|---|---|---|\n");
    for (size_t n : {size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
      for (size_t chunk_kib : {64, 256, 1024}) {
        if ((chunk_kib << 10) > n) continue;
        slimcuda::StagingConfig c{chunk_kib << 10, 6, 8};
        std::printf("| %s | %zu KiB | %zu |", size_name(n).c_str(), chunk_kib, n / (chunk_kib << 10));
        print_staged_cell(n, nullptr, c, 9);
        c.stream_flags = true;
        print_staged_cell(n, nullptr, c, 9);
        std::printf("\n");
      }
    }
  }
  if (p1_only) return 0;  // the process ends: its buffers go with it

  // Small copies: does a finer pipeline (smaller chunks, other thread counts) pay for its
  // extra hand-offs? The library cuts a copy below four default chunks into quarters.
  std::printf(
      "\n## Small staged copies: GB/s H2D / D2H (median of 9) by chunk, buffers and threads\n\n"
      "| size | chunk | buffers | 2 threads | 4 threads | 8 threads |\n|---|---|---|---|---|---|\n");
  for (size_t n : {size_t{1} << 20, size_t{4} << 20}) {
    for (size_t chunk_kib : {64, 128, 256, 1024}) {
      if ((chunk_kib << 10) > n / 2 && chunk_kib != 256) continue;  // the quarter rule caps it
      for (int buffers : {2, 4, 8}) {
        std::printf("| %s | %zu KiB | %d |", size_name(n).c_str(), chunk_kib, buffers);
        for (int t : {2, 4, 8}) print_staged_cell(n, nullptr, {chunk_kib << 10, buffers, t}, 9);
        std::printf("\n");
      }
    }
  }

  // The stream the DMAs go to: the legacy default stream (no caller stream) or a
  // non-blocking caller stream.
  {
    cudaStream_t nb = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    std::printf(
        "\n## Small staged copies by stream: GB/s H2D / D2H (median of 9), 4 buffers, 4 threads\n\n"
        "| size | chunk | legacy default stream | non-blocking stream |\n|---|---|---|---|\n");
    for (size_t n : {size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
      for (size_t chunk_kib : {64, 256, 4096}) {
        if ((chunk_kib << 10) > n) continue;
        std::printf("| %s | %zu KiB |", size_name(n).c_str(), chunk_kib);
        for (cudaStream_t st : {static_cast<cudaStream_t>(nullptr), nb}) {
          print_staged_cell(n, st, {chunk_kib << 10, 4, 4}, 9);
        }
        std::printf("\n");
      }
    }
    CHECK_SC(slimcuda_stream_release(nb));  // the caches forget it first (slimcuda.h)
    CHECK_CUDA(cudaStreamDestroy(nb));
  }

  // The DMA side of chunking alone: a pinned copy cut into k back-to-back DMAs on one
  // stream, then one wait (what the staged pipeline's DMAs cost without any memcpy).
  {
    cudaStream_t s = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf(
        "\n## Pinned DMAs cut into chunks, then one wait: GB/s H2D / D2H (median of 9)\n\n"
        "| size | 1 DMA | 4 DMAs | 16 DMAs |\n|---|---|---|---|\n");
    for (size_t n : {size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
      std::printf("| %s |", size_name(n).c_str());
      for (size_t k : {1, 4, 16}) {
        double gbs[2];
        for (int h2d = 1; h2d >= 0; --h2d) {
          gbs[h2d] = n / 1e9 /
                     median_s(
                         [&] {
                           const size_t part = n / k;
                           for (size_t i = 0; i < k; ++i) {
                             char* d = static_cast<char*>(dev) + i * part;
                             CHECK_CUDA(h2d ? cudaMemcpyAsync(d, pinned + i * part, part, cudaMemcpyHostToDevice, s)
                                            : cudaMemcpyAsync(pinned + i * part, d, part, cudaMemcpyDeviceToHost, s));
                           }
                           CHECK_CUDA(cudaStreamSynchronize(s));
                         },
                         9);
        }
        std::printf(" %.1f / %.1f |", gbs[1], gbs[0]);
      }
      std::printf("\n");
    }
    CHECK_SC(slimcuda_stream_release(s));  // the caches forget it first (slimcuda.h)
    CHECK_CUDA(cudaStreamDestroy(s));
  }

  // What shapes the pipeline: chunk size, buffers in flight, memcpy threads (256 MiB).
  const size_t sweep_n = std::min(kMax, size_t{256} << 20);
  const slimcuda::StagingConfig current = slimcuda::staging_config();
  std::printf(
      "\n## P1 pipeline sweep: staged copy of %s, GB/s H2D / D2H (median of 3); library default: "
      "%zu MiB chunks, %d buffers, %d threads\n\n| chunk | buffers |",
      size_name(sweep_n).c_str(), current.chunk_bytes >> 20, current.buffers, current.threads);
  const int sweep_threads[] = {4, 8, 12, 16};
  for (int t : sweep_threads) std::printf(" %d threads |", t);
  std::printf("\n|---|---|---|---|---|---|\n");
  for (size_t chunk_mib : {2, 4, 8, 16}) {
    for (int buffers : {2, 3, 4, 6}) {
      std::printf("| %zu MiB | %d |", chunk_mib, buffers);
      for (int t : sweep_threads) print_staged_cell(sweep_n, nullptr, {chunk_mib << 20, buffers, t}, 3);
      std::printf("\n");
    }
  }

  // Host memory bandwidth shared: memcpy threads while DMA runs, and the DMA while they run.
  {
    cudaStream_t dma_stream = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&dma_stream, cudaStreamNonBlocking));
    cudaEvent_t start = nullptr, stop = nullptr;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    const size_t m = sweep_n;
    std::printf(
        "\n## Host memory shared between memcpy threads and the DMA (%s pinned DMAs, %s memcpys)\n\n"
        "| DMA | memcpy threads | memcpy GB/s alone | memcpy GB/s during DMA | DMA GB/s alone | DMA GB/s during memcpy "
        "|\n"
        "|---|---|---|---|---|---|\n",
        size_name(m).c_str(), size_name(m).c_str());
    for (int h2d = 1; h2d >= 0; --h2d) {
      for (int threads : {4, 8, 16}) {
        const int reps = 12;
        auto dma_batch = [&] {
          CHECK_CUDA(cudaEventRecord(start, dma_stream));
          for (int i = 0; i < reps; ++i) {
            CHECK_CUDA(h2d ? cudaMemcpyAsync(dev, pinned, m, cudaMemcpyHostToDevice, dma_stream)
                           : cudaMemcpyAsync(pinned, dev, m, cudaMemcpyDeviceToHost, dma_stream));
          }
          CHECK_CUDA(cudaEventRecord(stop, dma_stream));
        };
        auto dma_gbs = [&] {
          float ms = 0;
          CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
          return reps * m / 1e6 / ms;
        };
        dma_batch();
        CHECK_CUDA(cudaStreamSynchronize(dma_stream));
        const double dma_alone = dma_gbs();
        const double memcpy_alone = host_memcpy_gbs(pageable2, pageable, m, threads);
        // The memcpys run inside the DMA batch (12 × 256 MiB ≈ 60 ms; each memcpy ≈ 10 ms).
        dma_batch();
        const double memcpy_during = host_memcpy_gbs(pageable2, pageable, m, threads);
        bool memcpy_inside = cudaEventQuery(stop) == cudaErrorNotReady;
        (void)cudaGetLastError();
        // And the DMA's rate with memcpys running throughout it.
        std::atomic<bool> stop_memcpy{false};
        std::thread load([&] {
          while (!stop_memcpy.load()) (void)host_memcpy_gbs(pageable2, pageable, m, threads);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK_CUDA(cudaStreamSynchronize(dma_stream));
        dma_batch();
        CHECK_CUDA(cudaStreamSynchronize(dma_stream));
        stop_memcpy = true;
        load.join();
        std::printf("| %s | %d | %.1f | %.1f%s | %.1f | %.1f |\n", h2d ? "H2D" : "D2H", threads, memcpy_alone,
                    memcpy_during, memcpy_inside ? "" : " (DMA ended first)", dma_alone, dma_gbs());
      }
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_SC(slimcuda_stream_release(dma_stream));  // the caches forget it first (slimcuda.h)
    CHECK_CUDA(cudaStreamDestroy(dma_stream));
  }

  const int iters = quick ? 200 : 2000;
  std::printf("\n## P4 / P5: allocation + free pairs (µs per pair, median of 7 rounds of %d)\n\n", iters);
  std::printf(
      "| bytes | slimcuda C API device (cache hit) | C++ DeviceAllocator (cache hit) | cudaMalloc+cudaFree | "
      "cudaMallocAsync+cudaFreeAsync | slimcuda pinned (cache hit) | cudaHostAlloc+cudaFreeHost "
      "|\n|---|---|---|---|---|---|---|\n");
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (size_t n : {size_t{4096}, size_t{1} << 20, size_t{64} << 20}) {
    const double dev_hit = per_call_us(
        [&] {
          void* p = nullptr;
          CHECK_SC(slimcuda_device_alloc(n, 0, 0, &p));
          CHECK_SC(slimcuda_device_free(p, 0));
        },
        iters, 7);
    slimcuda::DeviceAllocator& allocator = *slimcuda::get_device_allocator(slimcuda::DeviceType::CUDA);
    const double cpp_hit = per_call_us(
        [&] {
          slimcuda::Result<void*> r = allocator.allocate(n, 0, slimcuda::StreamContext::unselected(0));
          CHECK_OK(r.ok(), "DeviceAllocator::allocate");
          CHECK_OK(allocator.deallocate(r.value(), 0) == slimcuda::Error::Ok, "DeviceAllocator::deallocate");
        },
        iters, 7);
    const double raw_malloc = per_call_us(
        [&] {
          void* p = nullptr;
          CHECK_CUDA(cudaMalloc(&p, n));
          CHECK_CUDA(cudaFree(p));
        },
        std::max(20, iters / 50), 7);
    const double raw_async = per_call_us(
        [&] {
          void* p = nullptr;
          CHECK_CUDA(cudaMallocAsync(&p, n, stream));
          CHECK_CUDA(cudaFreeAsync(p, stream));
        },
        iters, 7);
    const double pinned_hit = per_call_us(
        [&] {
          void* p = nullptr;
          CHECK_OK(slimcuda::pinned_allocate(n, slimcuda::StreamContext::unselected(0), &p) == slimcuda::Error::Ok,
                   "pinned_allocate");
          slimcuda::pinned_free(p);
        },
        iters, 7);
    const double raw_host = per_call_us(
        [&] {
          void* p = nullptr;
          CHECK_CUDA(cudaHostAlloc(&p, n, cudaHostAllocDefault));
          CHECK_CUDA(cudaFreeHost(p));
        },
        n >= (size_t{64} << 20) ? 3 : 20, 3);
    std::printf("| %zu | %.3f | %.3f | %.2f | %.3f | %.3f | %.1f |\n", n, dev_hit, cpp_hit, raw_malloc, raw_async,
                pinned_hit, raw_host);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_SC(slimcuda_stream_release(stream));  // the caches forget it first (slimcuda.h)
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaFreeHost(pinned));
  std::free(pageable);
  std::free(pageable2);
  return 0;
}
