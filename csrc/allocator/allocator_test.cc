// The CUDA allocator through the C ABI, from testdata/allocator.json (the Go suite
// go/slimcuda/allocator_test.go runs the same cases), plus C++-only checks of the
// registry and the CPU allocator.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "csrc/allocator/staged_copy.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/device_allocator.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("allocator.json");

int32_t device_count() {
  int32_t n = 0;
  EXPECT_EQ(slimcuda_device_count(&n), SLIMCUDA_OK);
  return n;
}

int32_t device_index(const Case& c) {
  if (!c.data.contains("device_index")) return 0;
  if (c.data["device_index"].is_string()) {
    EXPECT_EQ(c.data["device_index"], "count");
    return device_count();
  }
  return c.data["device_index"].get<int32_t>();
}

// The stream a case selects, for the case's duration: none, a new (non-)blocking stream,
// or the legacy default stream.
class CaseStream {
 public:
  explicit CaseStream(const std::string& kind) {
    if (kind == "none") return;
    selected_ = true;
    if (kind == "non_blocking" || kind == "blocking") {
      EXPECT_EQ(slimcuda_stream_create(kind == "non_blocking" ? SLIMCUDA_STREAM_NON_BLOCKING : SLIMCUDA_STREAM_DEFAULT,
                                       0, &stream_),
                SLIMCUDA_OK)
          << slimcuda_last_error_message();
      owned_ = true;
    } else {
      EXPECT_EQ(kind, "default");
    }
    EXPECT_EQ(slimcuda_caller_stream_push(stream_), SLIMCUDA_OK);
  }
  ~CaseStream() {
    if (!selected_) return;
    EXPECT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    if (owned_) {
      EXPECT_EQ(slimcuda_stream_destroy(stream_), SLIMCUDA_OK) << slimcuda_last_error_message();
    }
  }
  CaseStream(const CaseStream&) = delete;
  CaseStream& operator=(const CaseStream&) = delete;

 private:
  void* stream_ = nullptr;
  bool selected_ = false;
  bool owned_ = false;
};

// A device allocation freed at scope end.
struct DeviceBytes {
  explicit DeviceBytes(size_t n) {
    EXPECT_EQ(slimcuda_device_alloc(n, 0, 0, &ptr), SLIMCUDA_OK) << slimcuda_last_error_message();
  }
  ~DeviceBytes() { EXPECT_EQ(slimcuda_device_free(ptr, 0), SLIMCUDA_OK) << slimcuda_last_error_message(); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* ptr = nullptr;
};

std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed);
  return v;
}

TEST(Allocator, CopyContract) {
  for (const Case& c : cases("allocator.json", "copy")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t nbytes = c.data.at("nbytes").get<size_t>();
    const bool h2d = c.data.at("direction") == "h2d";
    std::vector<uint8_t> host(nbytes + 16, 0);
    std::unique_ptr<DeviceBytes> device;
    auto buffer = [&](const std::string& kind) -> void* {
      if (kind == "null") return nullptr;
      if (kind == "host") return host.data();
      EXPECT_EQ(kind, "device");
      if (!device) device = std::make_unique<DeviceBytes>(nbytes + 16);
      return device->ptr;
    };
    void* dst = buffer(c.data.at("dst").get<std::string>());
    void* src = buffer(c.data.at("src").get<std::string>());
    const int32_t index = device_index(c);
    CaseStream stream(c.data.value("stream", "none"));
    expect_code(c, h2d ? slimcuda_copy_host_to_device(dst, src, nbytes, index)
                       : slimcuda_copy_device_to_host(dst, src, nbytes, index));
  }
}

TEST(Allocator, RoundTrip) {
  for (const Case& c : cases("allocator.json", "round_trip")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t nbytes = c.data.at("nbytes").get<size_t>();
    const int32_t index = device_index(c);
    const std::vector<uint8_t> in = pattern(nbytes, 7);
    std::vector<uint8_t> out(nbytes, 0);
    DeviceBytes device(nbytes);
    {
      CaseStream stream(c.data.at("stream").get<std::string>());
      ASSERT_EQ(slimcuda_copy_host_to_device(device.ptr, in.data(), nbytes, index), SLIMCUDA_OK)
          << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), device.ptr, nbytes, index), SLIMCUDA_OK)
          << slimcuda_last_error_message();
    }
    EXPECT_TRUE(in == out) << "round trip changed the data";
  }
}

