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
// A second table times decode attention (one query row against a KV cache [B,16,S,128],
// bfloat16, S 512 and 4096, batch 1 and 8; one row with the decoder's [1,1,1,S] boolean
// mask): cuDNN's fused SDPA beside slimcuda's decode kernel (attention_decode_cuda, what the
// shims run for it), GPU µs per call and the GB/s of the K/V bytes read, the caches rotated
// over copies of more than 200 MB so that no call finds its keys in the L2.
// Usage: attention_cudnn_benchmark   (needs a GPU and libcudnn.so.9; exits 2 without a GPU)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention_cuda.h"
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
  using Path = Error (*)(const slimcuda::ops::AttentionProblem&, const StreamContext&, const char*);
  // Median GPU µs per call of `path` on `p` (20 calls per round, 15 rounds).
  auto gpu_time = [&](Path path, const slimcuda::ops::AttentionProblem& p, const char* what) {
    constexpr int kCalls = 20;
    std::vector<float> gpu;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(start, stream);
      for (int i = 0; i < kCalls; ++i) check(path(p, ctx, kFn), what);
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
    const Error first = slimcuda::ops::attention_cudnn(p, ctx, kFn);
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
        for (int i = 0; i < 20; ++i) check(slimcuda::ops::attention_cudnn(p, ctx, kFn), "attention_cudnn");
        host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20);
      }
      cudaStreamSynchronize(stream);
      cudnn_host_us = median(host);
    }
    check(slimcuda::ops::attention_kernel_cuda(p, ctx, kFn), "attention_kernel_cuda (warm-up)");
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

  // Decode: one query row per head against a KV cache (tools/aoti/decoder.py's step).
  struct Decode {
    int64_t b, s;
    bool mask;
  };
  const Decode decodes[] = {{1, 512, false}, {1, 512, true}, {8, 512, false}, {1, 4096, false}, {8, 4096, false}};
  constexpr int64_t kHeads = 16, kDim = 128;
  constexpr size_t kRotatedBytes = size_t{200} << 20;
  std::printf(
      "\n| decode, bf16 | B | H | S | D | mask | K/V copies | cuDNN GPU µs/call | cuDNN GB/s | decode GPU µs/call | "
      "decode GB/s | cuDNN / decode |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Decode& dc : decodes) {
    auto q = bshd(dc.b, kHeads, 1, kDim, ScalarType::BFloat16, ctx);
    auto o = bshd(dc.b, kHeads, 1, kDim, ScalarType::BFloat16, ctx);
    const double kv_bytes = 2.0 * dc.b * kHeads * dc.s * kDim * 2;
    const size_t copies = std::max<size_t>(2, static_cast<size_t>(kRotatedBytes / kv_bytes) + 2);
    // The caches as a model keeps them: [B, H, S, D] contiguous buffers.
    std::vector<std::unique_ptr<SlimTensor>> caches;
    for (size_t i = 0; i < 2 * copies; ++i) {
      const int64_t sizes[4] = {dc.b, kHeads, dc.s, kDim};
      const int64_t strides[4] = {kHeads * dc.s * kDim, dc.s * kDim, kDim, 1};
      slimcuda::EmptySpec spec;
      check(
          slimcuda::check_empty(4, sizes, strides, static_cast<int32_t>(ScalarType::BFloat16), 1, 0, false, &spec, kFn),
          "check_empty");
      SlimTensor* t = nullptr;
      check(slimcuda::empty_strided(spec, ctx, &t, kFn), "empty_strided");
      cudaMemsetAsync(t->data_ptr(), 0x30, static_cast<size_t>(dc.b * kHeads * dc.s * kDim) * 2, stream);
      caches.emplace_back(t);
    }
    std::unique_ptr<SlimTensor> mask;
    slimcuda::ops::AttentionProblem p;
    p.batch = dc.b, p.heads_q = p.heads_kv = kHeads, p.seq_q = 1, p.seq_kv = dc.s, p.head_dim = p.head_dim_v = kDim;
    p.dtype = ScalarType::BFloat16;
    p.device = 0;
    p.scale = 1.0 / std::sqrt(static_cast<double>(kDim));
    p.q = q.get(), p.out = o.get(), p.k = caches[0].get(), p.v = caches[1].get();
    for (int i = 0; i < 4; ++i) {
      p.q_strides[i] = q->strides()[i], p.out_strides[i] = o->strides()[i];
      p.k_strides[i] = p.v_strides[i] = caches[0]->strides()[i];
    }
    if (dc.mask) {
      // [1, 1, 1, S] bool: the positions up to the current one (0.6 S) attend.
      const int64_t sizes[4] = {1, 1, 1, dc.s}, strides[4] = {dc.s, dc.s, dc.s, 1};
      slimcuda::EmptySpec spec;
      check(slimcuda::check_empty(4, sizes, strides, static_cast<int32_t>(ScalarType::Bool), 1, 0, false, &spec, kFn),
            "check_empty");
      SlimTensor* t = nullptr;
      check(slimcuda::empty_strided(spec, ctx, &t, kFn), "empty_strided");
      std::vector<uint8_t> host(static_cast<size_t>(dc.s));
      for (int64_t j = 0; j < dc.s; ++j) host[static_cast<size_t>(j)] = j <= dc.s * 3 / 5 ? 1 : 0;
      cudaMemcpy(t->data_ptr(), host.data(), host.size(), cudaMemcpyHostToDevice);
      mask.reset(t);
      p.bias = mask.get();
      p.bias_dtype = ScalarType::Bool;
      p.bias_strides[0] = p.bias_strides[1] = p.bias_strides[2] = 0, p.bias_strides[3] = 1;
    }
    // Median GPU µs per call, each call on the next K/V copy.
    auto rotated_time = [&](Path path, const char* what) {
      constexpr int kCalls = 20;
      size_t call = 0;
      auto once = [&] {
        const size_t c = call++ % copies;
        p.k = caches[2 * c].get(), p.v = caches[2 * c + 1].get();
        check(path(p, ctx, what), what);
      };
      for (int i = 0; i < kCalls; ++i) once();  // warm-up (cuDNN builds its graph)
      std::vector<float> gpu;
      for (int r = 0; r < 15; ++r) {
        cudaEventRecord(start, stream);
        for (int i = 0; i < kCalls; ++i) once();
        cudaEventRecord(stop, stream);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        gpu.push_back(ms * 1000.0f / kCalls);
      }
      return static_cast<double>(median(gpu));
    };
    const Error served = slimcuda::ops::attention_cudnn(p, ctx, kFn);
    if (served != Error::Ok && served != Error::NotSupported) check(served, "attention_cudnn (first)");
    const double cudnn_us = served == Error::Ok ? rotated_time(slimcuda::ops::attention_cudnn, "attention_cudnn") : -1;
    const double decode_us = rotated_time(slimcuda::ops::attention_decode_cuda, "attention_decode_cuda");
    const auto gbps = [&](double us) { return kv_bytes / (us * 1e3); };
    std::printf("| bf16 | %lld | %lld | %lld | %lld | %s | %zu | ", static_cast<long long>(dc.b),
                static_cast<long long>(kHeads), static_cast<long long>(dc.s), static_cast<long long>(kDim),
                dc.mask ? "[1,1,1,S] bool" : "none", copies);
    if (cudnn_us > 0) {
      std::printf("%.1f | %.0f | ", cudnn_us, gbps(cudnn_us));
    } else {
      std::printf("declined | — | ");
    }
    std::printf("%.1f | %.0f | ", decode_us, gbps(decode_us));
    if (cudnn_us > 0) {
      std::printf("%.2f |\n", cudnn_us / decode_us);
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
