// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA halves of the selection ops: CUB's DeviceSelect picks the nonzero elements' linear
// indices and counts them on the device, CUB's radix sort, scan and flagged select find
// unique's runs, and elementwise kernels write coordinates and gather values. Every launcher
// enqueues on `stream` and never synchronizes; the callers read counts back (select_cuda.cc).
// A launcher given a null scratch pointer only reports the CUB scratch bytes it needs.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "csrc/ops/select/select_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// idx[0..count) = the linear indices of s's nonzero elements, ascending; *count (device
/// memory) = how many.
[[nodiscard]] Error select_nonzero(const NonzeroScan& s, int64_t* idx, int64_t* count, void* scratch,
                                   size_t* scratch_bytes, cudaStream_t stream) noexcept;

/// Rows [0, w.rows) of the coordinates: row k from idx[k] while k < the count (count_host,
/// or *count_device when that is not null: nonzero_static), else w.fill.
[[nodiscard]] Error launch_coords(const CoordsWrite& w, const int64_t* idx, int64_t count_host,
                                  const int64_t* count_device, cudaStream_t stream) noexcept;

/// out[k] = self's element at walk_offset(self_walk, idx[k]) for k < count.
[[nodiscard]] Error launch_take(const Walk& self_walk, const char* self, int es, const int64_t* idx, int64_t count,
                                char* out, cudaStream_t stream) noexcept;

/// Advanced indexing's gather; an index out of range writes zeros (no synchronization can
/// report it).
[[nodiscard]] Error launch_index_gather(const IndexGather& g, cudaStream_t stream) noexcept;

/// unique's device buffers (n elements each unless noted), from one block of the caller's.
struct UniqueBuffers {
  uint64_t* keys = nullptr;
  uint64_t* sorted_keys = nullptr;
  int64_t* pos = nullptr;
  int64_t* sorted_pos = nullptr;  ///< the input position of each element in value order
  int64_t* flags = nullptr;       ///< 1 where a value starts
  int64_t* group = nullptr;       ///< inclusive sum of flags: the value's number + 1
  int64_t* heads = nullptr;       ///< positions (in value order) where each value starts
  int64_t* count = nullptr;       ///< one: how many values
};

struct UniqueScan {
  const char* in = nullptr;
  Walk walk;
  int64_t n = 0;
  int es = 1;
  int dtype = 0;
  bool floating = false;
  bool consecutive = false;  ///< no sort: runs in input order
};

/// Keys, the stable sort (unless consecutive), the run heads, their scan and the count.
[[nodiscard]] Error unique_runs(const UniqueScan& u, const UniqueBuffers& b, void* scratch, size_t* scratch_bytes,
                                cudaStream_t stream) noexcept;

/// With the count known: values[g] (u's dtype), counts[g] (may be null) for g < groups, and
/// inverse (self's shape, contiguous; may be null) for every element.
[[nodiscard]] Error unique_outputs(const UniqueScan& u, const UniqueBuffers& b, int64_t groups, char* values,
                                   int64_t* inverse, int64_t* counts, cudaStream_t stream) noexcept;

/// CUB's radix sort of (key, value) pairs by bits [0, end_bit) of the keys, stable: unique's
/// one instantiation of it (unique_kernels.cu), which unique_dim's passes share.
[[nodiscard]] Error radix_sort_pairs(void* scratch, size_t* scratch_bytes, const uint64_t* keys_in, uint64_t* keys_out,
                                     const int64_t* values_in, int64_t* values_out, int64_t n, int end_bit,
                                     cudaStream_t stream) noexcept;

/// unique_dim's device buffers (slices elements each unless noted).
struct SliceBuffers {
  int64_t* order = nullptr;      ///< slice numbers in value order
  int64_t* order_alt = nullptr;  ///< the sort passes' other order buffer
  uint64_t* keys = nullptr;      ///< one sort pass's keys
  uint64_t* sorted_keys = nullptr;
  int64_t* flags = nullptr;  ///< 1 where a distinct slice starts
  int64_t* group = nullptr;  ///< inclusive sum of flags
  int64_t* heads = nullptr;  ///< positions (in value order) where each distinct slice starts
  int64_t* count = nullptr;  ///< one: how many distinct slices
};

/// The slices' order (slice_less's, unless consecutive: stable radix sorts of their numbers,
/// least significant columns first, each pass keyed on as many columns as fit in 64 bits),
/// the heads of equal runs, their scan and the count.
[[nodiscard]] Error unique_slice_runs(const SliceScan& s, const SliceBuffers& b, void* scratch, size_t* scratch_bytes,
                                      cudaStream_t stream) noexcept;

/// With the count known: the distinct slices into `values` (slice g at g * out_step, its
/// elements walking out_rest), counts (may be null), inverse (may be null).
[[nodiscard]] Error unique_slice_outputs(const SliceScan& s, const SliceBuffers& b, int64_t groups, char* values,
                                         int64_t out_step, const Walk& out_rest, int64_t* inverse, int64_t* counts,
                                         cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
