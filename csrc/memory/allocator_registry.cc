// SPDX-License-Identifier: Apache-2.0
#include <atomic>

#include "csrc/memory/device_allocator.h"

namespace slimcuda {

DeviceAllocator* cpu_allocator() noexcept;   // cpu_allocator.cc
DeviceAllocator* cuda_allocator() noexcept;  // cuda_allocator.cc

namespace {

constexpr int kDeviceTypes = 2;

std::atomic<DeviceAllocator*>* slots() noexcept {
  // Function-local static: ready whenever the first caller arrives, whatever the order of
  // static initialization across translation units.
  static std::atomic<DeviceAllocator*> table[kDeviceTypes] = {{cpu_allocator()}, {cuda_allocator()}};
  return table;
}

int slot_of(DeviceType type) noexcept {
  const int i = static_cast<int>(type);
  return (i >= 0 && i < kDeviceTypes) ? i : -1;
}

}  // namespace

DeviceAllocator* get_device_allocator(DeviceType type) noexcept {
  const int i = slot_of(type);
  return i < 0 ? nullptr : slots()[i].load(std::memory_order_acquire);
}

DeviceAllocator* register_device_allocator(DeviceAllocator* allocator) noexcept {
  if (allocator == nullptr) return nullptr;
  const int i = slot_of(allocator->device_type());
  return i < 0 ? nullptr : slots()[i].exchange(allocator, std::memory_order_acq_rel);
}

}  // namespace slimcuda
