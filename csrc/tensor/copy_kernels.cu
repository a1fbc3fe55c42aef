// SPDX-License-Identifier: Apache-2.0
// copy_tensor's kernels: the general strided, converting copy and a tiled transpose.
#include "csrc/tensor/copy_kernels.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "csrc/cuda/cuda_error.h"
#include "csrc/tensor/convert.h"

namespace slimcuda {
namespace {

__global__ void strided_copy_kernel(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es,
                                    CopyPlan plan, int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, d_off = 0, s_off = 0;
    for (int d = plan.ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % plan.sizes[d];
      rest /= plan.sizes[d];
      d_off += idx * plan.dst_strides[d];
      s_off += idx * plan.src_strides[d];
    }
    convert::copy_element(dst + d_off * dst_es, dst_t, src + s_off * src_es, src_t, dst_es);
  }
}

// A 2-D copy whose source is contiguous along dimension 0 and whose destination is
// contiguous along dimension 1 (a transpose): 32x32 tiles through shared memory, so both
// the reads and the writes are coalesced. The naive kernel gets a fraction of the
// bandwidth here because one side is read or written with a large stride.
constexpr int kTile = 32, kTileRows = 8;

template <typename T>
__global__ void transpose_tile_kernel(T* dst, int64_t dst_s0, const T* src, int64_t src_s1, int64_t rows,
                                      int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];  // +1: no shared-memory bank conflicts on the column reads
  const int64_t r0 = int64_t{blockIdx.y} * kTile, c0 = int64_t{blockIdx.x} * kTile;
  for (int k = 0; k < kTile; k += kTileRows) {
    const int64_t r = r0 + threadIdx.x, c = c0 + threadIdx.y + k;
    if (r < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = src[r + c * src_s1];
  }
  __syncthreads();
  for (int k = 0; k < kTile; k += kTileRows) {
    const int64_t c = c0 + threadIdx.x, r = r0 + threadIdx.y + k;
    if (r < rows && c < cols) dst[r * dst_s0 + c] = tile[threadIdx.x][threadIdx.y + k];
  }
}

template <typename T>
void launch_transpose(char* dst, int64_t dst_s0, const char* src, int64_t src_s1, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  transpose_tile_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(
      reinterpret_cast<T*>(dst), dst_s0, reinterpret_cast<const T*>(src), src_s1, rows, cols);
}

// Launches the tiled transpose when the plan is one (same dtype, 2-D, one side contiguous
// along each dimension); returns false to fall back to the general kernel.
bool try_transpose(char* dst, const char* src, int es, CopyPlan p, cudaStream_t stream) {
  if (p.ndim != 2) return false;
  if (!(p.src_strides[0] == 1 && p.dst_strides[1] == 1)) {  // the mirror case: swap the dimensions
    std::swap(p.sizes[0], p.sizes[1]);
    std::swap(p.src_strides[0], p.src_strides[1]);
    std::swap(p.dst_strides[0], p.dst_strides[1]);
    if (!(p.src_strides[0] == 1 && p.dst_strides[1] == 1)) return false;
  }
  if ((p.sizes[0] + kTile - 1) / kTile > 65535 || (p.sizes[1] + kTile - 1) / kTile > INT32_MAX) return false;
  switch (es) {
    case 1:
      launch_transpose<uint8_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream);
      break;
    case 2:
      launch_transpose<uint16_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream);
      break;
    case 4:
      launch_transpose<uint32_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream);
      break;
    case 8:
      launch_transpose<uint64_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream);
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace

Error launch_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& plan,
                  int64_t numel, cudaStream_t stream) noexcept {
  if (dst_t == src_t && try_transpose(dst, src, dst_es, plan, stream)) {
    SLIMCUDA_CUDA_TRY(cudaGetLastError());
    return Error::Ok;
  }
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((numel + kThreads - 1) / kThreads, 65535);
  strided_copy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(dst, dst_t, dst_es, src, src_t, src_es,
                                                                              plan, numel);
  SLIMCUDA_CUDA_TRY(cudaGetLastError());
  return Error::Ok;
}

}  // namespace slimcuda
