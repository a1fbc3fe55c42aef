// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <system_error>

#include "csrc/cuda/stream_context.h"
#include "csrc/memory/detail/copy_threads.h"
#include "csrc/memory/staging_config.h"
#include "slimcuda/error.h"
#include "slimcuda/last_error.h"

namespace slimcuda::staging {

// What every staged pipeline shares: how a copy is cut into chunks, the pinned buffers and
// latches of one copy, the events that mark its DMAs' ends, and what a failure does. Then
// the pipelines themselves, one file each: upload_pipeline.cc (events, host to device, for
// staged_copy and staged_upload: what fills a chunk is the one thing that differs, so it is
// a ChunkSource), download_pipeline.cc (events, device to host), flag_pipeline.cc (stream
// flags, both directions).

// A copy of `total` bytes cut into `count` chunks of `chunk` bytes (the last one shorter),
// through `used` pinned buffers: chunk k goes through buffer slot(k).
struct Chunking {
  uint64_t total = 0;
  uint64_t chunk = 0;
  uint64_t count = 0;
  int used = 0;

  Chunking(uint64_t total_bytes, uint64_t chunk_bytes, int buffers)
      : total(total_bytes),
        chunk(chunk_bytes),
        count((total_bytes + chunk_bytes - 1) / chunk_bytes),
        used(static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(buffers), count))) {}
  [[nodiscard]] size_t len(uint64_t k) const { return static_cast<size_t>(std::min(chunk, total - k * chunk)); }
  [[nodiscard]] int slot(uint64_t k) const { return static_cast<int>(k % static_cast<uint64_t>(used)); }
  [[nodiscard]] size_t buffer_bytes() const { return static_cast<size_t>(std::min(chunk, total)); }
};

// The pinned buffers of one copy and their memcpy latches. However the copy ends, the
// queued memcpys finish before the buffers go back to the pool.
struct Pipeline {
  std::array<char*, kMaxStagingBuffers> buffer{};
  std::array<Latch, kMaxStagingBuffers> latch;

  Pipeline() = default;
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;  // the copy threads hold pointers to the latches
  Pipeline& operator=(const Pipeline&) = delete;
  Pipeline(Pipeline&&) = delete;
  Pipeline& operator=(Pipeline&&) = delete;

  // c.used buffers of c.buffer_bytes() from the pinned pool, ordered on ctx.stream().
  [[nodiscard]] Error allocate(const Chunking& c, const StreamContext& ctx);
};

// One event per pinned buffer, marking its DMA's end: this thread's event slots 1.. of
// `device` (cuda::thread_event; slot 0 is wait_for_stream's).
using Events = std::array<cudaEvent_t, kMaxStagingBuffers>;
[[nodiscard]] Error events_for(int device, int count, Events* out);

// After a failed call the DMAs already queued may still use the buffers: waits for the
// stream before they go back to the pool (Pipeline's destructor waits for the memcpys).
void drain(cudaStream_t stream) noexcept;

// A failed CUDA call of an event pipeline: the error cleared, the stream drained, Internal
// with "<what>: <CUDA name>: <CUDA text>" as the message.
[[nodiscard]] Error fail(cudaError_t err, const char* what, cudaStream_t stream) noexcept;

// Runs `body` (a pipeline), turning what the copy threads throw into an error.
template <typename Body>
[[nodiscard]] Error catching(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  } catch (const std::system_error& e) {  // a copy thread could not be started
    return set_last_error(Error::Internal, "%s", e.what());
  }
}

// What puts each chunk of an upload into its pinned buffer.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Fills `buffer` with the `n` destination bytes from offset `lo` on: memcpys queued to
  // the copy threads count down `latch`; work done here returns its error.
  [[nodiscard]] virtual Error fill(uint64_t lo, size_t n, char* buffer, Latch* latch) = 0;
};

// The event pipeline, host to device: up to used - 1 chunks (at least one) are filled while
// the DMAs of earlier ones run; a buffer is refilled once the event of the DMA that read it
// last has passed. Returns when the last DMA is done. Errors: a CUDA call's (fail),
// or the source's (the stream drained first).
[[nodiscard]] Error upload_with_events(char* dst, const Chunking& c, Pipeline& pipe, const Events& events,
                                       ChunkSource& source, cudaStream_t stream);

// The event pipeline, device to host: `used` DMAs in flight; each buffer is emptied by the
// copy threads (`threads` per chunk) as its DMA ends, and refilled by the next DMA once that
// memcpy is done. Returns when `dst` is complete. Errors are staged_copy's.
[[nodiscard]] Error download_with_events(char* dst, const char* src, const Chunking& c, Pipeline& pipe,
                                         const Events& events, int threads, cudaStream_t stream);

// The stream-flag pipeline (StagingConfig::stream_flags), either direction: every chunk's
// DMA is enqueued at once; the GPU and the copy threads (`threads` per chunk) hand the
// pinned buffers back and forth through flags. Returns when the copy is complete. Errors
// are staged_copy's.
[[nodiscard]] Error copy_with_flags(char* dst, const char* src, bool to_device, const Chunking& c, int threads,
                                    const StreamContext& ctx);

}  // namespace slimcuda::staging
