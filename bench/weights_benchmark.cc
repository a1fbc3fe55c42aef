// SPDX-License-Identifier: Apache-2.0
// weights_benchmark: uploading a model's weights kept outside its library against
// the pinned link, in one run.
//
//   slimcuda:  attach_constants of N GiB of constants (many sizes, a few small ones, as a
//              model has) from a file mapped afresh for each round (or anonymous memory) on a
//              caller stream:
//              checks, one allocation from the caching allocator, the pinned-chunk upload
//              (staged_upload), the hand-over to a container. Memory released between rounds.
//   raw:       one cudaMemcpyAsync of the same N GiB from a pinned buffer (the link's
//              ceiling: no staging, no file), then the pageable cudaMemcpy from the same
//              mapping for reference.
//   shared:    a second attach of the same model on the same device (WeightsCache): no upload.
//
// Prints GB/s of each, the ratio slimcuda / raw pinned (the goal: >= 0.75) and the caching
// allocator's peak. Usage:
//   weights_benchmark [--gib N] [--constants K] [--rounds R] [--source file|memory] [--dir D]
// defaults: 6 GiB, 160 constants, 3 rounds, file in $TMPDIR (else /tmp). Needs a GPU (exit 2
// without one); exits 1 on a failed call, 3 when the ratio misses the goal.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/benchmark_checks.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/staged_copy.h"
#include "csrc/model/constants.h"
#include "csrc/model/weights_cache.h"
#include "slimcuda/last_error.h"

