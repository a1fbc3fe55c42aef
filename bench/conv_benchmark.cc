// SPDX-License-Identifier: Apache-2.0
// conv_benchmark: one convolution through aoti_torch_cuda_convolution (argument checks,
// output allocation, cuDNN) on the legacy API and on the cuDNN frontend's graph API
// (slimcuda::ops::set_convolution_path, as SLIMCUDA_CONV=legacy|frontend would), on the
// caller's stream, for CNN-like shapes:
//   - host µs per call: the enqueue cost with the plan/graph cached (median of 9 rounds of
//     50 calls; what a non-graph model run pays per convolution);
//   - stream µs per call: CUDA events around 50 back-to-back calls (max of host and GPU);
//   - GPU µs per call: the same 50 calls captured into a CUDA graph and replayed (the GPU
//     work alone; "n/a" where capture fails);
//   - the first call (plan or graph build, ms), and the largest difference between the two
//     paths' outputs relative to the legacy output's largest magnitude.
// Usage: conv_benchmark   (needs a GPU and libcudnn.so.9; exits 2 without a GPU)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "csrc/ops/conv/convolution_cudnn.h"
#include "csrc/tensor/convert.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/slimcuda.h"

namespace {

namespace ops = slimcuda::ops;

struct Case {
  const char* name;
  const char* dtype_name;  // float32 | float16 | bfloat16
  std::vector<int64_t> x, w;
  int64_t stride, padding, groups;
  bool channels_last, bias, transposed;
};

int32_t dtype_code(const std::string& d) {
  if (d == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (d == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& s, bool channels_last) {
  std::vector<int64_t> t(s.size());
  if (!channels_last) {
    int64_t acc = 1;
    for (size_t i = s.size(); i-- > 0;) t[i] = acc, acc *= s[i];
  } else {  // C innermost, then the spatial dimensions, then N
    int64_t acc = s[1];
    t[1] = 1;
    for (size_t i = s.size(); i-- > 2;) t[i] = acc, acc *= s[i];
    t[0] = acc;
  }
  return t;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// A CUDA tensor with small pseudo-random values (exact in every dtype).
AtenTensorHandle make(const std::vector<int64_t>& sizes, bool channels_last, const std::string& dtype, int salt) {
  const std::vector<int64_t> st = strides_of(sizes, channels_last);
  AtenTensorHandle h = nullptr;
  if (SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), st.data(),
                                              dtype_code(dtype), SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0,
                                              &h) != 0) {
    std::fprintf(stderr, "empty_strided failed: %s\n", slimcuda_last_error_message());
    std::exit(1);
  }
  const int64_t n = numel(sizes);  // packed either way: storage holds exactly n elements
  std::vector<float> f(n);
  for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>((i * 7 + salt * 13) % 17 - 8) / 16.0f;
  void* dev = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(h, &dev);
  if (dtype == "float32") {
    cudaMemcpy(dev, f.data(), n * 4, cudaMemcpyHostToDevice);
  } else {
    std::vector<uint16_t> b(n);
    for (int64_t i = 0; i < n; ++i)
      b[i] = dtype == "float16" ? slimcuda::convert::float_to_half(f[i]) : slimcuda::convert::float_to_bfloat16(f[i]);
    cudaMemcpy(dev, b.data(), n * 2, cudaMemcpyHostToDevice);
  }
  return h;
}

struct Operands {
  AtenTensorHandle x = nullptr, w = nullptr, b = nullptr;
  std::vector<int64_t> stride, padding, dilation, output_padding;
};

int32_t conv(const Case& c, Operands& o, AtenTensorHandle* out) {
  const int64_t n = static_cast<int64_t>(o.stride.size());
  return SLIMCUDA_SHIM(aoti_torch_cuda_convolution)(o.x, o.w, c.bias ? &o.b : nullptr, o.stride.data(), n,
                                                    o.padding.data(), n, o.dilation.data(), n, c.transposed ? 1 : 0,
                                                    o.output_padding.data(), n, c.groups, out);
}

// One call, the output dropped (stream-ordered: its block is reused by the next call).
bool call(const Case& c, Operands& o) {
  AtenTensorHandle out = nullptr;
  if (conv(c, o, &out) != 0) return false;
  SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(out);
  return true;
}

template <typename T>
T median(std::vector<T> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The output as float32 on the host.
std::vector<float> read(AtenTensorHandle t, const std::string& dtype) {
  int64_t n = 0;
  SLIMCUDA_SHIM(aoti_torch_get_numel)(t, &n);
  void* dev = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &dev);
  std::vector<float> f(n);
  if (dtype == "float32") {
    cudaMemcpy(f.data(), dev, n * 4, cudaMemcpyDeviceToHost);
  } else {
    std::vector<uint16_t> b(n);
    cudaMemcpy(b.data(), dev, n * 2, cudaMemcpyDeviceToHost);
    for (int64_t i = 0; i < n; ++i)
      f[i] = dtype == "float16" ? slimcuda::convert::half_to_float(b[i]) : slimcuda::convert::bfloat16_to_float(b[i]);
  }
  return f;
}

struct Timing {
  bool ok = false;
  std::string error;
  double first_ms = 0, host_us = 0, stream_us = 0, gpu_us = -1;
  std::vector<float> out;
};

Timing measure(const Case& c, Operands& o, cudaStream_t stream) {
  Timing t;
  constexpr int kCalls = 50;
  cudaStreamSynchronize(stream);
  auto t0 = std::chrono::steady_clock::now();
  AtenTensorHandle first = nullptr;
  if (conv(c, o, &first) != 0) {
    t.error = slimcuda_last_error_message();
    return t;
  }
  cudaStreamSynchronize(stream);
  t.first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t.out = read(first, c.dtype_name);
  SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(first);

  std::vector<double> host;
  for (int r = 0; r < 9; ++r) {
    cudaStreamSynchronize(stream);
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) {
      if (!call(c, o)) {
        t.error = slimcuda_last_error_message();
        return t;
      }
    }
    host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kCalls);
  }
  t.host_us = median(host);

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> st;
  for (int r = 0; r < 9; ++r) {
    cudaEventRecord(start, stream);
    for (int i = 0; i < kCalls; ++i) (void)call(c, o);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    st.push_back(ms * 1000.0f / kCalls);
  }
  t.stream_us = median(st);

