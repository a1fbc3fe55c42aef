// SPDX-License-Identifier: Apache-2.0
// The event pipeline, device to host (pipeline.h): staged_copy's downloads.
#include "csrc/memory/detail/pipeline.h"

namespace slimcuda::staging {

Error download_with_events(char* dst, const char* src, const Chunking& c, Pipeline& pipe, const Events& events,
                           int threads, cudaStream_t stream) {
  auto fail = [&](cudaError_t err, const char* what) { return staging::fail(err, what, stream); };
  // Chunk j's DMA into its buffer, and the event that marks its end.
  auto enqueue = [&](uint64_t j) -> cudaError_t {
    const int b = c.slot(j);
    cudaError_t e = cudaMemcpyAsync(pipe.buffer[b], src + j * c.chunk, c.len(j), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaEventRecord(events[b], stream);
    return e;
  };
  CopyThreads& copy = copy_threads();  // before any DMA: it may throw
  const uint64_t used = static_cast<uint64_t>(c.used);
  for (uint64_t j = 0; j < used; ++j) {
    if (cudaError_t e = enqueue(j); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
  }
  for (uint64_t k = 0; k < c.count; ++k) {
    const int b = c.slot(k);
    if (used == 1 && k > 0) {  // one buffer: strictly one chunk after the other
      pipe.latch[0].wait();
      if (cudaError_t e = enqueue(k); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
    }
    if (cudaError_t e = cudaEventSynchronize(events[b]); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
    copy.submit(dst + k * c.chunk, pipe.buffer[b], c.len(k), threads, &pipe.latch[b]);
    if (used > 1 && k > 0 && k - 1 + used < c.count) {  // refill the previous chunk's buffer
      pipe.latch[c.slot(k - 1)].wait();
      if (cudaError_t e = enqueue(k - 1 + used); e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
    }
  }
  for (int i = 0; i < c.used; ++i) pipe.latch[i].wait();  // the last memcpys: dst complete
  return Error::Ok;
}

}  // namespace slimcuda::staging