namespace {

using Clock = std::chrono::steady_clock;
using slimcuda::ConstantEntry;
using slimcuda::ContainerConstant;

// A container that takes user-managed pairs and checks nothing else: what the benchmark
// measures is slimcuda's side.
std::vector<ContainerConstant>* g_constants = nullptr;
int32_t count(void*, size_t* n) {
  *n = g_constants->size();
  return 0;
}
int32_t name(void*, size_t i, const char** s) {
  *s = (*g_constants)[i].name.c_str();
  return 0;
}
int32_t dtype(void*, size_t i, int32_t* d) {
  *d = (*g_constants)[i].dtype;
  return 0;
}
int32_t data_size(void*, size_t i, size_t* n) {
  *n = static_cast<size_t>((*g_constants)[i].data_size);
  return 0;
}
int32_t pairs(void*, const slimcuda::ContainerConstantsApi::Pair*, size_t, bool, bool) { return 0; }

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double gib = 6;
  int constants = 160, rounds = 3;
  std::string source_kind = "file";
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--gib" && v) {
      gib = std::atof(v), ++i;
    } else if (a == "--constants" && v) {
      constants = std::atoi(v), ++i;
    } else if (a == "--rounds" && v) {
      rounds = std::atoi(v), ++i;
    } else if (a == "--source" && v) {
      source_kind = v, ++i;
    } else if (a == "--dir" && v) {
      dir = v, ++i;
    } else {
      std::fprintf(
          stderr, "usage: weights_benchmark [--gib N] [--constants K] [--rounds R] [--source file|memory] [--dir D]\n");
      return 2;
    }
  }
  if (gib <= 0 || constants < 1 || rounds < 1 || (source_kind != "file" && source_kind != "memory")) {
    std::fprintf(stderr, "weights_benchmark: bad arguments\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "weights_benchmark: no CUDA device\n");
    return 2;
  }
  CHECK_CUDA(cudaSetDevice(0));

  // Constant sizes: a few small ones (biases, norms) among large matrices, sum = N GiB.
  const uint64_t total = static_cast<uint64_t>(gib * (uint64_t{1} << 30));
  std::vector<uint64_t> sizes;
  uint64_t small = 0;
  for (int i = 0; i < constants; ++i) {
    if (i % 4 == 3) {
      sizes.push_back(4096 + 4 * static_cast<uint64_t>(i));  // a bias
      small += sizes.back();
    } else {
      sizes.push_back(0);
    }
  }
  const int large = constants - constants / 4;
  uint64_t left = total - std::min(total, small);
  for (int i = 0, k = 0; i < constants; ++i) {
    if (sizes[i] != 0) continue;
    // Sizes vary by up to +-25% around the mean; the last takes what is left. Multiples of 4.
    const int64_t quarter = static_cast<int64_t>(left / static_cast<uint64_t>(large - k) / 4);
    const int64_t varied = (quarter + quarter * ((i * 37) % 51 - 25) / 100) * 4;
    const uint64_t s = ++k == large ? left : static_cast<uint64_t>(varied);
    sizes[i] = std::min(s, left);
    left -= sizes[i];
  }
  uint64_t sum = 0;
  for (uint64_t s : sizes) sum += s;

  // The bytes: a file (mmap'ed: the page cache, as a .pt2 on a local disk after one read)
  // or anonymous memory; written in 64 MiB pieces, never held in one buffer of our own.
  std::vector<uint8_t> piece(size_t{64} << 20);
  for (size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<uint8_t>(i * 131 >> 5);
  std::shared_ptr<const slimcuda::WeightSource> source;
  static std::string path;  // removed at exit, also when a check fails
  std::vector<uint8_t> memory;
  const auto t_write = Clock::now();
  if (source_kind == "file") {
    path = dir + "/slimcuda-weights-XXXXXX";
    const int fd = mkstemp(path.data());
    CHECK_OK(fd >= 0, "mkstemp");
    std::atexit([] { unlink(path.c_str()); });
    for (uint64_t off = 0; off < sum; off += piece.size()) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(piece.size(), sum - off));
      CHECK_OK(write(fd, piece.data(), n) == static_cast<ssize_t>(n), "writing the weights file");
    }
    close(fd);
  } else {
    memory.resize(static_cast<size_t>(sum));
    for (uint64_t off = 0; off < sum; off += piece.size()) {
      std::memcpy(memory.data() + off, piece.data(), static_cast<size_t>(std::min<uint64_t>(piece.size(), sum - off)));
    }
    source = std::make_shared<slimcuda::MemorySource>(memory.data(), sum, "bench-memory");
  }
  // A file is mapped afresh for every load, as a real load maps its archive: the first touch
  // of each page (the page cache is warm: the file was just written) is part of the time.
  auto fresh_source = [&]() -> std::shared_ptr<const slimcuda::WeightSource> {
    if (source_kind != "file") return source;
    std::shared_ptr<slimcuda::MappedFileSource> mapped;
    CHECK_OK(slimcuda::MappedFileSource::open(path, &mapped) == slimcuda::Error::Ok, "mmap");
    return mapped;
  };
  const double write_s = std::chrono::duration<double>(Clock::now() - t_write).count();

  std::vector<ContainerConstant> container(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) container[i] = {"c" + std::to_string(i), "", false, 6, sizes[i]};
  auto entries_of = [&](const std::shared_ptr<const slimcuda::WeightSource>& from) {
    std::vector<ConstantEntry> entries(sizes.size());
    uint64_t off = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      entries[i] = {container[i].name, -1, {static_cast<int64_t>(sizes[i] / 4)}, {}, 0, from, off, sizes[i]};
      off += sizes[i];
    }
    return entries;
  };
  g_constants = &container;
  slimcuda::ContainerConstantsApi api;
  api.num_constants = count;
  api.name = name;
  api.dtype = dtype;
  api.data_size = data_size;
  api.update_user_managed_pairs = pairs;
  int dummy = 0;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const slimcuda::StreamContext ctx = slimcuda::StreamContext::selected(stream, 0);
  const slimcuda::Device device{slimcuda::DeviceType::CUDA, 0};

  std::printf("weights_benchmark: %.2f GiB in %zu constants (%d small), source %s (written in %.1f s)\n",
              sum / double(uint64_t{1} << 30), sizes.size(), constants / 4, source_kind.c_str(), write_s);
  const slimcuda::StagingConfig sc = slimcuda::staging_config();
  std::printf("staging: %zu KiB chunks x %d buffers, %d copy threads\n", sc.chunk_bytes >> 10, sc.buffers, sc.threads);

  // slimcuda's path, no sharing (identity ""): every round uploads.
  std::vector<double> ours;
  uint64_t peak = 0;
  for (int r = 0; r < rounds + 1; ++r) {
    slimcuda::device_memory::empty_cache(0);
    const std::vector<ConstantEntry> entries = entries_of(fresh_source());
    const auto start = Clock::now();
    slimcuda::AttachedConstants out;
    const slimcuda::Error e = slimcuda::attach_constants(api, &dummy, device, "", entries, ctx, nullptr, &out);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK_OK(e == slimcuda::Error::Ok, "attach_constants");
    peak = std::max<uint64_t>(peak, slimcuda::device_memory::stats(0).peak_allocated_bytes);
    if (r > 0) ours.push_back(s);  // round 0 warms the pinned pool, the copy threads, the driver
    std::printf("  round %d: %.3f s, %.2f GB/s%s\n", r, s, sum / 1e9 / s, r == 0 ? " (warm-up, not counted)" : "");
  }

  // Shared: a second load of the same model finds the first one's weights.
  {
    const std::vector<ConstantEntry> entries = entries_of(fresh_source());
    slimcuda::AttachedConstants first, second;
    CHECK_OK(slimcuda::attach_constants(api, &dummy, device, "bench-model", entries, ctx, nullptr, &first) ==
                 slimcuda::Error::Ok,
             "attach_constants");
    const uint64_t one = slimcuda::device_memory::stats(0).allocated_bytes;
    const auto start = Clock::now();
    CHECK_OK(slimcuda::attach_constants(api, &dummy, device, "bench-model", entries, ctx, nullptr, &second) ==
                 slimcuda::Error::Ok,
             "attach_constants");
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("shared second load: %.1f us, shared=%d, device bytes allocated %.2f GiB -> %.2f GiB\n", s * 1e6,
                second.shared ? 1 : 0, one / double(uint64_t{1} << 30),
                slimcuda::device_memory::stats(0).allocated_bytes / double(uint64_t{1} << 30));
  }
  slimcuda::device_memory::empty_cache(0);

  // Raw: one pinned cudaMemcpyAsync of the same size, on the same kind of stream.
  void* pinned = nullptr;
  void* dev = nullptr;
  CHECK_CUDA(cudaHostAlloc(&pinned, static_cast<size_t>(sum), cudaHostAllocDefault));
  for (uint64_t o = 0; o < sum; o += piece.size()) {
    std::memcpy(static_cast<char*>(pinned) + o, piece.data(),
                static_cast<size_t>(std::min<uint64_t>(piece.size(), sum - o)));
  }
  CHECK_CUDA(cudaMalloc(&dev, static_cast<size_t>(sum)));
  std::vector<double> raw;
  for (int r = 0; r < rounds + 1; ++r) {
    const auto start = Clock::now();
    CHECK_CUDA(cudaMemcpyAsync(dev, pinned, static_cast<size_t>(sum), cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (r > 0) raw.push_back(s);
  }
  CHECK_CUDA(cudaFreeHost(pinned));
  // Reference: the driver's pageable copy from the same source (what a naive loader gets).
  double pageable_s = 0;
  const std::shared_ptr<const slimcuda::WeightSource> last = fresh_source();
  if (const uint8_t* view = last->view()) {
    const auto start = Clock::now();
    CHECK_CUDA(cudaMemcpy(dev, view, static_cast<size_t>(sum), cudaMemcpyHostToDevice));
    pageable_s = std::chrono::duration<double>(Clock::now() - start).count();
  }
  CHECK_CUDA(cudaFree(dev));

  const double ours_gbs = sum / 1e9 / median(ours), raw_gbs = sum / 1e9 / median(raw);
  const double ratio = ours_gbs / raw_gbs;
  std::printf("slimcuda upload (attach_constants): %.2f GB/s (median of %d)\n", ours_gbs, rounds);
  std::printf("raw pinned cudaMemcpyAsync:         %.2f GB/s (median of %d)\n", raw_gbs, rounds);
  if (pageable_s > 0) std::printf("raw pageable cudaMemcpy (source):    %.2f GB/s (once)\n", sum / 1e9 / pageable_s);
  std::printf("ratio slimcuda / raw pinned: %.3f (goal >= 0.75): %s\n", ratio, ratio >= 0.75 ? "met" : "NOT met");
  std::printf("caching allocator peak during the uploads: %.2f GiB\n", peak / double(uint64_t{1} << 30));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return ratio >= 0.75 ? 0 : 3;
}
