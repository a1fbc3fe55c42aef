// SPDX-License-Identifier: Apache-2.0
#include "csrc/memory/detail/pipeline.h"

#include "csrc/cuda/device.h"
#include "csrc/memory/pinned_pool.h"

namespace slimcuda::staging {

Pipeline::~Pipeline() {
  for (Latch& l : latch) l.wait();
  for (char* b : buffer) pinned_free(b);
}

Error Pipeline::allocate(const Chunking& c, const StreamContext& ctx) {
  for (int i = 0; i < c.used; ++i) {
    void* p = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(pinned_allocate(c.buffer_bytes(), ctx, &p));
    buffer[i] = static_cast<char*>(p);
  }
  return Error::Ok;
}

static_assert(kMaxStagingBuffers < cuda::kThreadEventSlots);
Error events_for(int device, int count, Events* out) {
  for (int i = 0; i < count; ++i) SLIMCUDA_RETURN_IF_ERROR(cuda::thread_event(device, 1 + i, &(*out)[i]));
  return Error::Ok;
}

void drain(cudaStream_t stream) noexcept {
  if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
}

Error fail(cudaError_t err, const char* what, cudaStream_t stream) noexcept {
  (void)cudaGetLastError();
  drain(stream);
  return set_last_error(Error::Internal, "%s: %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace slimcuda::staging
