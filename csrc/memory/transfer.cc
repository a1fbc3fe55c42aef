// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/transfer.h"

#include <cuda_runtime_api.h>

#include <mutex>

#include "csrc/core/limits.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/staged_copy.h"

namespace slimcuda::transfer {
namespace {

// Pageable (neither pinned by CUDA nor device memory). Asked only for copies big enough to
// stage: the query costs about a microsecond.
bool is_pageable(const void* host) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, host) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeUnregistered;
}

Error host_copy(void* dst, const void* src, size_t nbytes, bool to_device, const StreamContext& ctx) {
  if (nbytes == 0) return Error::Ok;
  cuda::DeviceGuard guard(ctx.device());
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  if (should_stage(nbytes) && is_pageable(to_device ? src : dst)) {
    return staged_copy(dst, src, nbytes, to_device, ctx, staging_config());
  }
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (!ctx.is_selected()) {
    SLIMCUDA_CUDA_TRY(cudaMemcpy(dst, src, nbytes, kind));
    return Error::Ok;
  }
  // Ordered after the work already on the caller's stream; the wait covers this copy only,
  // so the host buffer is free to reuse when we return.
  SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, kind, ctx.stream()));
  return cuda::wait_for_stream(ctx.stream(), ctx.device());
}

// Peer access between every pair that allows it, enabled once (a peer copy then goes
// directly between the GPUs instead of through host memory).
void enable_peer_access(int from, int to) {
  static std::once_flag flags[16][16];
  if (from >= 16 || to >= 16) return;  // beyond 16 GPUs the driver decides alone
  std::call_once(flags[from][to], [&] {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || !can) {
      (void)cudaGetLastError();
      return;
    }
    cuda::DeviceGuard guard(from);
    const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err != cudaSuccess) (void)cudaGetLastError();  // already enabled: fine
  });
}

}  // namespace

Error host_to_device(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept {
  return host_copy(dst, src, nbytes, true, ctx);
}

Error device_to_host(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept {
  return host_copy(dst, src, nbytes, false, ctx);
}

Error device_to_device(void* dst, const void* src, size_t nbytes, const StreamContext& ctx) noexcept {
  if (nbytes == 0) return Error::Ok;
  cuda::DeviceGuard guard(ctx.device());
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, ctx.stream()));
  return Error::Ok;
}

Error internal_stream(int device, cudaStream_t* out) noexcept {
  static std::mutex mu;
  static cudaStream_t streams[kMaxDevices] = {};  // never destroyed: blocks in the caches may name them
  SLIMCUDA_CHECK_OR_RETURN(device >= 0 && device < kMaxDevices, Error::InvalidArgument, "device %d", device);
  std::lock_guard<std::mutex> lock(mu);
  if (streams[device] == nullptr) {
    cuda::DeviceGuard guard(device);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_CUDA_TRY(cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking));
  }
  *out = streams[device];
  return Error::Ok;
}

Error peer_async(void* dst, int dst_device, const void* src, int src_device, size_t nbytes,
                 cudaStream_t stream) noexcept {
  if (nbytes == 0) return Error::Ok;
  enable_peer_access(dst_device, src_device);
  cuda::DeviceGuard guard(dst_device);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes, stream));
  return Error::Ok;
}

Scratch::~Scratch() {
  if (ptr_ != nullptr) (void)device_memory::free(ptr_, ctx_.device());  // stream-ordered: no wait
}

Error Scratch::allocate(size_t nbytes) noexcept {
  Result<void*> r = device_memory::allocate(nbytes, 0, ctx_);
  if (!r.ok())
    return set_last_error(r.error(), "temporary device buffer of %zu bytes: %s", nbytes, last_error_message());
  ptr_ = r.value();
  return Error::Ok;
}

}  // namespace slimcuda::transfer