TEST(Allocator, Alloc) {
  for (const Case& c : cases("allocator.json", "alloc")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t nbytes = c.data.at("nbytes").get<size_t>();
    const size_t alignment = c.data.at("alignment").get<size_t>();
    void* p = reinterpret_cast<void*>(0x1);
    const int32_t rc = slimcuda_device_alloc(nbytes, device_index(c), alignment, &p);
    expect_code(c, rc);
    if (rc != SLIMCUDA_OK) {
      EXPECT_EQ(p, nullptr) << "a failed allocation must clear *out";
      continue;
    }
    if (c.data.value("null", false)) {
      EXPECT_EQ(p, nullptr);
    } else {
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % c.data.at("aligned_to").get<size_t>(), 0u);
      // The memory is real: the whole range can be written and read back.
      const std::vector<uint8_t> in = pattern(nbytes, 3);
      std::vector<uint8_t> out(nbytes);
      EXPECT_EQ(slimcuda_copy_host_to_device(p, in.data(), nbytes, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      EXPECT_EQ(slimcuda_copy_device_to_host(out.data(), p, nbytes, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      EXPECT_TRUE(in == out);
    }
    EXPECT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
  }
}

// A kernel enqueued on a non-blocking caller stream writes the buffer; the D2H copy made
// under the same selection must return the kernel's values. Were the copy not ordered on
// the caller stream it would run at once (the legacy stream does not wait for a
// non-blocking one) and read the zeros written before.
TEST(Allocator, DeviceToHostIsOrderedOnCallerStream) {
  for (const Case& c : cases("allocator.json", "ordering_d2h")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t n = c.data.at("n").get<size_t>();
    const float value = c.data.at("value").get<float>();
    DeviceBytes buf(n * sizeof(float));
    ASSERT_EQ(slimcuda_fill_f32(buf.ptr, n, 0.0f, 0), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_stream_synchronize(nullptr), SLIMCUDA_OK);
    std::vector<float> out(n, -7.0f);
    {
      CaseStream stream("non_blocking");
      ASSERT_EQ(slimcuda_spin(c.data.at("spin_us").get<int64_t>(), 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_fill_f32(buf.ptr, n, value, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), buf.ptr, n * sizeof(float), 0), SLIMCUDA_OK)
          << slimcuda_last_error_message();
    }
    size_t wrong = 0;
    for (float v : out) wrong += (v != value);
    EXPECT_EQ(wrong, 0u) << "the copy did not wait for the kernel on the caller stream (first " << out[0] << ")";
  }
}

// The H2D copy made under the selection must land after a kernel already enqueued on the
// caller stream (which fills the buffer with `value`), so reading back gives the host
// data, not the kernel's value.
TEST(Allocator, HostToDeviceIsOrderedOnCallerStream) {
  for (const Case& c : cases("allocator.json", "ordering_h2d")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t n = c.data.at("n").get<size_t>();
    std::vector<float> in(n), out(n, 0.0f);
    for (size_t i = 0; i < n; ++i) in[i] = 0.25f * static_cast<float>(i % 1000);
    DeviceBytes buf(n * sizeof(float));
    {
      CaseStream stream("non_blocking");
      ASSERT_EQ(slimcuda_spin(c.data.at("spin_us").get<int64_t>(), 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_fill_f32(buf.ptr, n, c.data.at("value").get<float>(), 0), SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_copy_host_to_device(buf.ptr, in.data(), n * sizeof(float), 0), SLIMCUDA_OK)
          << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), buf.ptr, n * sizeof(float), 0), SLIMCUDA_OK);
    }
    EXPECT_TRUE(in == out) << "the kernel ran after the copy (first " << out[0] << ")";
  }
}

TEST(AllocatorRegistry, CpuAndCudaAreRegistered) {
  ASSERT_NE(get_device_allocator(DeviceType::CPU), nullptr);
  ASSERT_NE(get_device_allocator(DeviceType::CUDA), nullptr);
  EXPECT_EQ(get_device_allocator(DeviceType::CPU)->device_type(), DeviceType::CPU);
  EXPECT_EQ(get_device_allocator(DeviceType::CUDA)->device_type(), DeviceType::CUDA);
  EXPECT_EQ(get_device_allocator(static_cast<DeviceType>(7)), nullptr);
  EXPECT_EQ(register_device_allocator(nullptr), nullptr);
}

TEST(AllocatorRegistry, RegisterReplacesAndReturnsPrevious) {
  DeviceAllocator* cpu = get_device_allocator(DeviceType::CPU);
  class Counting final : public DeviceAllocator {
   public:
    Result<void*> allocate(size_t, DeviceIndex, size_t) noexcept override { return Error::NotImplemented; }
    void deallocate(void*, DeviceIndex) noexcept override {}
    Error copy_host_to_device(void*, const void*, size_t, DeviceIndex) noexcept override { return Error::Ok; }
    Error copy_device_to_host(void*, const void*, size_t, DeviceIndex) noexcept override { return Error::Ok; }
    DeviceType device_type() const noexcept override { return DeviceType::CPU; }
  } replacement;
  EXPECT_EQ(register_device_allocator(&replacement), cpu);
  EXPECT_EQ(get_device_allocator(DeviceType::CPU), &replacement);
  EXPECT_EQ(register_device_allocator(cpu), &replacement);
}

TEST(CpuAllocator, AllocAlignCopyFree) {
  DeviceAllocator& cpu = *get_device_allocator(DeviceType::CPU);
  for (size_t alignment : {size_t{0}, size_t{1}, size_t{64}, size_t{4096}}) {
    Result<void*> r = cpu.allocate(100, 0, alignment);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.value()) % (alignment ? alignment : 64), 0u);
    const std::vector<uint8_t> in = pattern(100, 1);
    std::vector<uint8_t> out(100);
    EXPECT_EQ(cpu.copy_host_to_device(r.value(), in.data(), 100, 0), Error::Ok);
    EXPECT_EQ(cpu.copy_device_to_host(out.data(), r.value(), 100, -1), Error::Ok);
    EXPECT_TRUE(in == out);
    cpu.deallocate(r.value(), 0);
  }
  Result<void*> zero = cpu.allocate(0, 0, 0);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero.value(), nullptr);
  EXPECT_EQ(cpu.allocate(8, 0, 48).error(), Error::InvalidArgument);
  EXPECT_EQ(cpu.allocate(8, 1, 0).error(), Error::InvalidArgument);
  EXPECT_EQ(cpu.allocate(SIZE_MAX, 0, 0).error(), Error::MemoryAllocationFailed);
  char b = 0;
  EXPECT_EQ(cpu.copy_host_to_device(nullptr, &b, 0, 0), Error::InvalidArgument);
  EXPECT_EQ(cpu.copy_device_to_host(&b, nullptr, 1, 0), Error::InvalidArgument);
  EXPECT_EQ(cpu.copy_device_to_host(&b, &b, 1, 2), Error::InvalidArgument);
}

}  // namespace
}  // namespace slimcuda::testing

