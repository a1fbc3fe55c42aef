// SPDX-License-Identifier: Apache-2.0
// The event pipeline, host to device (pipeline.h): staged_copy's uploads and staged_upload's.
#include <algorithm>

#include "csrc/memory/detail/pipeline.h"

namespace slimcuda::staging {

Error upload_with_events(char* dst, const Chunking& c, Pipeline& pipe, const Events& events, ChunkSource& source,
                         cudaStream_t stream) {
  // Fills chunk j's buffer once the DMA that read it last is done.
  auto fill = [&](uint64_t j) -> Error {
    const int b = c.slot(j);
    if (j >= static_cast<uint64_t>(c.used)) {
      if (cudaError_t e = cudaEventSynchronize(events[b]); e != cudaSuccess) {
        return fail(e, "cudaEventSynchronize", stream);
      }
    }
    if (const Error e = source.fill(j * c.chunk, c.len(j), pipe.buffer[b], &pipe.latch[b]); e != Error::Ok) {
      drain(stream);
      return e;
    }
    return Error::Ok;
  };
  // Up to `ahead` chunks are being filled while the DMAs of earlier ones run.
  const uint64_t ahead = static_cast<uint64_t>(std::max(1, c.used - 1));
  for (uint64_t j = 0; j < std::min(ahead, c.count); ++j) SLIMCUDA_RETURN_IF_ERROR(fill(j));
  for (uint64_t k = 0; k < c.count; ++k) {
    const int b = c.slot(k);
    pipe.latch[b].wait();
    if (cudaError_t e = cudaMemcpyAsync(dst + k * c.chunk, pipe.buffer[b], c.len(k), cudaMemcpyHostToDevice, stream);
        e != cudaSuccess) {
      return fail(e, "cudaMemcpyAsync", stream);
    }
    if (cudaError_t e = cudaEventRecord(events[b], stream); e != cudaSuccess) {
      return fail(e, "cudaEventRecord", stream);
    }
    if (k + ahead < c.count) SLIMCUDA_RETURN_IF_ERROR(fill(k + ahead));
  }
  if (cudaError_t e = cudaEventSynchronize(events[c.slot(c.count - 1)]); e != cudaSuccess) {
    return fail(e, "cudaEventSynchronize", stream);
  }
  return Error::Ok;
}

}  // namespace slimcuda::staging
