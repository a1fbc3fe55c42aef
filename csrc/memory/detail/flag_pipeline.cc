// SPDX-License-Identifier: Apache-2.0
// The stream-flag pipeline (pipeline.h): staged_copy with StagingConfig::stream_flags.
#include <cuda.h>  // the driver API's types only: its functions come through the runtime

#include <cstring>
#include <vector>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/detail/pipeline.h"
#include "csrc/memory/detail/stream_memops.h"

namespace slimcuda::staging {
namespace {

// This thread's flags in pinned, device-visible memory: per buffer, `ready` (host threads
// -> DMA) and `done` (DMA -> host threads), with a sequence counter that only grows, so a
// flag never has to be reset between copies.
struct ThreadFlags {
  uint32_t* words = nullptr;  // 2 * kMaxStagingBuffers: ready[b], then done[b]
  uint32_t sequence = 0;
  ~ThreadFlags() {
    if (words != nullptr && cudaFreeHost(words) != cudaSuccess) (void)cudaGetLastError();
  }
};

Error thread_flags(ThreadFlags** out) {
  thread_local ThreadFlags flags;
  if (flags.words == nullptr) {
    void* p = nullptr;
    const size_t bytes = 2 * kMaxStagingBuffers * sizeof(uint32_t);
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess) {
      return cuda::allocation_error(cudaGetLastError(), "cudaHostAlloc: staging flags");
    }
    std::memset(p, 0, bytes);
    flags.words = static_cast<uint32_t*>(p);
  }
  *out = &flags;
  return Error::Ok;
}

CUdeviceptr device_address(uint32_t* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));  // pinned memory: one address (UVA)
}

// One copy through this thread's flags: chunk k's sequence value is seq(k), which the copy
// threads store into ready[b] when its memcpy through buffer b is done and the stream writes
// into done[b] when its DMA through b has ended.
class FlagCopy {
 public:
  FlagCopy(char* dst, const char* src, const Chunking& c, int threads, const StreamContext& ctx, ThreadFlags* flags)
      : dst_(dst),
        src_(src),
        c_(c),
        threads_(threads),
        ctx_(ctx),
        ready_(flags->words),
        done_(flags->words + kMaxStagingBuffers),
        base_(flags->sequence) {
    flags->sequence += static_cast<uint32_t>(c.count);
  }

  Error run(bool to_device) {
    // Declared before the pipeline: its destructor waits for every queued slice, and the
    // slices read their gates until they are done.
    std::vector<Gate> gates(c_.count);
    Pipeline pipe;
    SLIMCUDA_RETURN_IF_ERROR(pipe.allocate(c_, ctx_));
    CopyThreads& threads = copy_threads();
    for (uint64_t k = 0; k < c_.count; ++k) {
      SLIMCUDA_RETURN_IF_ERROR(to_device ? upload(k, pipe, gates[k], threads) : download(k, pipe, gates[k], threads));
    }
    if (to_device) {
      // The copy is complete when the last DMA is (the memcpys before each DMA are done).
      SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(ctx_.stream(), ctx_.device()));
    }
    return Error::Ok;  // device to host: Pipeline's destructor waits for the last memcpys
  }

 private:
  uint32_t seq(uint64_t k) const { return base_ + static_cast<uint32_t>(k) + 1; }

  // After a failed enqueue, the DMAs already queued wait only on flags of memcpys already
  // submitted, which the threads will set: the stream drains, then the buffers go back.
  Error fail(const char* what) const {
    const cudaError_t err = cudaGetLastError();
    drain(ctx_.stream());
    return set_last_error(Error::Internal, "%s failed: %s", what, cudaGetErrorString(err));
  }

  // The stream waits until the copy threads are done with buffer b's chunk of `value`.
  bool wait_ready(int b, uint32_t value) const {
    return stream_mem_ops().wait(stream(), device_address(ready_ + b), value, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
  }
  // The stream says the DMA through buffer b of chunk k has ended.
  bool write_done(int b, uint64_t k) const {
    return stream_mem_ops().write(stream(), device_address(done_ + b), seq(k), CU_STREAM_WRITE_VALUE_DEFAULT) ==
           CUDA_SUCCESS;
  }
  CUstream stream() const { return reinterpret_cast<CUstream>(ctx_.stream()); }

  // Host to device: the memcpy into buffer b waits for the DMA of the chunk that used it
  // before; the chunk's DMA waits for its memcpy.
  Error upload(uint64_t k, Pipeline& pipe, Gate& g, CopyThreads& threads) {
    const int b = c_.slot(k);
    char* buffer = pipe.buffer[b];
    if (k >= static_cast<uint64_t>(c_.used)) {
      g.wait = done_ + b;
      g.wait_value = seq(k - c_.used);
    }
    g.flag = ready_ + b;
    g.value = seq(k);
    threads.submit(buffer, src_ + k * c_.chunk, c_.len(k), threads_, &pipe.latch[b], &g);
    if (!wait_ready(b, seq(k))) return fail("cuStreamWaitValue32");
    if (cudaMemcpyAsync(dst_ + k * c_.chunk, buffer, c_.len(k), cudaMemcpyHostToDevice, ctx_.stream()) != cudaSuccess) {
      return fail("cudaMemcpyAsync");
    }
    if (!write_done(b, k)) return fail("cuStreamWriteValue32");
    return Error::Ok;
  }

  // Device to host: the DMA into buffer b waits for the memcpy out of the chunk that used it
  // before; the memcpy of this chunk waits for its DMA.
  Error download(uint64_t k, Pipeline& pipe, Gate& g, CopyThreads& threads) {
    const int b = c_.slot(k);
    char* buffer = pipe.buffer[b];
    if (k >= static_cast<uint64_t>(c_.used) && !wait_ready(b, seq(k - c_.used))) return fail("cuStreamWaitValue32");
    if (cudaMemcpyAsync(buffer, src_ + k * c_.chunk, c_.len(k), cudaMemcpyDeviceToHost, ctx_.stream()) != cudaSuccess) {
      return fail("cudaMemcpyAsync");
    }
    if (!write_done(b, k)) return fail("cuStreamWriteValue32");
    g.wait = done_ + b;
    g.wait_value = seq(k);
    g.flag = ready_ + b;
    g.value = seq(k);
    threads.submit(dst_ + k * c_.chunk, buffer, c_.len(k), threads_, &pipe.latch[b], &g);
    return Error::Ok;
  }

  char* dst_;
  const char* src_;
  const Chunking& c_;
  int threads_;
  const StreamContext& ctx_;
  uint32_t* ready_;
  uint32_t* done_;
  uint32_t base_;  // chunk k's sequence value is base_ + k + 1
};

}  // namespace

Error copy_with_flags(char* dst, const char* src, bool to_device, const Chunking& c, int threads,
                      const StreamContext& ctx) {
  ThreadFlags* flags = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(thread_flags(&flags));
  return FlagCopy(dst, src, c, threads, ctx, flags).run(to_device);
}

}  // namespace slimcuda::staging