namespace slimcuda::testing {
namespace {

slimcuda_memory_stats stats(int32_t device) {
  slimcuda_memory_stats s{};
  EXPECT_EQ(slimcuda_memory_stats_get(device, &s), SLIMCUDA_OK) << slimcuda_last_error_message();
  return s;
}

TEST(CachingAllocator, WithoutGpu) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is present";
  slimcuda_memory_stats s{};
  EXPECT_EQ(slimcuda_memory_stats_get(0, &s), SLIMCUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(slimcuda_empty_cache(0), SLIMCUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(slimcuda_memory_stats_get(0, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
}

TEST(CachingAllocator, ReusesAFreedBlockOnTheSameStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_EQ(slimcuda_device_alloc(1000, 0, 0, &p), SLIMCUDA_OK);
  const slimcuda_memory_stats before = stats(0);
  ASSERT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_device_alloc(1000, 0, 0, &q), SLIMCUDA_OK);
  EXPECT_EQ(q, p);
  EXPECT_EQ(stats(0).cache_hits, before.cache_hits + 1);
  EXPECT_EQ(slimcuda_device_free(q, 0), SLIMCUDA_OK);
}

// A block freed while a kernel on stream A may still write it is not handed to stream B.
TEST(CachingAllocator, CrossStreamReuseWaitsForTheFirstStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &a), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &b), SLIMCUDA_OK);
  constexpr size_t n = 256 * 1024;  // floats: 1 MiB
  void* p = nullptr;
  ASSERT_EQ(slimcuda_caller_stream_push(a), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_device_alloc(n * 4, 0, 0, &p), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_spin(100000, 0), SLIMCUDA_OK);  // A is busy for 100 ms
  ASSERT_EQ(slimcuda_fill_f32(p, n, 1.0f, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK);  // freed while A will still write it
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);

