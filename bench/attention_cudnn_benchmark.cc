// SPDX-License-Identifier: Apache-2.0
// attention_cudnn_benchmark: cuDNN's fused SDPA through slimcuda::ops::attention_cudnn on
// the shapes transformer exports use, q/k/v/out in PyTorch's [B,S,H,D]-permuted layout:
//   - GPU time per call (CUDA events around 20 back-to-back calls, median of 15 rounds) and
//     the achieved TFLOP/s (4·B·H·Sq·Skv·D, halved when causal);
//   - host time per call with the graph cached (the enqueue cost, median of 9 rounds);
//   - the first call, which builds the graph (ms).
// Usage: attention_cudnn_benchmark   (needs a GPU and libcudnn.so.9; exits 2 without a GPU)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention_cudnn.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/last_error.h"

namespace {

using slimcuda::Error;
using slimcuda::ScalarType;
using slimcuda::SlimTensor;
using slimcuda::StreamContext;

constexpr const char* kFn = "attention_cudnn_benchmark";

void check(Error e, const char* what) {
  if (e != Error::Ok) {
    std::fprintf(stderr, "%s failed (%d): %s %s\n", what, static_cast<int>(e), slimcuda::last_error_message(),
                 slimcuda::ops::attention_cudnn_unsupported_reason());
    std::exit(1);
  }
}

// A [B,H,S,D] view over [B,S,H,D] storage on cuda:0, filled with small values.
std::unique_ptr<SlimTensor> bshd(int64_t b, int64_t h, int64_t s, int64_t d, ScalarType t, const StreamContext& ctx) {
  const int64_t sizes[4] = {b, h, s, d}, strides[4] = {s * h * d, d, h * d, 1};
  slimcuda::EmptySpec spec;
  check(slimcuda::check_empty(4, sizes, strides, static_cast<int32_t>(t), 1, 0, false, &spec, kFn), "check_empty");
  SlimTensor* out = nullptr;
  check(slimcuda::empty_strided(spec, ctx, &out, kFn), "empty_strided");
  // 0x3000 is 0.125 in float16 and 2^-31 in bfloat16: finite, no overflow either way.
  std::vector<uint16_t> host(b * s * h * d, 0x3000);
  cudaMemcpy(out->data_ptr(), host.data(), host.size() * 2, cudaMemcpyHostToDevice);
  return std::unique_ptr<SlimTensor>(out);
}

template <typename T>
T median(std::vector<T> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Shape {
  const char* dtype_name;
  ScalarType dtype;
  int64_t b, h, s, d;
  bool causal;
};

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "attention_cudnn_benchmark: no CUDA device\n");
    return 2;
  }
  cudaSetDevice(0);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const StreamContext ctx = StreamContext::selected(stream, 0);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);

  const Shape shapes[] = {
      {"bf16", ScalarType::BFloat16, 8, 12, 128, 64, false}, {"bf16", ScalarType::BFloat16, 8, 12, 512, 64, false},
      {"bf16", ScalarType::BFloat16, 8, 12, 512, 64, true},  {"fp16", ScalarType::Half, 8, 12, 1024, 128, false},
      {"fp16", ScalarType::Half, 8, 12, 1024, 128, true},
  };
  std::printf("| dtype | B | H | S | D | causal | GPU µs/call | TFLOP/s | host µs/call | first call ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Shape& sh : shapes) {
    auto q = bshd(sh.b, sh.h, sh.s, sh.d, sh.dtype, ctx);
    auto k = bshd(sh.b, sh.h, sh.s, sh.d, sh.dtype, ctx);
    auto v = bshd(sh.b, sh.h, sh.s, sh.d, sh.dtype, ctx);
    auto o = bshd(sh.b, sh.h, sh.s, sh.d, sh.dtype, ctx);
    slimcuda::ops::AttentionProblem p;
    p.batch = sh.b, p.heads_q = p.heads_kv = sh.h, p.seq_q = p.seq_kv = sh.s, p.head_dim = p.head_dim_v = sh.d;
    p.dtype = sh.dtype;
    p.device = 0;
    p.causal = sh.causal;
    p.scale = 1.0 / std::sqrt(static_cast<double>(sh.d));
    p.q = q.get(), p.k = k.get(), p.v = v.get(), p.out = o.get();
    for (int i = 0; i < 4; ++i) {
      p.q_strides[i] = p.k_strides[i] = p.v_strides[i] = p.out_strides[i] = q->strides()[i];
    }

    cudaStreamSynchronize(stream);
    auto t0 = std::chrono::steady_clock::now();
    check(slimcuda::ops::attention_cudnn(p, ctx, kFn), "attention_cudnn (first)");
    cudaStreamSynchronize(stream);
    const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    constexpr int kCalls = 20;
    std::vector<float> gpu;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(start, stream);
      for (int i = 0; i < kCalls; ++i) check(slimcuda::ops::attention_cudnn(p, ctx, kFn), "attention_cudnn");
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      gpu.push_back(ms * 1000.0f / kCalls);
    }
    std::vector<double> host;
    for (int r = 0; r < 9; ++r) {
      cudaStreamSynchronize(stream);
      t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls; ++i) check(slimcuda::ops::attention_cudnn(p, ctx, kFn), "attention_cudnn");
      host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kCalls);
    }
    cudaStreamSynchronize(stream);
    const double gpu_us = median(gpu);
    const double flops = 4.0 * sh.b * sh.h * sh.s * sh.s * sh.d * (sh.causal ? 0.5 : 1.0);
    std::printf("| %s | %lld | %lld | %lld | %lld | %s | %.1f | %.1f | %.2f | %.1f |\n", sh.dtype_name,
                static_cast<long long>(sh.b), static_cast<long long>(sh.h), static_cast<long long>(sh.s),
                static_cast<long long>(sh.d), sh.causal ? "yes" : "no", gpu_us, flops / (gpu_us * 1e-6) / 1e12,
                median(host), first_ms);
  }
  const slimcuda::ops::AttentionCudnnStats st = slimcuda::ops::attention_cudnn_stats();
  std::printf("graphs built: %llu, executions: %llu\n", static_cast<unsigned long long>(st.graphs_built),
              static_cast<unsigned long long>(st.executions));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return 0;
}
