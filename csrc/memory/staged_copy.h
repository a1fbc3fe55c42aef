// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/memory/staging_config.h"
#include "slimcuda/error.h"

namespace slimcuda {

// Copies between pageable host memory and device memory through pinned chunks.
//
// A cudaMemcpy from ordinary (pageable) memory runs at a fraction of the link's speed: the
// driver copies through its own small staging buffer on one thread. Here the copy is cut
// into chunks; while the DMA of chunk k runs, host threads memcpy the next chunks into
// their pinned buffers (host to device), or out of the previous ones (device to host),
// without a barrier between chunks: the next chunk's memcpy is queued before the current
// one is done, so the threads never wait for the thread that enqueues DMAs. The DMAs are
// enqueued on `stream` (the caller stream, or the legacy default stream) and the call
// returns when the whole copy is done: the blocking contract of slimcuda's copies.

/// The staged copy itself, host to device or device to host, for any size and alignment, on
/// ctx.device() (already current) and ctx.stream() (nullptr: the legacy default stream),
/// with `config` (clamped to sane limits; staging_config() by default). Returns when the
/// copy is complete.
[[nodiscard]] Error staged_copy(void* dst, const void* src, size_t nbytes, bool to_device, const StreamContext& ctx,
                                const StagingConfig& config) noexcept;

/// One piece of a staged upload (staged_upload): `nbytes` bytes that land at `dst_offset`
/// of the destination, taken from host memory (`host`, read by the copy threads) or, where
/// the bytes are not in memory, written into the pinned chunk by `read(reader, offset, n,
/// chunk)` on the calling thread (`offset` counts from `read_offset`). `read` must fill all
/// `n` bytes or return an error.
struct UploadPiece {
  uint64_t dst_offset = 0;
  uint64_t nbytes = 0;
  const void* host = nullptr;
  const void* reader = nullptr;
  Error (*read)(const void* reader, uint64_t offset, size_t n, void* dst) noexcept = nullptr;
  uint64_t read_offset = 0;
};

/// Uploads many host pieces into one device range [dst, dst + total) through pinned chunks:
/// the range is cut into chunks of config.chunk_bytes; while chunk k's one DMA runs, the
/// next chunks are filled from the pieces that fall in them (the gaps between pieces are
/// zeroed), so a model's thousands of small constants cost one DMA per chunk, not one per
/// constant. Nothing holds more than `buffers` chunks of host memory; sizes are 64-bit.
/// `pieces` are sorted by dst_offset, do not overlap and end within `total`
/// (InvalidArgument otherwise, checked before anything is enqueued). DMAs go on
/// ctx.stream() of ctx.device() (made current here); returns when the upload is complete,
/// or with the first error (read's, or CUDA's as Internal) once nothing it enqueued still
/// uses the pinned chunks.
[[nodiscard]] Error staged_upload(void* dst, uint64_t total, const UploadPiece* pieces, size_t count,
                                  const StreamContext& ctx, const StagingConfig& config) noexcept;

/// Whether this process can run the stream-flag pipeline (the driver's stream memory
/// operations are there and the device supports them).
[[nodiscard]] bool stream_flags_available(int device) noexcept;

}  // namespace slimcuda
