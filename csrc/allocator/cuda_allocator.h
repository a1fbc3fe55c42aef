#pragma once

#include "csrc/allocator/block_pool.h"
#include "slimcuda/error.h"

namespace slimcuda {

// The CUDA allocator caches device memory per GPU (BlockPool) unless the environment sets
// SLIMCUDA_CACHING_ALLOCATOR=0 when the library loads. Requests with alignment above 256
// bytes bypass the cache.

/// The caching statistics of device `device_index` (-1: current); zeros before its first
/// allocation or with caching off.
[[nodiscard]] Error cuda_memory_stats(int device_index, PoolStats* out) noexcept;

/// Returns the cached, unused memory of device `device_index` to CUDA (after waiting for
/// the device).
[[nodiscard]] Error cuda_empty_cache(int device_index) noexcept;

/// Call before destroying a stream that device memory was allocated on (see
/// BlockPool::retire_stream). slimcuda's own streams do.
void cuda_retire_stream(void* stream) noexcept;

/// The checked free of the C API's fast path: when `ptr` is a block of device `device`'s
/// pool it is freed (*freed = true) without asking the driver what it is; a block of
/// another device's pool, or a pointer into cached memory that is no block in use (freed
/// twice, or inside a block), is InvalidArgument (nothing freed); anything else is left
/// for the caller to check and free (*freed = false).
[[nodiscard]] Error cuda_free_checked(void* ptr, int device, bool* freed) noexcept;

/// Whether the cache is on in this process.
[[nodiscard]] bool cuda_caching_enabled() noexcept;

}  // namespace slimcuda
