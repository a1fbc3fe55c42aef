// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/vision/nms_cuda.h"

#include <vector>

#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/pinned_pool.h"
#include "csrc/memory/transfer.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/vision/vision_kernels.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

// Device memory from the caching allocator on ctx, freed (stream-ordered) at scope exit.
class DeviceTemp {
 public:
  explicit DeviceTemp(const StreamContext& ctx) noexcept : ctx_(ctx) {}
  ~DeviceTemp() {
    if (ptr_ != nullptr) (void)device_memory::free(ptr_, ctx_.device());
  }
  DeviceTemp(const DeviceTemp&) = delete;  // owns its block
  DeviceTemp& operator=(const DeviceTemp&) = delete;

  Error allocate(size_t bytes) noexcept {
    auto r = device_memory::allocate(bytes, 0, ctx_);
    if (!r.ok()) return r.error();
    ptr_ = r.value();
    return Error::Ok;
  }
  template <typename T>
  [[nodiscard]] T* as(size_t byte_offset = 0) const noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(ptr_) + byte_offset);
  }

 private:
  StreamContext ctx_;
  void* ptr_ = nullptr;
};

// Pinned host memory, returned to the pinned pool at scope exit.
class PinnedTemp {
 public:
  PinnedTemp() noexcept = default;
  ~PinnedTemp() { pinned_free(ptr_); }
  PinnedTemp(const PinnedTemp&) = delete;  // owns its block
  PinnedTemp& operator=(const PinnedTemp&) = delete;
  Error allocate(size_t bytes, const StreamContext& ctx) noexcept { return pinned_allocate(bytes, ctx, &ptr_); }
  [[nodiscard]] char* get() const noexcept { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

constexpr size_t round_up(size_t v) noexcept { return (v + 255) / 256 * 256; }

Error refuse_capture(const StreamContext& ctx) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(ctx.stream(), &status);
  // The legacy stream asked while another stream captures globally: capturing as well.
  const bool capturing =
      err == cudaErrorStreamCaptureImplicit || (err == cudaSuccess && status != cudaStreamCaptureStatusNone);
  if (err != cudaSuccess) (void)cudaGetLastError();
  SLIMCUDA_OP_CHECK(!capturing, Error::NotSupported,
                    "nms: the output size depends on the data (one stream synchronization reads it back), which a "
                    "CUDA graph cannot capture");
  SLIMCUDA_CUDA_TRY(err);
  return Error::Ok;
}

// The greedy pass over the mask rows of the sorted boxes: the original indices kept.
std::vector<int64_t> greedy(const int64_t* order, const uint64_t* mask, int64_t n) {
  const int64_t words = nms_mask_words(n);
  std::vector<uint64_t> removed(static_cast<size_t>(words), 0);
  std::vector<int64_t> keep;
  for (int64_t r = 0; r < n; ++r) {
    if ((removed[r / 64] >> (r % 64)) & 1) continue;
    keep.push_back(order[r]);
    const uint64_t* row = mask + r * words;
    for (int64_t w = r / 64; w < words; ++w) removed[w] |= row[w];
  }
  return keep;
}

}  // namespace

Error nms_cuda(const NmsProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  const int device = ctx.device();
  if (p.n == 0) return new_tensor(ScalarType::Long, DeviceType::CUDA, device, {0}, {1}, ctx, out);
  SLIMCUDA_OP_TRY(refuse_capture(ctx));
  const size_t n = static_cast<size_t>(p.n), words = static_cast<size_t>(nms_mask_words(p.n));
  // One block: keys in/out, order in, then order out and the mask side by side (one readback).
  const size_t keys = round_up(n * 4), order = round_up(n * 8), sorted = round_up(n * 20);
  const size_t readback = round_up(n * 8) + n * words * 8;
  size_t sort_bytes = 0;
  SLIMCUDA_OP_TRY(nms_sort(nullptr, &sort_bytes, nullptr, nullptr, nullptr, nullptr, p.n, ctx.stream()));
  DeviceTemp tmp(ctx);
  const size_t at_keys_out = keys, at_order_in = 2 * keys, at_sorted = at_order_in + order;
  const size_t at_readback = at_sorted + sorted, at_sort = at_readback + round_up(readback);
  SLIMCUDA_OP_TRY(tmp.allocate(at_sort + sort_bytes));
  int64_t* order_out = tmp.as<int64_t>(at_readback);
  uint64_t* mask = tmp.as<uint64_t>(at_readback + round_up(n * 8));
  SLIMCUDA_OP_TRY(launch_nms_keys(p, tmp.as<float>(), tmp.as<int64_t>(at_order_in), ctx.stream()));
  SLIMCUDA_OP_TRY(nms_sort(tmp.as<void>(at_sort), &sort_bytes, tmp.as<float>(), tmp.as<float>(at_keys_out),
                           tmp.as<int64_t>(at_order_in), order_out, p.n, ctx.stream()));
  SLIMCUDA_OP_TRY(launch_nms_mask(p, order_out, tmp.as<float>(at_sorted), mask, ctx.stream()));
  // The one synchronization: the sorted order and the mask, read back into pinned memory.
  PinnedTemp host;
  SLIMCUDA_OP_TRY(host.allocate(readback, ctx));
  SLIMCUDA_OP_TRY(transfer::device_to_host(host.get(), order_out, readback, ctx));
  const std::vector<int64_t> keep = greedy(reinterpret_cast<const int64_t*>(host.get()),
                                           reinterpret_cast<const uint64_t*>(host.get() + round_up(n * 8)), p.n);
  const int64_t kept = static_cast<int64_t>(keep.size());
  SLIMCUDA_OP_TRY(new_tensor(ScalarType::Long, DeviceType::CUDA, device, {kept}, {1}, ctx, out));
  // Enqueued from pageable memory, which CUDA stages before cudaMemcpyAsync returns (keep
  // may go at once): transfer::host_to_device would wait for the copy, a second
  // synchronization.
  SLIMCUDA_CUDA_TRY(cudaMemcpyAsync((*out)->data_ptr(), keep.data(), keep.size() * sizeof(int64_t),
                                    cudaMemcpyHostToDevice, ctx.stream()));
  return Error::Ok;
}

}  // namespace slimcuda::ops
