// SPDX-License-Identifier: Apache-2.0
// The demo model's CUDA backend: two kernels, launched on the stream the container's Run
// was given.
#include <cuda_runtime_api.h>

#include "models/demo/demo_weights.h"

namespace slimcuda_demo {
namespace {

// y[b][j] = act(bias[j] + sum_i x[b][i] * w[i][j]); one thread per output element.
__global__ void linear_kernel(const float* x, const float* w, const float* bias, float* y, int batch, int in, int out,
                              bool relu) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= batch * out) return;
  const int b = idx / out, j = idx % out;
  float acc = bias[j];
  for (int i = 0; i < in; ++i) acc += x[b * in + i] * w[i * out + j];
  y[idx] = relu && acc < 0.0f ? 0.0f : acc;
}

}  // namespace

int forward(const float* x, int batch, const float* w1, const float* b1, const float* w2, const float* b2,
            float* hidden, float* y, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  constexpr int kThreads = 128;
  linear_kernel<<<(batch * kHidden + kThreads - 1) / kThreads, kThreads, 0, s>>>(x, w1, b1, hidden, batch, kIn, kHidden,
                                                                                 true);
  linear_kernel<<<(batch * kOut + kThreads - 1) / kThreads, kThreads, 0, s>>>(hidden, w2, b2, y, batch, kHidden, kOut,
                                                                              false);
#ifdef SLIMCUDA_DEMO_SYNC_IN_RUN
  // The variant a CUDA graph cannot capture: it waits for its own work inside the run.
  if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
#endif
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace slimcuda_demo