  ASSERT_EQ(slimcuda_caller_stream_push(b), SLIMCUDA_OK);
  std::vector<void*> mine;
  for (int i = 0; i < 4; ++i) {
    void* q = nullptr;
    ASSERT_EQ(slimcuda_device_alloc(n * 4, 0, 0, &q), SLIMCUDA_OK);
    mine.push_back(q);
  }
  // Under a tool that serialises launches (compute-sanitizer) A has already finished, and
  // reusing its block is then correct; while A is still busy after B's allocations it was
  // busy during them, and none of them may be A's block.
  if (cudaStreamQuery(static_cast<cudaStream_t>(a)) == cudaErrorNotReady) {
    for (void* q : mine) EXPECT_NE(q, p) << "B got memory that A's queued kernel still writes";
  }
  // What B writes into its own blocks survives A's late kernel.
  std::vector<float> out(n);
  ASSERT_EQ(slimcuda_fill_f32(mine[0], n, 2.0f, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_stream_synchronize(a), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), mine[0], n * 4, 0), SLIMCUDA_OK);
  EXPECT_EQ(out, std::vector<float>(n, 2.0f));
  for (void* q : mine) EXPECT_EQ(slimcuda_device_free(q, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_destroy(a), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_destroy(b), SLIMCUDA_OK);
}

// A stream slimcuda did not create: after slimcuda_stream_release its cached blocks belong
// to no stream, so another stream takes them at once (the release waited for the device).
TEST(CachingAllocator, ReleasedForeignStreamHandsItsBlocksOn) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  cudaStream_t foreign = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&foreign, cudaStreamNonBlocking), cudaSuccess);
  void* other = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &other), SLIMCUDA_OK);
  constexpr size_t n = 3 * 1024 * 1024 + 512;  // a size no other test leaves in the cache
  void* p = nullptr;
  ASSERT_EQ(slimcuda_caller_stream_push(foreign), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &p), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_spin(20000, 0), SLIMCUDA_OK);  // the foreign stream is busy for 20 ms
  ASSERT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);

  ASSERT_EQ(slimcuda_stream_release(foreign), SLIMCUDA_OK);
  EXPECT_EQ(cudaStreamQuery(foreign), cudaSuccess) << "release returned before the stream's work was done";
  ASSERT_EQ(cudaStreamDestroy(foreign), cudaSuccess);

  ASSERT_EQ(slimcuda_caller_stream_push(other), SLIMCUDA_OK);
  void* q = nullptr;
  ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &q), SLIMCUDA_OK);
  EXPECT_EQ(q, p) << "the released stream's block should be free for any stream";
  EXPECT_EQ(slimcuda_device_free(q, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_destroy(other), SLIMCUDA_OK);
}

