// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/sort/histc_edges.h"
#include "csrc/ops/sort/histc_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;

struct Range {
  double lo, hi;
};

// An integer tensor's bounds, exact for every int64 (a double's are not past 2^53).
struct IntRange {
  int64_t lo, hi;
};

// Element i (row-major) as double.
struct LoadValue {
  const char* in;
  int dtype, es;
  StridedWalk walk;
  __host__ __device__ double operator()(int64_t i) const {
    return convert::load(in + walk_offset(walk, i) * es, dtype).f;
  }
};

struct LoadRange {
  LoadValue load;
  __host__ __device__ Range operator()(int64_t i) const {
    const double v = load(i);
    return Range{v, v};
  }
};

struct LoadIntRange {
  const char* in;
  int dtype, es;
  StridedWalk walk;
  __host__ __device__ IntRange operator()(int64_t i) const {
    const int64_t v = convert::load(in + walk_offset(walk, i) * es, dtype).i;
    return IntRange{v, v};
  }
};

struct MinMaxInt {
  __host__ __device__ IntRange operator()(const IntRange& a, const IntRange& b) const {
    return IntRange{a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};

// min and max, a NaN on either side making both NaN (as ATen's aminmax propagates it).
struct MinMax {
  __host__ __device__ Range operator()(const Range& a, const Range& b) const {
    if (a.lo != a.lo || b.lo != b.lo) {
      const double nan = a.lo != a.lo ? a.lo : b.lo;
      return Range{nan, nan};
    }
    return Range{a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};

// levels[0..bins]: the bins' edges, the last one moved just above max so that CUB's
// half-open last bin holds max, as histc's closed one does. A range that is not finite
// gives NaN levels: no sample compares inside them, nothing is counted.
__global__ void histc_levels(const Range* from_data, double lo, double hi, int64_t bins, int dtype, double* levels) {
  if (from_data != nullptr) lo = from_data->lo, hi = from_data->hi;
  const bool finite = histc_range(&lo, &hi);
  for (int64_t i = threadIdx.x; i <= bins; i += blockDim.x) {
    if (!finite) {
      levels[i] = __longlong_as_double(0x7ff8000000000000ll);
      continue;
    }
    const double e = histc_edge(lo, hi, bins, i, dtype);
    levels[i] = i == bins ? nextafter(e, __longlong_as_double(0x7ff0000000000000ll)) : e;
  }
}

__global__ void write_counts(const int* counts, int64_t bins, int dtype, int es, char* hist) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < bins;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    convert::store(hist + b * es, dtype, convert::Wide{static_cast<double>(counts[b]), counts[b], true});
  }
}

// Integer tensors take ATen's CUDA rule (SummaryOps.cu), not the CPU's edges: integer bounds
// (equal ones widened by one), an element v in [lo, hi] counted in bin (v - lo) * bins /
// (hi - lo) in int64 arithmetic, hi in the last bin. CUB's even histogram has half-open bins
// of another width, so this is a kernel of its own: one atomic add per counted element.
__global__ void histc_integral(const char* in, int dtype, int es, StridedWalk walk, int64_t n,
                               const IntRange* from_data, int64_t lo, int64_t hi, int64_t bins, int* counts) {
  if (from_data != nullptr) lo = from_data->lo, hi = from_data->hi;
  if (lo == hi) --lo, ++hi;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t v = convert::load(in + walk_offset(walk, i) * es, dtype).i;
    if (v < lo || v > hi) continue;
    int64_t bin = (v - lo) * bins / (hi - lo);
    if (bin == bins) --bin;
    atomicAdd(counts + bin, 1);
  }
}

size_t align256(size_t n) { return (n + 255) & ~size_t{255}; }

auto samples(const HistcLaunch& h) {
  return thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                         LoadValue{static_cast<const char*>(h.in), h.dtype, h.es, h.walk});
}

auto range_samples(const HistcLaunch& h) {
  return thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                         LoadRange{{static_cast<const char*>(h.in), h.dtype, h.es, h.walk}});
}

auto int_range_samples(const HistcLaunch& h) {
  return thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                         LoadIntRange{static_cast<const char*>(h.in), h.dtype, h.es, h.walk});
}

struct Carve {
  size_t range, levels, counts, reduce_temp, hist_temp;
};

Error carve_integral(const HistcLaunch& h, Carve* c) {
  c->range = align256(sizeof(IntRange));
  c->levels = 0;
  c->counts = align256(static_cast<size_t>(h.bins) * sizeof(int));
  c->reduce_temp = 0;
  c->hist_temp = 0;
  if (h.from_data) {
    SLIMCUDA_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, c->reduce_temp, int_range_samples(h),
                                                static_cast<IntRange*>(nullptr), h.n, MinMaxInt{}, IntRange{0, 0}));
  }
  c->reduce_temp = align256(c->reduce_temp);
  return Error::Ok;
}

