// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/weights_cache.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <new>
#include <system_error>
#include <thread>

#include "csrc/cuda/device.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

DeviceWeights::DeviceWeights(std::shared_ptr<Storage> memory, std::vector<std::string> names,
                             std::vector<std::unique_ptr<SlimTensor>> tensors) noexcept
    : memory_(std::move(memory)), names_(std::move(names)), tensors_(std::move(tensors)) {
  if (memory_) device_ = memory_->device();
}

DeviceWeights::~DeviceWeights() {
  tensors_.clear();  // views of memory_, which they do not own
  if (memory_ && device_.is_cuda() && memory_->data() != nullptr) {
    // Runs on callers' streams may still read the weights; the caching allocator would hand
    // the block out again at once on the stream it was allocated on. Not while another
    // thread captures a graph (the synchronize would invalidate its capture): a capture is
    // one model run, so wait for it to end.
    while (!cuda::synchronize_device_outside_captures(device_.index)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  memory_.reset();
}

WeightsCache& WeightsCache::instance() noexcept {
  static WeightsCache* cache = new WeightsCache();
  return *cache;
}

Error WeightsCache::get_or_upload(const std::string& key, const Upload& upload, std::shared_ptr<DeviceWeights>* out,
                                  bool* shared) noexcept {
  try {
    *shared = false;
    if (key.empty()) return upload(out);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      Slot& slot = slots_[key];
      if (std::shared_ptr<DeviceWeights> live = slot.weights.lock()) {
        *out = std::move(live);
        *shared = true;
        return Error::Ok;
      }
      if (!slot.uploading) break;
      done_.wait(lock);  // another load of this model is uploading: share its result
    }
    slots_[key].uploading = true;
    lock.unlock();
    std::shared_ptr<DeviceWeights> fresh;
    Error e = Error::Internal;
    try {
      e = upload(&fresh);
    } catch (...) {
      lock.lock();
      slots_[key].uploading = false;
      done_.notify_all();
      throw;
    }
    lock.lock();
    Slot& slot = slots_[key];
    slot.uploading = false;
    if (e == Error::Ok) slot.weights = fresh;
    // Drop slots whose weights are gone (and not being uploaded), so the map stays small.
    for (auto it = slots_.begin(); it != slots_.end();) {
      it = (!it->second.uploading && it->second.weights.expired() && it->first != key) ? slots_.erase(it) : ++it;
    }
    if (e != Error::Ok) slots_.erase(key);
    done_.notify_all();
    lock.unlock();
    if (e == Error::Ok) *out = std::move(fresh);
    return e;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  } catch (const std::system_error& e) {
    return set_last_error(Error::Internal, "%s", e.what());
  }
}

size_t WeightsCache::live() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.weights.expired() ? 0 : 1;
  return n;
}

}  // namespace slimcuda