// A pointer freed twice, or pointing inside a block, is refused with InvalidArgument: it
// must never reach cudaFree, which would release a segment the cache still hands out.
TEST(CachingAllocator, DoubleFreeAndInteriorPointersAreRefused) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  constexpr size_t n = 6 * 1024 * 1024;  // its own segment: the block is the segment's base
  void* p = nullptr;
  ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &p), SLIMCUDA_OK);
  const slimcuda_memory_stats in_use = stats(0);
  EXPECT_EQ(slimcuda_device_free(static_cast<char*>(p) + 512, 0), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("not a block in use"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(stats(0).allocated_bytes, in_use.allocated_bytes) << "an interior pointer freed something";
  ASSERT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_ERROR_INVALID_ARGUMENT) << "double free accepted";
  EXPECT_EQ(stats(0).reserved_bytes, in_use.reserved_bytes) << "the double free released the segment";
  // The segment is intact: the cache hands it out again and it holds data.
  void* q = nullptr;
  ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &q), SLIMCUDA_OK);
  EXPECT_EQ(q, p);
  std::vector<float> out(n / 4);
  ASSERT_EQ(slimcuda_fill_f32(q, n / 4, 3.0f, 0), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), q, n, 0), SLIMCUDA_OK);
  EXPECT_EQ(out, std::vector<float>(n / 4, 3.0f));
  ASSERT_EQ(slimcuda_device_free(q, 0), SLIMCUDA_OK);
}

TEST(CachingAllocator, StatsReturnToZeroAfterEverythingIsFreed) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  ASSERT_EQ(slimcuda_empty_cache(0), SLIMCUDA_OK);
  const slimcuda_memory_stats start = stats(0);
  std::vector<void*> blocks;
  for (size_t n : {size_t{1}, size_t{777}, size_t{1} << 20, (size_t{3} << 20) + 5, size_t{64} << 20}) {
    void* p = nullptr;
    ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &p), SLIMCUDA_OK);
    blocks.push_back(p);
  }
  EXPECT_GT(stats(0).allocated_bytes, start.allocated_bytes);
  for (void* p : blocks) EXPECT_EQ(slimcuda_device_free(p, 0), SLIMCUDA_OK);
  EXPECT_EQ(stats(0).allocated_bytes, start.allocated_bytes);
  ASSERT_EQ(slimcuda_empty_cache(0), SLIMCUDA_OK);
  const slimcuda_memory_stats end = stats(0);
  EXPECT_EQ(end.reserved_bytes, end.allocated_bytes) << "only blocks still in use stay reserved";
  EXPECT_GE(end.peak_allocated_bytes, size_t{64} << 20);
}

// Pageable copies from the staging threshold on go through pinned chunks: every byte lands
// where it should, for odd sizes and unaligned offsets, with and without a caller stream,
// and the staged path is really taken (the pinned pool hands out its chunks).
TEST(StagedCopy, PageableRoundTripsOddSizesAndOffsets) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const size_t threshold = staging_threshold();
  ASSERT_GT(threshold, 0u) << "SLIMCUDA_STAGING_THRESHOLD=0 turns the path under test off";
  void* stream = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
  const size_t sizes[] = {threshold - 1, threshold, threshold + 1, (size_t{4} << 20) + 7, (size_t{13} << 20) + 3,
                          size_t{12} << 20};
  for (int with_stream = 0; with_stream < 2; ++with_stream) {
    if (with_stream) {
      ASSERT_EQ(slimcuda_caller_stream_push(stream), SLIMCUDA_OK);
    }
    for (size_t n : sizes) {
      std::vector<uint8_t> host(n + 8), back(n + 8, 0);
      for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>((i * 131 + n) >> 3);
      void* dev = nullptr;
      ASSERT_EQ(slimcuda_device_alloc(n + 512, 0, 0, &dev), SLIMCUDA_OK);
      uint8_t* d = static_cast<uint8_t*>(dev) + 3;
      slimcuda_memory_stats before{}, after{};
      ASSERT_EQ(slimcuda_pinned_memory_stats_get(&before), SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_copy_host_to_device(d, host.data() + 5, n, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(back.data() + 1, d, n, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_pinned_memory_stats_get(&after), SLIMCUDA_OK);
      EXPECT_EQ(std::memcmp(back.data() + 1, host.data() + 5, n), 0) << n << " bytes, stream " << with_stream;
      EXPECT_EQ(back[0], 0) << "wrote before the destination";
      EXPECT_EQ(back[n + 1], 0) << "wrote past the destination";
      if (n >= threshold) {
        EXPECT_GT(after.allocations, before.allocations) << n << " bytes: not staged";
      } else {
        EXPECT_EQ(after.allocations, before.allocations) << n << " bytes: staged below the threshold";
      }
      EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "staging chunks not returned";
      EXPECT_EQ(slimcuda_device_free(dev, 0), SLIMCUDA_OK);
    }
    if (with_stream) {
      ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    }
  }
  EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
}

// The staged copy itself at sizes the policy would send direct (one byte, one chunk and a
// bit), on the legacy default stream.
TEST(StagedCopy, AnySizeThroughTheChunks) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  for (size_t n : {size_t{1}, size_t{7}, size_t{4096}, (size_t{4} << 20) + 1, (size_t{9} << 20) - 5}) {
    std::vector<uint8_t> host(n), back(n, 0);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 7 + 1);
    void* dev = nullptr;
    ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &dev), SLIMCUDA_OK);
    ASSERT_EQ(staged_copy(dev, host.data(), n, true, nullptr, 0), Error::Ok) << slimcuda_last_error_message();
    ASSERT_EQ(staged_copy(back.data(), dev, n, false, nullptr, 0), Error::Ok) << slimcuda_last_error_message();
    EXPECT_EQ(back, host) << n << " bytes";
    EXPECT_EQ(slimcuda_device_free(dev, 0), SLIMCUDA_OK);
  }
}