Error carve(const HistcLaunch& h, Carve* c) {
  if (h.integral) return carve_integral(h, c);
  c->range = align256(sizeof(Range));
  c->levels = align256(static_cast<size_t>(h.bins + 1) * sizeof(double));
  c->counts = align256(static_cast<size_t>(h.bins) * sizeof(int));
  c->reduce_temp = 0;
  c->hist_temp = 0;
  if (h.from_data) {
    SLIMCUDA_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, c->reduce_temp, range_samples(h), static_cast<Range*>(nullptr),
                                                h.n, MinMax{}, Range{0.0, 0.0}));
  }
  SLIMCUDA_CUDA_TRY(cub::DeviceHistogram::HistogramRange(nullptr, c->hist_temp, samples(h), static_cast<int*>(nullptr),
                                                         static_cast<int>(h.bins + 1),
                                                         static_cast<const double*>(nullptr), h.n));
  c->reduce_temp = align256(c->reduce_temp);
  c->hist_temp = align256(c->hist_temp);
  return Error::Ok;
}

// Floating tensors: the bins' edges on the device, then CUB's histogram over them.
Error launch_floating(const HistcLaunch& h, const Carve& c, Range* range, double* levels, int* counts, void* temp,
                      cudaStream_t stream) {
  if (h.from_data) {
    size_t t = c.reduce_temp;
    const Range init{__builtin_huge_val(), -__builtin_huge_val()};
    SLIMCUDA_CUDA_TRY(cub::DeviceReduce::Reduce(temp, t, range_samples(h), range, h.n, MinMax{}, init, stream));
  }
  histc_levels<<<1, kThreads, 0, stream>>>(h.from_data ? range : nullptr, h.lo, h.hi, h.bins, h.dtype, levels);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  SLIMCUDA_CUDA_TRY(cudaMemsetAsync(counts, 0, static_cast<size_t>(h.bins) * sizeof(int), stream));
  if (h.n > 0) {
    size_t t = c.hist_temp;
    SLIMCUDA_CUDA_TRY(cub::DeviceHistogram::HistogramRange(temp, t, samples(h), counts, static_cast<int>(h.bins + 1),
                                                           static_cast<const double*>(levels), h.n, stream));
  }
  return Error::Ok;
}

}  // namespace

Error histc_scratch_bytes(const HistcLaunch& h, size_t* bytes) noexcept {
  Carve c{};
  SLIMCUDA_RETURN_IF_ERROR(carve(h, &c));
  *bytes = c.range + c.levels + c.counts + c.reduce_temp + c.hist_temp;
  return Error::Ok;
}

Error launch_histc(const HistcLaunch& h, void* scratch, size_t bytes, cudaStream_t stream) noexcept {
  Carve c{};
  SLIMCUDA_RETURN_IF_ERROR(carve(h, &c));
  if (bytes < c.range + c.levels + c.counts + c.reduce_temp + c.hist_temp) {
    return set_last_error(Error::Internal, "histc: %zu bytes of scratch are too few", bytes);
  }
  char* p = static_cast<char*>(scratch);
  auto* range = reinterpret_cast<Range*>(p);
  auto* levels = reinterpret_cast<double*>(p + c.range);
  auto* counts = reinterpret_cast<int*>(p + c.range + c.levels);
  void* temp = p + c.range + c.levels + c.counts;
  if (h.integral) {
    auto* int_range = reinterpret_cast<IntRange*>(p);
    if (h.from_data) {
      size_t t = c.reduce_temp;
      const IntRange init{INT64_MAX, INT64_MIN};
      SLIMCUDA_CUDA_TRY(
          cub::DeviceReduce::Reduce(temp, t, int_range_samples(h), int_range, h.n, MinMaxInt{}, init, stream));
    }
    SLIMCUDA_CUDA_TRY(cudaMemsetAsync(counts, 0, static_cast<size_t>(h.bins) * sizeof(int), stream));
    if (h.n > 0) {
      const int64_t blocks = (h.n + kThreads - 1) / kThreads;
      histc_integral<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0, stream>>>(
          static_cast<const char*>(h.in), h.dtype, h.es, h.walk, h.n, h.from_data ? int_range : nullptr, h.int_lo,
          h.int_hi, h.bins, counts);
      SLIMCUDA_CUDA_TRY(cudaGetLastError());
    }
  } else {
    SLIMCUDA_RETURN_IF_ERROR(launch_floating(h, c, range, levels, counts, temp, stream));
  }
  const int64_t blocks = (h.bins + kThreads - 1) / kThreads;
  write_counts<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream>>>(
      counts, h.bins, h.dtype, h.es, static_cast<char*>(h.hist));
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
