// SPDX-License-Identifier: Apache-2.0
// attention_cudnn_benchmark: scaled-dot-product attention on the shapes transformer exports
// use, q/k/v/out in PyTorch's [B,S,H,D]-permuted layout, through both CUDA paths side by side:
// cuDNN's fused SDPA (slimcuda::ops::attention_cudnn) and slimcuda's own kernel
// (attention_kernel_cuda, what float32 and every case cuDNN declines run on):
//   - GPU time per call (CUDA events around 20 back-to-back calls, median of 15 rounds) and
//     the achieved TFLOP/s (4·B·H·Sq·Skv·D, halved when causal), for each path;
//   - cuDNN's host time per call with the graph cached (the enqueue cost, median of 9 rounds)
//     and its first call, which builds the graph (ms);
//   - BERT-style rows with an additive [B,1,1,S] key-padding mask, which cuDNN reads as full
//     [S,S] rows: slimcuda expands it into a temporary on every call (included in the time).
// float32 rows have no cuDNN column: cuDNN's fused SDPA does not take float32.
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
#include "csrc/ops/attention/attention_cuda.h"
#include "csrc/ops/attention/attention_cudnn.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/last_error.h"

namespace {

using slimcuda::Error;
using slimcuda::ScalarType;
using slimcuda::SlimTensor;
using slimcuda::StreamContext;

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
  check(slimcuda::check_empty(4, sizes, strides, static_cast<int32_t>(t), 1, 0, false, &spec), "check_empty");
  SlimTensor* out = nullptr;
  check(slimcuda::empty_strided(spec, ctx, &out), "empty_strided");
  const size_t n = static_cast<size_t>(b * s * h * d);
  if (t == ScalarType::Float) {
    std::vector<float> host(n, 0.125f);
    cudaMemcpy(out->data_ptr(), host.data(), n * 4, cudaMemcpyHostToDevice);
  } else {
    // 0x3000 is 0.125 in float16 and 2^-31 in bfloat16: finite, no overflow either way.
    std::vector<uint16_t> host(n, 0x3000);
    cudaMemcpy(out->data_ptr(), host.data(), n * 2, cudaMemcpyHostToDevice);
  }
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
  bool key_padding = false;  ///< an additive [B,1,1,S] mask (BERT's), expanded into a temporary per call
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
      {"bf16", ScalarType::BFloat16, 8, 12, 128, 64, false},
      {"bf16", ScalarType::BFloat16, 8, 12, 512, 64, false},
      {"bf16", ScalarType::BFloat16, 8, 12, 512, 64, true},
      {"fp16", ScalarType::Half, 8, 12, 1024, 128, false},
      {"fp16", ScalarType::Half, 8, 12, 1024, 128, true},
      {"bf16", ScalarType::BFloat16, 8, 12, 512, 64, false, true},
      {"bf16", ScalarType::BFloat16, 8, 12, 197, 64, false},     // ViT-B/16
      {"fp32", ScalarType::Float, 8, 12, 128, 64, false, true},  // BERT-base with its padding mask
      {"fp32", ScalarType::Float, 1, 12, 1024, 64, true},        // GPT-2, causal
      {"fp32", ScalarType::Float, 8, 12, 197, 64, false},        // ViT-B/16
  };
  std::printf(
      "| dtype | B | H | S | D | causal | mask | cuDNN GPU µs/call | cuDNN TFLOP/s | cuDNN host µs/call | cuDNN first "
      "call ms | kernel GPU µs/call | kernel TFLOP/s | kernel / cuDNN |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  using Path = Error (*)(const slimcuda::ops::AttentionProblem&, const StreamContext&);
  // Median GPU µs per call of `path` on `p` (20 calls per round, 15 rounds).
  auto gpu_time = [&](Path path, const slimcuda::ops::AttentionProblem& p, const char* what) {
    constexpr int kCalls = 20;
    std::vector<float> gpu;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(start, stream);
      for (int i = 0; i < kCalls; ++i) check(path(p, ctx), what);
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      gpu.push_back(ms * 1000.0f / kCalls);
    }
    return median(gpu);
  };
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
    std::unique_ptr<SlimTensor> mask;
    if (sh.key_padding) {
      mask = bshd(sh.b, 1, 1, sh.s, sh.dtype, ctx);  // [B,1,1,S]; the values do not matter here
      p.bias = mask.get();
      p.bias_dtype = sh.dtype;
      p.bias_strides[0] = sh.s, p.bias_strides[1] = 0, p.bias_strides[2] = 0, p.bias_strides[3] = 1;
    }
    const double flops = 4.0 * sh.b * sh.h * sh.s * sh.s * sh.d * (sh.causal ? 0.5 : 1.0);
    const auto tflops = [&](double us) { return flops / (us * 1e-6) / 1e12; };

    // cuDNN: the first call builds (and caches) the graph; a decline is a row without it.
    cudaStreamSynchronize(stream);
    auto t0 = std::chrono::steady_clock::now();
    const Error first = slimcuda::ops::attention_cudnn(p, ctx);
    cudaStreamSynchronize(stream);
    const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (first != Error::Ok && first != Error::NotSupported) check(first, "attention_cudnn (first)");
    const bool cudnn = first == Error::Ok;
    double cudnn_us = 0, cudnn_host_us = 0;
    if (cudnn) {
      cudnn_us = gpu_time(slimcuda::ops::attention_cudnn, p, "attention_cudnn");
      std::vector<double> host;
      for (int r = 0; r < 9; ++r) {
        cudaStreamSynchronize(stream);
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 20; ++i) check(slimcuda::ops::attention_cudnn(p, ctx), "attention_cudnn");
        host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20);
      }
      cudaStreamSynchronize(stream);
      cudnn_host_us = median(host);
    }
    check(slimcuda::ops::attention_kernel_cuda(p, ctx), "attention_kernel_cuda (warm-up)");
    const double kernel_us = gpu_time(slimcuda::ops::attention_kernel_cuda, p, "attention_kernel_cuda");
    std::printf("| %s | %lld | %lld | %lld | %lld | %s | %s | ", sh.dtype_name, static_cast<long long>(sh.b),
                static_cast<long long>(sh.h), static_cast<long long>(sh.s), static_cast<long long>(sh.d),
                sh.causal ? "yes" : "no", sh.key_padding ? "[B,1,1,S]" : "none");
    if (cudnn) {
      std::printf("%.1f | %.1f | %.2f | %.1f | ", cudnn_us, tflops(cudnn_us), cudnn_host_us, first_ms);
    } else {
      std::printf("declined | — | — | — | ");
    }
    std::printf("%.1f | %.1f | ", kernel_us, tflops(kernel_us));
    if (cudnn) {
      std::printf("%.2f |\n", kernel_us / cudnn_us);
    } else {
      std::printf("— |\n");
    }
  }
  const slimcuda::ops::AttentionCudnnStats st = slimcuda::ops::attention_cudnn_stats();
  std::printf("graphs built: %llu, executions: %llu\n", static_cast<unsigned long long>(st.graphs_built),
              static_cast<unsigned long long>(st.executions));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return 0;
}
