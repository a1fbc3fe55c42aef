// SPDX-License-Identifier: Apache-2.0
// device_memory's private pools and stream routes, what CUDA graphs stand on: a routed
// stream's allocations come from the pool and nowhere else, a capturing pool takes no new
// segment (a cudaMalloc would break the capture) and says so, and free() finds its blocks.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "csrc/memory/device_memory.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

TEST(PrivatePool, RoutesCapturesAndFrees) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  cudaStream_t routed = nullptr, other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&routed, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  {
    std::unique_ptr<device_memory::PrivatePool> pool;
    ASSERT_EQ(device_memory::PrivatePool::create(0, &pool), Error::Ok);
    const StreamContext on_routed = StreamContext::selected(routed, 0), on_other = StreamContext::selected(other, 0);
    device_memory::StreamRoute route(routed, pool.get());
    ASSERT_EQ(route.error(), Error::Ok);
    {
      device_memory::StreamRoute twice(routed, pool.get());
      EXPECT_EQ(twice.error(), Error::InvalidArgument) << "one route per stream";
    }

    Result<void*> a = device_memory::allocate(1 << 20, 0, on_routed);
    ASSERT_TRUE(a.ok()) << last_error_message();
    EXPECT_EQ(pool->stats().allocations, 1u);
    Result<void*> elsewhere = device_memory::allocate(1 << 20, 0, on_other);
    ASSERT_TRUE(elsewhere.ok());
    EXPECT_EQ(pool->stats().allocations, 1u) << "another stream's memory is not the pool's";
    EXPECT_EQ(device_memory::free(elsewhere.value(), 0), Error::Ok);

    pool->set_capturing(true);
    Result<void*> small = device_memory::allocate(4096, 0, on_routed);  // fits a segment the pool holds
    ASSERT_TRUE(small.ok()) << last_error_message();
    const uint64_t segments = pool->stats().segments;
    Result<void*> big = device_memory::allocate(size_t{64} << 20, 0, on_routed);
    EXPECT_FALSE(big.ok());
    EXPECT_EQ(big.error(), Error::MemoryAllocationFailed);
    EXPECT_NE(std::string(last_error_message()).find("while capturing"), std::string::npos) << last_error_message();
    EXPECT_EQ(pool->stats().segments, segments) << "no segment taken while capturing";
    pool->set_capturing(false);
    Result<void*> later = device_memory::allocate(size_t{64} << 20, 0, on_routed);
    ASSERT_TRUE(later.ok()) << last_error_message();
    EXPECT_GT(pool->stats().segments, segments);

    for (void* p : {a.value(), small.value(), later.value()}) EXPECT_EQ(device_memory::free(p, 0), Error::Ok);
    EXPECT_EQ(pool->stats().allocated_bytes, 0u);
    EXPECT_EQ(device_memory::free(a.value(), 0), Error::InvalidArgument) << "freed twice";
  }
  // Pool and route gone: the stream allocates from the shared cache again.
  Result<void*> after = device_memory::allocate(4096, 0, StreamContext::selected(routed, 0));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(device_memory::free(after.value(), 0), Error::Ok);
  device_memory::retire_stream(routed);
  device_memory::retire_stream(other);
  EXPECT_EQ(cudaStreamDestroy(routed), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(other), cudaSuccess);
}

}  // namespace
}  // namespace slimcuda::testing
