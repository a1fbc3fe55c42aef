// SPDX-License-Identifier: Apache-2.0
#include <climits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cub/device/device_radix_sort.cuh>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/device_elements.cuh"
#include "csrc/ops/vision/vision_kernels.h"
#include "csrc/ops/vision/vision_math.h"

namespace slimcuda::ops {
namespace {

constexpr unsigned kThreads = 256;
constexpr int kBlockBoxes = 64;  // one mask word: the boxes of one column block

unsigned blocks_for(int64_t n) noexcept {
  const int64_t want = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < 65535 ? want : 65535);
}

template <typename In>
__global__ void keys_kernel(NmsProblem p, float* keys, int64_t* order) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = to_float(static_cast<const In*>(p.scores)[i * p.score_stride]);
    if (s != s) s = __int_as_float(0x7fc00000);  // every NaN above +inf, as ATen's sort
    if (s == 0.0f) s = 0.0f;                     // -0 ties +0
    keys[i] = s;
    order[i] = i;
  }
}

template <typename In>
__global__ void gather_kernel(NmsProblem p, const int64_t* order, float* sorted) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < p.n;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const In* boxes = static_cast<const In*>(p.boxes);
    const int64_t at = order[r] * p.box_strides[0];
    float b[4];
    for (int k = 0; k < 4; ++k) b[k] = to_float(boxes[at + k * p.box_strides[1]]);
    for (int k = 0; k < 4; ++k) sorted[r * 5 + k] = b[k];
    sorted[r * 5 + 4] = (b[2] - b[0]) * (b[3] - b[1]);
  }
}

// Block (row block rb, column block cb), one thread per row box of rb: the bits of the
// column boxes after it that it suppresses. Column blocks before the row's are skipped (the
// greedy pass never reads them).
__global__ void mask_kernel(const float* sorted, int64_t n, double threshold, uint64_t* mask) {
  const int64_t rb = blockIdx.y, cb = blockIdx.x;
  if (cb < rb) return;
  __shared__ float cols[kBlockBoxes * 5];
  const int64_t col0 = cb * kBlockBoxes;
  const int64_t ncols = n - col0 < kBlockBoxes ? n - col0 : kBlockBoxes;
  if (threadIdx.x < ncols) {
    for (int k = 0; k < 5; ++k) cols[threadIdx.x * 5 + k] = sorted[(col0 + threadIdx.x) * 5 + k];
  }
  __syncthreads();
  const int64_t row = rb * kBlockBoxes + threadIdx.x;
  if (row >= n) return;
  const float* box = sorted + row * 5;
  uint64_t bits = 0;
  for (int64_t c = 0; c < ncols; ++c) {
    if (col0 + c <= row) continue;
    const float o = vision_math::iou<float>(box, cols + c * 5, box[4], cols[c * 5 + 4]);
    if (static_cast<double>(o) > threshold) bits |= uint64_t{1} << c;
  }
  mask[row * gridDim.x + cb] = bits;
}

}  // namespace

Error launch_nms_keys(const NmsProblem& p, float* keys, int64_t* order, cudaStream_t stream) noexcept {
  if (p.n == 0) return Error::Ok;
  switch (p.type) {
    case VisionType::F16:
      keys_kernel<__half><<<blocks_for(p.n), kThreads, 0, stream>>>(p, keys, order);
      break;
    case VisionType::BF16:
      keys_kernel<__nv_bfloat16><<<blocks_for(p.n), kThreads, 0, stream>>>(p, keys, order);
      break;
    default:
      keys_kernel<float><<<blocks_for(p.n), kThreads, 0, stream>>>(p, keys, order);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

Error nms_sort(void* temp, size_t* temp_bytes, const float* keys_in, float* keys_out, const int64_t* order_in,
               int64_t* order_out, int64_t n, cudaStream_t stream) noexcept {
  if (n > INT_MAX) {
    return set_last_error(Error::InvalidArgument, "nms: %lld boxes; CUB's sort takes at most %d",
                          static_cast<long long>(n), INT_MAX);
  }
  // All 32 key bits: a stable radix sort, so equal scores keep ascending index order.
  SLIMCUDA_CUDA_TRY(cub::DeviceRadixSort::SortPairsDescending(temp, *temp_bytes, keys_in, keys_out, order_in, order_out,
                                                              static_cast<int>(n), 0, 32, stream));
  return Error::Ok;
}

Error launch_nms_mask(const NmsProblem& p, const int64_t* order, float* sorted, uint64_t* mask,
                      cudaStream_t stream) noexcept {
  if (p.n == 0) return Error::Ok;
  const int64_t words = nms_mask_words(p.n);
  if (words > 65535) {  // the grid's y dimension
    return set_last_error(Error::InvalidArgument, "nms: %lld boxes are more than the mask's grid allows (%d)",
                          static_cast<long long>(p.n), 65535 * kBlockBoxes);
  }
  switch (p.type) {
    case VisionType::F16:
      gather_kernel<__half><<<blocks_for(p.n), kThreads, 0, stream>>>(p, order, sorted);
      break;
    case VisionType::BF16:
      gather_kernel<__nv_bfloat16><<<blocks_for(p.n), kThreads, 0, stream>>>(p, order, sorted);
      break;
    default:
      gather_kernel<float><<<blocks_for(p.n), kThreads, 0, stream>>>(p, order, sorted);
      break;
  }
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  const dim3 grid(static_cast<unsigned>(words), static_cast<unsigned>(words));
  mask_kernel<<<grid, kBlockBoxes, 0, stream>>>(sorted, p.n, p.iou_threshold, mask);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda::ops