  cudaStreamSynchronize(stream);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool captured = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  for (int i = 0; captured && i < kCalls; ++i) captured = call(c, o);
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) captured = false;
  if (captured && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    cudaGraphLaunch(exec, stream);
    cudaStreamSynchronize(stream);
    std::vector<float> g;
    for (int r = 0; r < 9; ++r) {
      cudaEventRecord(start, stream);
      cudaGraphLaunch(exec, stream);
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      g.push_back(ms * 1000.0f / kCalls);
    }
    t.gpu_us = median(g);
  }
  (void)cudaGetLastError();  // a failed capture leaves its error behind
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  t.ok = true;
  return t;
}

std::string us(double v) {
  if (v < 0) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "conv_benchmark: no CUDA device\n");
    return 2;
  }
  cudaSetDevice(0);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  slimcuda_caller_stream_push(stream);

  const Case cases[] = {
      {"resnet 3x3", "float32", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, false, false, false},
      {"resnet 3x3 +bias", "float32", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, false, true, false},
      {"resnet 3x3 s2", "float32", {1, 128, 28, 28}, {256, 128, 3, 3}, 2, 1, 1, false, false, false},
      {"resnet 1x1", "float32", {1, 256, 14, 14}, {1024, 256, 1, 1}, 1, 0, 1, false, true, false},
      {"depthwise 3x3 NCHW", "float16", {1, 96, 56, 56}, {96, 1, 3, 3}, 1, 1, 96, false, true, false},
      {"depthwise 3x3 NHWC", "float16", {1, 96, 56, 56}, {96, 1, 3, 3}, 1, 1, 96, true, true, false},
      {"depthwise 5x5 s2 NCHW", "float16", {1, 240, 28, 28}, {240, 1, 5, 5}, 2, 2, 240, false, true, false},
      {"1x1 NCHW", "float16", {1, 96, 56, 56}, {24, 96, 1, 1}, 1, 0, 1, false, true, false},
      {"1x1 NHWC", "float16", {1, 96, 56, 56}, {24, 96, 1, 1}, 1, 0, 1, true, true, false},
      {"3x3 NHWC", "bfloat16", {8, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, true, true, false},
      {"transposed 2x2 s2", "float16", {1, 64, 28, 28}, {64, 32, 2, 2}, 2, 0, 1, false, true, true},
  };
  std::printf(
      "| conv | dtype | input | weight | path | host µs/call | stream µs/call | GPU µs/call (graph) | first call ms | "
      "max rel diff vs legacy |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const Case& c : cases) {
    Operands o;
    o.x = make(c.x, c.channels_last, c.dtype_name, 1);
    o.w = make(c.w, c.channels_last, c.dtype_name, 2);
    const int64_t c_out = c.transposed ? c.w[1] * c.groups : c.w[0];
    if (c.bias) o.b = make({c_out}, false, c.dtype_name, 3);
    const size_t sp = c.x.size() - 2;
    o.stride.assign(sp, c.stride);
    o.padding.assign(sp, c.padding);
    o.dilation.assign(sp, 1);
    o.output_padding.assign(sp, 0);
    auto dims = [](const std::vector<int64_t>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
      return s;
    };
    std::vector<float> legacy_out;
    for (ops::ConvPath path : {ops::ConvPath::Legacy, ops::ConvPath::Frontend}) {
      ops::set_convolution_path(path);
      const bool legacy = path == ops::ConvPath::Legacy;
      const Timing t = measure(c, o, stream);
      std::string diff = "";
      if (!t.ok) {
        std::printf("| %s | %s | %s%s | %s | %s | failed: %s |||||\n", c.name, c.dtype_name, dims(c.x).c_str(),
                    c.channels_last ? " (NHWC)" : "", dims(c.w).c_str(), legacy ? "legacy" : "frontend",
                    t.error.c_str());
        if (legacy) ++failures;  // a frontend decline is a finding, not a benchmark failure
        continue;
      }
      if (legacy) {
        legacy_out = t.out;
      } else if (legacy_out.size() == t.out.size()) {
        float scale = 0, worst = 0;
        for (size_t i = 0; i < t.out.size(); ++i) {
          scale = std::max(scale, std::fabs(legacy_out[i]));
          worst = std::max(worst, std::fabs(legacy_out[i] - t.out[i]));
        }
        char b[32];
        std::snprintf(b, sizeof b, "%.2e", scale > 0 ? worst / scale : worst);
        diff = b;
      }
      std::printf("| %s | %s | %s%s | %s | %s | %.1f | %.1f | %s | %.1f | %s |\n", c.name, c.dtype_name,
                  dims(c.x).c_str(), c.channels_last ? " (NHWC)" : "", dims(c.w).c_str(),
                  legacy ? "legacy" : "frontend", t.host_us, t.stream_us, us(t.gpu_us).c_str(), t.first_ms,
                  diff.c_str());
    }
    for (AtenTensorHandle h : {o.x, o.w, o.b})
      if (h != nullptr) SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h);
  }
  const ops::ConvolutionCudnnStats st = ops::convolution_cudnn_stats();
  std::printf("frontend graphs built: %llu (bias unfused: %llu), rejected: %llu, executions: %llu\n",
              static_cast<unsigned long long>(st.graphs_built), static_cast<unsigned long long>(st.unfused_bias),
              static_cast<unsigned long long>(st.rejected), static_cast<unsigned long long>(st.executions));
  slimcuda_caller_stream_pop();
  cudaStreamDestroy(stream);
  return failures == 0 ? 0 : 1;
}