// Every pipeline shape moves every byte: one buffer (strictly serial), two, more buffers
// than chunks, a last chunk of one byte, one thread and an odd number of threads.
TEST(StagedCopy, EveryPipelineShapeRoundTrips) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  void* stream = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
  constexpr size_t kChunk = size_t{64} << 10;  // the smallest chunk a config may ask for
  const StagingConfig shapes[] = {{kChunk, 1, 1}, {kChunk, 2, 3}, {kChunk, 5, 2}, {kChunk * 4, 3, 7},
                                  {size_t{1} << 20, 16, 4}};
  for (const StagingConfig& shape : shapes) {
    for (size_t n : {size_t{1}, kChunk, kChunk + 1, 7 * kChunk + 13, size_t{3} << 20}) {
      std::vector<uint8_t> host(n), back(n, 0);
      for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 29 + n + shape.buffers);
      void* dev = nullptr;
      ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &dev), SLIMCUDA_OK);
      ASSERT_EQ(staged_copy(dev, host.data(), n, true, stream, 0, shape), Error::Ok) << slimcuda_last_error_message();
      ASSERT_EQ(staged_copy(back.data(), dev, n, false, stream, 0, shape), Error::Ok) << slimcuda_last_error_message();
      EXPECT_EQ(back, host) << n << " bytes, chunk " << shape.chunk_bytes << ", " << shape.buffers << " buffers, "
                            << shape.threads << " threads";
      EXPECT_EQ(slimcuda_device_free(dev, 0), SLIMCUDA_OK);
    }
  }
  EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
}

// Three threads staging at once share the copy threads: nobody's bytes land in another's.
TEST(StagedCopy, ConcurrentCopiesKeepTheirBytes) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  constexpr size_t n = (size_t{24} << 20) + 9;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> host(n), back(n, 0);
      for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(i * 13 + t * 101);
      void* dev = nullptr;
      if (slimcuda_device_alloc(n, 0, 0, &dev) != SLIMCUDA_OK) {
        ++failures;
        return;
      }
      for (int round = 0; round < 3; ++round) {
        if (staged_copy(dev, host.data(), n, true, nullptr, 0) != Error::Ok ||
            staged_copy(back.data(), dev, n, false, nullptr, 0) != Error::Ok || back != host) {
          ++failures;
        }
        std::fill(back.begin(), back.end(), 0);
      }
      if (slimcuda_device_free(dev, 0) != SLIMCUDA_OK) ++failures;
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace slimcuda::testing
