// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// One model's constants on one device: one allocation holding them all and one tensor per
/// constant viewing it (each over a borrowed, non-owning storage of exactly its own bytes,
/// so a container that asks a constant's storage size gets that constant's, and a handle
/// copy the container never deletes holds no memory). What the
/// container's user-managed constants point at; freed with the last reference, after
/// waiting for the device (a run on a caller's stream may still read them: the same wait
/// cudaFree would make for weights the container owned).
///
/// Thread safety: immutable once built; share it by shared_ptr.
class DeviceWeights {
 public:
  DeviceWeights(std::shared_ptr<Storage> memory, std::vector<std::string> names,
                std::vector<std::unique_ptr<SlimTensor>> tensors) noexcept;
  ~DeviceWeights();
  // The container holds raw pointers to the tensors: they stay where they were made.
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;
  DeviceWeights(DeviceWeights&&) = delete;
  DeviceWeights& operator=(DeviceWeights&&) = delete;

  [[nodiscard]] size_t count() const noexcept { return tensors_.size(); }
  /// The container's name of constant i and its tensor.
  [[nodiscard]] const std::string& name(size_t i) const noexcept { return names_[i]; }
  [[nodiscard]] SlimTensor* tensor(size_t i) const noexcept { return tensors_[i].get(); }
  [[nodiscard]] uint64_t bytes() const noexcept { return memory_ ? memory_->nbytes() : 0; }
  /// The one allocation holding every constant (nullptr when it holds no bytes).
  [[nodiscard]] void* data() const noexcept { return memory_ ? memory_->data() : nullptr; }
  [[nodiscard]] Device device() const noexcept { return device_; }
  /// Whether `p` points into the weights' memory (a tensor aliasing a constant).
  [[nodiscard]] bool contains(const void* p) const noexcept {
    const char* base = memory_ ? static_cast<const char*>(memory_->data()) : nullptr;
    return base != nullptr && p != nullptr && static_cast<const char*>(p) >= base &&
           static_cast<const char*>(p) < base + memory_->nbytes();
  }

 private:
  std::shared_ptr<Storage> memory_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<SlimTensor>> tensors_;
  Device device_;
};

/// The process's uploaded weights, keyed by (model identity, constants' identities, device):
/// loads of one model on one GPU get the same DeviceWeights. Entries do not keep weights
/// alive (the models do); a key whose weights are gone uploads again.
///
/// Thread safety: any number of threads at once. Concurrent requests for one key upload
/// once: the first runs `upload`, the others wait for it and share its result (if it
/// fails, the next waiter tries itself). Different keys upload in parallel.
class WeightsCache {
 public:
  using Upload = std::function<Error(std::shared_ptr<DeviceWeights>*)>;

  /// The process's cache (never destroyed: models may be freed at exit).
  [[nodiscard]] static WeightsCache& instance() noexcept;

  /// The weights for `key`, uploaded by `upload` unless live ones exist (*shared says
  /// which). An empty key is never cached: `upload` always runs.
  [[nodiscard]] Error get_or_upload(const std::string& key, const Upload& upload, std::shared_ptr<DeviceWeights>* out,
                                    bool* shared) noexcept;

  /// Live weights in the cache (tests).
  [[nodiscard]] size_t live() noexcept;

  WeightsCache() = default;
  // One per process, found through instance().
  WeightsCache(const WeightsCache&) = delete;
  WeightsCache& operator=(const WeightsCache&) = delete;
  WeightsCache(WeightsCache&&) = delete;
  WeightsCache& operator=(WeightsCache&&) = delete;

 private:
  struct Slot {
    std::weak_ptr<DeviceWeights> weights;
    bool uploading = false;
  };
  std::mutex mu_;
  std::condition_variable done_;
  std::map<std::string, Slot> slots_;
};

}  // namespace slimcuda
