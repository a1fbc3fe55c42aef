// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA histc: the bins' edges computed on the device (from the range given, or from
// the data's min and max reduced by CUB on the device, so that no value comes back to the
// host), the counts by CUB's DeviceHistogram::HistogramRange over those edges, then
// written in the output's dtype. Integer tensors (which ATen's CUDA histc takes and its CPU
// histc refuses) are binned by ATen's CUDA integer rule instead. Plain arguments: no tensor
// types in nvcc's view.

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/sort/row_layout.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

struct HistcLaunch {
  const void* in = nullptr;
  int dtype = 0;          ///< ScalarType code, of the input and the output alike
  bool integral = false;  ///< an integer dtype: ATen's CUDA integer bins over [int_lo, int_hi]
  int es = 0;
  int64_t n = 0;  ///< elements (at most INT32_MAX: CUB's counters are int)
  StridedWalk walk;
  int64_t bins = 0;
  double lo = 0.0, hi = 0.0;
  int64_t int_lo = 0, int_hi = 0;  ///< lo and hi as the integer dtype holds them (integral)
  bool from_data = false;          ///< use the data's min and max instead of lo/hi
  void* hist = nullptr;            ///< [bins], contiguous
};

/// Device scratch bytes launch_histc needs.
[[nodiscard]] Error histc_scratch_bytes(const HistcLaunch& h, size_t* bytes) noexcept;

/// Enqueues histc on `stream` (current device); never synchronizes. A range from the data
/// that is not finite (ATen raises; that would need the values on the host) counts nothing.
[[nodiscard]] Error launch_histc(const HistcLaunch& h, void* scratch, size_t bytes, cudaStream_t stream) noexcept;

}  // namespace slimcuda::ops
