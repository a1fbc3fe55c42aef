// SPDX-License-Identifier: Apache-2.0
// The allocator registry (CPU and CUDA registered, replacement returns the previous one) and
// the CPU allocator. A unit of its own, linked statically: neither is exported by
// libslimcuda.so.
#include "csrc/memory/device_allocator.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace slimcuda {
namespace {

constexpr StreamContext kCpu = StreamContext::unselected(-1);

std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
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
    Result<void*> allocate(size_t, size_t, const StreamContext&) noexcept override { return Error::NotImplemented; }
    Error deallocate(void*, int) noexcept override { return Error::Ok; }
    Error copy_host_to_device(void*, const void*, size_t, const StreamContext&) noexcept override { return Error::Ok; }
    Error copy_device_to_host(void*, const void*, size_t, const StreamContext&) noexcept override { return Error::Ok; }
    DeviceType device_type() const noexcept override { return DeviceType::CPU; }
  } replacement;
  EXPECT_EQ(register_device_allocator(&replacement), cpu);
  EXPECT_EQ(get_device_allocator(DeviceType::CPU), &replacement);
  EXPECT_EQ(register_device_allocator(cpu), &replacement);
}

TEST(CpuAllocator, AllocAlignCopyFree) {
  DeviceAllocator& cpu = *get_device_allocator(DeviceType::CPU);
  for (size_t alignment : {size_t{0}, size_t{1}, size_t{64}, size_t{4096}}) {
    Result<void*> r = cpu.allocate(100, alignment, kCpu);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.value()) % (alignment ? alignment : 64), 0u);
    const std::vector<uint8_t> in = pattern(100, 1);
    std::vector<uint8_t> out(100);
    EXPECT_EQ(cpu.copy_host_to_device(r.value(), in.data(), 100, kCpu), Error::Ok);
    EXPECT_EQ(cpu.copy_device_to_host(out.data(), r.value(), 100, kCpu), Error::Ok);
    EXPECT_TRUE(in == out);
    EXPECT_EQ(cpu.deallocate(r.value(), -1), Error::Ok);
  }
  Result<void*> zero = cpu.allocate(0, 0, kCpu);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero.value(), nullptr);
  EXPECT_EQ(cpu.allocate(8, 48, kCpu).error(), Error::InvalidArgument);
  EXPECT_EQ(cpu.allocate(SIZE_MAX, 0, kCpu).error(), Error::MemoryAllocationFailed);
  char b = 0;
  EXPECT_EQ(cpu.copy_host_to_device(nullptr, &b, 0, kCpu), Error::InvalidArgument);
  EXPECT_EQ(cpu.copy_device_to_host(&b, nullptr, 1, kCpu), Error::InvalidArgument);
}

}  // namespace
}  // namespace slimcuda
