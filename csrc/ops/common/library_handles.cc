// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/common/library_handles.h"

#include <mutex>
#include <vector>

#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

// Free handles by device, shared by all threads; a thread leases one per device.
template <typename H>
class Pool {
 public:
  bool take(int device, H* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<size_t>(device) >= free_.size() || free_[device].empty()) return false;
    *out = free_[device].back();
    free_[device].pop_back();
    return true;
  }
  void give(int device, H h) {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<size_t>(device) >= free_.size()) free_.resize(device + 1);
    free_[device].push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<std::vector<H>> free_;
};

template <typename H>
Pool<H>& pool() {
  static auto* p = new Pool<H>();  // never destroyed: threads may exit after static destructors
  return *p;
}

// One thread's leases; returned to the pool when the thread exits.
template <typename H>
struct Leases {
  std::vector<H> by_device;
  ~Leases() {
    for (size_t d = 0; d < by_device.size(); ++d)
      if (by_device[d] != nullptr) pool<H>().give(static_cast<int>(d), by_device[d]);
  }
};

}  // namespace

Error cublaslt_handle(const cuda_libs::CublasLtApi& api, int device, cublasLtHandle_t* out) noexcept {
  thread_local Leases<cublasLtHandle_t> leases;
  try {
    if (static_cast<size_t>(device) >= leases.by_device.size()) leases.by_device.resize(device + 1, nullptr);
  } catch (...) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
  cublasLtHandle_t& h = leases.by_device[device];
  if (h == nullptr && !pool<cublasLtHandle_t>().take(device, &h)) {
    const cublasStatus_t st = api.cublasLtCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) {
      h = nullptr;
      return set_last_error(Error::Internal, "cublasLtCreate failed on cuda:%d: %s", device,
                            api.cublasLtGetStatusString(st));
    }
  }
  *out = h;
  return Error::Ok;
}

Error cudnn_handle(const cuda_libs::CudnnApi& api, int device, cudaStream_t stream, cudnnHandle_t* out) noexcept {
  thread_local Leases<cudnnHandle_t> leases;
  try {
    if (static_cast<size_t>(device) >= leases.by_device.size()) leases.by_device.resize(device + 1, nullptr);
  } catch (...) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
  cudnnHandle_t& h = leases.by_device[device];
  if (h == nullptr && !pool<cudnnHandle_t>().take(device, &h)) {
    const cudnnStatus_t st = api.cudnnCreate(&h);
    if (st != CUDNN_STATUS_SUCCESS) {
      h = nullptr;
      return set_last_error(Error::Internal, "cudnnCreate failed on cuda:%d: %s", device, api.cudnnGetErrorString(st));
    }
  }
  const cudnnStatus_t st = api.cudnnSetStream(h, stream);
  if (st != CUDNN_STATUS_SUCCESS) {
    return set_last_error(Error::Internal, "cudnnSetStream failed: %s", api.cudnnGetErrorString(st));
  }
  *out = h;
  return Error::Ok;
}

}  // namespace slimcuda::ops
