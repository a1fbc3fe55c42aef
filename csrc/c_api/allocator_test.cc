// SPDX-License-Identifier: Apache-2.0
// The CUDA allocator through the C ABI, from testdata/allocator.json (the Go suite
// go/slimcuda/buffer_test.go runs the same cases), plus C++-only checks of the caching
// pool's stream rules.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "csrc/testing/spin.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("allocator.json");

// Keeps this thread's caller stream (the legacy default stream when none is selected)
// busy for `microseconds`.
int32_t spin_caller_stream(int64_t microseconds) {
  void* stream = nullptr;
  int32_t selected = 0;
  const int32_t rc = slimcuda_caller_stream_get(&stream, &selected);
  return rc != SLIMCUDA_OK ? rc : slimcuda_testing_spin(microseconds, stream);
}

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
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
      ASSERT_EQ(spin_caller_stream(c.data.at("spin_us").get<int64_t>()), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_fill_f32(buf.ptr, n, value, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), buf.ptr, n * sizeof(float), 0), SLIMCUDA_OK)
          << slimcuda_last_error_message();
    }
    size_t wrong = 0;
    for (float v : out) wrong += (v != value);
    EXPECT_EQ(wrong, 0u) << "the copy did not wait for the kernel on the caller stream (first " << out[0] << ")";
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
      ASSERT_EQ(spin_caller_stream(c.data.at("spin_us").get<int64_t>()), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_fill_f32(buf.ptr, n, c.data.at("value").get<float>(), 0), SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_copy_host_to_device(buf.ptr, in.data(), n * sizeof(float), 0), SLIMCUDA_OK)
          << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_copy_device_to_host(out.data(), buf.ptr, n * sizeof(float), 0), SLIMCUDA_OK);
    }
    EXPECT_TRUE(in == out) << "the kernel ran after the copy (first " << out[0] << ")";
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
  SLIMCUDA_SKIP_WITH_A_GPU();
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
  ASSERT_EQ(spin_caller_stream(100000), SLIMCUDA_OK);  // A is busy for 100 ms
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
  ASSERT_EQ(spin_caller_stream(20000), SLIMCUDA_OK);  // the foreign stream is busy for 20 ms
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

// A stream slimcuda did not create, destroyed without slimcuda_stream_release: nothing the
// allocator does later touches it (on the H200, 2026-12-01, the next allocation on another
// stream recorded a marker on the destroyed stream and crashed inside the driver: the
// attention and constants tests' streams did this). Device and pinned blocks alike.
TEST(CachingAllocator, ForeignStreamDestroyedWithoutReleaseIsNeverTouched) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  void* other = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &other), SLIMCUDA_OK);
  const std::vector<size_t> sizes = {512, 70000, 1u << 20, (5u << 20) + 512};
  const std::vector<char> host(sizes.back(), 1);
  for (int round = 0; round < 3; ++round) {
    cudaStream_t foreign = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&foreign, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(slimcuda_caller_stream_push(foreign), SLIMCUDA_OK);
    for (size_t n : sizes) {  // a pageable copy of >= 1 MiB stages through pinned blocks
      void* d = nullptr;
      ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &d), SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_copy_host_to_device(d, host.data(), n, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
      ASSERT_EQ(slimcuda_device_free(d, 0), SLIMCUDA_OK);
    }
    ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    ASSERT_EQ(cudaStreamSynchronize(foreign), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(foreign), cudaSuccess);  // no slimcuda_stream_release

    // Another stream wants exactly those sizes, over and over: the foreign stream's cached
    // blocks are the first candidates.
    ASSERT_EQ(slimcuda_caller_stream_push(other), SLIMCUDA_OK);
    for (int i = 0; i < 4; ++i) {
      for (size_t n : sizes) {
        void* d = nullptr;
        ASSERT_EQ(slimcuda_device_alloc(n, 0, 0, &d), SLIMCUDA_OK) << slimcuda_last_error_message();
        ASSERT_EQ(slimcuda_copy_host_to_device(d, host.data(), n, 0), SLIMCUDA_OK) << slimcuda_last_error_message();
        ASSERT_EQ(slimcuda_device_free(d, 0), SLIMCUDA_OK);
      }
    }
    ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
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

}  // namespace
}  // namespace slimcuda::testing
