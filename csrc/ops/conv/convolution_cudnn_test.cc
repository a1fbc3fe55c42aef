// SPDX-License-Identifier: Apache-2.0
// The graph-API convolution (convolution_cudnn.cc) through aoti_torch_cuda_convolution, each
// case run on the legacy path and on the frontend (set_convolution_path) and compared with a
// float64 direct convolution written from the definition (csrc/ops/testing/
// convolution_reference.h) and with each other; the graph cache, the quiet NotSupported
// contract and the Auto fallback. GPU cases skip without a GPU (fail under
// SLIMCUDA_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/ops/conv/convolution_cudnn.h"
#include "csrc/ops/testing/convolution_reference.h"
#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

namespace ops = slimcuda::ops;

// The path is SLIMCUDA_CONV's value at each call, set by word (any case) or by
// set_convolution_path; a bad word changes nothing.
TEST(ConvolutionPath, FollowsTheSetting) {
  std::string why;
  for (const auto& [word, path] : {std::pair{"legacy", ops::ConvPath::Legacy},
                                   {"frontend", ops::ConvPath::Frontend},
                                   {"Frontend", ops::ConvPath::Frontend},
                                   {"auto", ops::ConvPath::Auto},
                                   {"", ops::ConvPath::Auto}}) {
    ASSERT_EQ(config::set("SLIMCUDA_CONV", word, &why), Error::Ok) << why;
    EXPECT_EQ(ops::convolution_path(), path) << word;
  }
  EXPECT_EQ(config::set("SLIMCUDA_CONV", "fast", &why), Error::InvalidArgument);
  EXPECT_EQ(ops::convolution_path(), ops::ConvPath::Auto);
  ops::set_convolution_path(ops::ConvPath::Legacy);
  std::string value;
  ASSERT_EQ(config::get_text("SLIMCUDA_CONV", &value, &why), Error::Ok);
  EXPECT_EQ(value, "legacy");
  ASSERT_EQ(config::set("SLIMCUDA_CONV", nullptr, &why), Error::Ok) << why;
}

struct Tensor {
  AtenTensorHandle h = nullptr;
  Tensor() = default;
  explicit Tensor(AtenTensorHandle t) : h(t) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& o) noexcept : h(o.h) { o.h = nullptr; }
  ~Tensor() {
    if (h != nullptr) SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h);
  }
};

int32_t dtype_code(const std::string& d) {
  if (d == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (d == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& s, bool channels_last) {
  std::vector<int64_t> t(s.size());
  int64_t acc = channels_last ? s[1] : 1;
  for (size_t i = s.size(); i-- > (channels_last ? 2 : 0);) t[i] = acc, acc *= s[i];
  if (channels_last) t[1] = 1, t[0] = acc;
  return t;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// A packed CUDA tensor holding small values (exact in every dtype).
Tensor make(const std::vector<int64_t>& sizes, bool channels_last, const std::string& dtype, int salt) {
  const std::vector<int64_t> st = strides_of(sizes, channels_last);
  const int32_t code = dtype_code(dtype);
  AtenTensorHandle cpu = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), st.data(), code,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &cpu),
            0)
      << last_error_message();
  Tensor host(cpu);
  void* p = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(cpu, &p);
  const int64_t n = numel(sizes);
  for (int64_t i = 0; i < n; ++i) {
    const float f = static_cast<float>((i * 7 + salt * 13) % 17 - 8) / 16.0f;
    if (dtype == "float32") {
      static_cast<float*>(p)[i] = f;
    } else {
      static_cast<uint16_t*>(p)[i] = dtype == "float16" ? convert::float_to_half(f) : convert::float_to_bfloat16(f);
    }
  }
  AtenTensorHandle dev = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), st.data(), code,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0, &dev),
            0)
      << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(dev, cpu, 0), 0) << last_error_message();
  return Tensor(dev);
}

std::vector<int64_t> sizes_of(AtenTensorHandle t) {
  int64_t nd = 0;
  SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd);
  int64_t* sz = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz);
  return std::vector<int64_t>(sz, sz + nd);
}

// A tensor's values as float32, row-major over its sizes.
std::vector<float> values(AtenTensorHandle t, const std::string& dtype) {
  const std::vector<int64_t> sizes = sizes_of(t), st = strides_of(sizes, false);
  const int64_t nd = static_cast<int64_t>(sizes.size());
  AtenTensorHandle cpu = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), st.data(), dtype_code(dtype),
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &cpu),
            0);
  Tensor host(cpu);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(cpu, t, 0), 0) << last_error_message();
  void* p = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(cpu, &p);
  std::vector<float> f(numel(sizes));
  for (size_t i = 0; i < f.size(); ++i) {
    if (dtype == "float32") {
      f[i] = static_cast<float*>(p)[i];
    } else {
      const uint16_t b = static_cast<uint16_t*>(p)[i];
      f[i] = dtype == "float16" ? convert::half_to_float(b) : convert::bfloat16_to_float(b);
    }
  }
  return f;
}

struct Conv {
  const char* name;
  const char* dtype;
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups;
  bool channels_last, bias, transposed;
};

int32_t run(const Conv& c, AtenTensorHandle x, AtenTensorHandle w, AtenTensorHandle b, AtenTensorHandle* out) {
  const int64_t n = static_cast<int64_t>(c.stride.size());
  return SLIMCUDA_SHIM(aoti_torch_cuda_convolution)(x, w, c.bias ? &b : nullptr, c.stride.data(), n, c.padding.data(),
                                                    n, c.dilation.data(), n, c.transposed ? 1 : 0,
                                                    c.output_padding.data(), n, c.groups, out);
}

std::vector<double> widened(const std::vector<float>& f) { return std::vector<double>(f.begin(), f.end()); }

// |got - want| <= tol * (1 + |want|). The inputs are multiples of 1/16 in [-1/2, 1/2], so
// every product is exact and every sum here (<= 144 terms, |sum| < 36) is exact in float32:
// the float64 reference is the exact result. float32 may run on TF32 (the legacy path's
// CUDNN_DEFAULT_MATH), in which the inputs are exact too, and on Winograd or FFT algorithms,
// which round their transforms (about 1e-6 here): tol 1e-4, under the 1/256 a single wrong
// product moves a sum by. float16 / bfloat16: the output is rounded once to the dtype,
// <= 2^-11 / 2^-8 (3.9e-3) of |want|, plus the 16-bit transforms of such algorithms:
// tol 1e-2 / 4e-2.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::string& dtype,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tol = dtype == "float32" ? 1e-4 : dtype == "float16" ? 1e-2 : 4e-2;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol + tol * std::fabs(want[i]))) {
      ADD_FAILURE() << what << ": element " << i << " = " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

class PathScope {
 public:
  explicit PathScope(ops::ConvPath p) { ops::set_convolution_path(p); }
  ~PathScope() { ops::set_convolution_path(ops::ConvPath::Auto); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;
};

// Two lines a case, in the columns the comments name (clang-format would put a field a line).
// clang-format off
const Conv kCases[] = {
    // name                       dtype       x                w
    //   stride     padding    dilation   output_padding  groups  channels_last  bias   transposed
    {"conv2d_f32_nchw_bias",      "float32",  {2, 8, 9, 9},    {16, 8, 3, 3},
         {1, 1},    {1, 1},    {1, 1},    {0, 0},         1,      false,         true,  false},
    {"conv2d_f32_stride2_nobias", "float32",  {1, 16, 12, 12}, {8, 16, 3, 3},
         {2, 2},    {1, 1},    {1, 1},    {0, 0},         1,      false,         false, false},
    {"depthwise_f16_nchw_bias",   "float16",  {2, 16, 9, 9},   {16, 1, 3, 3},
         {1, 1},    {1, 1},    {1, 1},    {0, 0},         16,     false,         true,  false},
    {"depthwise_f16_nhwc_bias",   "float16",  {2, 16, 9, 9},   {16, 1, 3, 3},
         {1, 1},    {1, 1},    {1, 1},    {0, 0},         16,     true,          true,  false},
    {"pointwise_bf16_nhwc_s2",    "bfloat16", {2, 32, 8, 8},   {16, 32, 1, 1},
         {2, 2},    {0, 0},    {1, 1},    {0, 0},         1,      true,          true,  false},
    {"grouped_f16_nhwc",          "float16",  {1, 16, 7, 7},   {32, 4, 3, 3},
         {1, 1},    {1, 1},    {1, 1},    {0, 0},         4,      true,          true,  false},
    {"conv1d_f16_dilated",        "float16",  {2, 8, 20},      {8, 8, 3},
         {1},       {2},       {2},       {0},            1,      false,         true,  false},
    {"conv3d_f32_s2_bias",        "float32",  {1, 4, 5, 6, 7}, {8, 4, 3, 3, 3},
         {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0},      1,      false,         true,  false},
    {"transposed_f16_outpad",     "float16",  {2, 8, 5, 5},    {8, 4, 3, 3},
         {2, 2},    {1, 1},    {1, 1},    {1, 1},         1,      false,         true,  true},
    {"transposed_f32_groups",     "float32",  {1, 8, 6, 6},    {8, 2, 4, 4},
         {2, 2},    {1, 1},    {1, 1},    {0, 0},         2,      false,         false, true},
};
// clang-format on

// The float64 reference of c on the operands the op reads, copied back (whatever their
// layout) in logical row-major order and widened to double.
ConvolutionReference reference_for(const Conv& c, AtenTensorHandle x, AtenTensorHandle w, AtenTensorHandle b) {
  ConvolutionReference r;
  r.input_sizes = c.x, r.weight_sizes = c.w;
  r.stride = c.stride, r.padding = c.padding, r.dilation = c.dilation, r.output_padding = c.output_padding;
  r.groups = c.groups;
  r.transposed = c.transposed;
  r.input = widened(values(x, c.dtype));
  r.weight = widened(values(w, c.dtype));
  if (b != nullptr) r.bias = widened(values(b, c.dtype));
  return r;
}

TEST(ConvolutionCudnn, MatchesAFloat64ReferenceOnBothPaths) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  for (const Conv& c : kCases) {
    SCOPED_TRACE(c.name);
    const int64_t c_out = c.transposed ? c.w[1] * c.groups : c.w[0];
    Tensor x = make(c.x, c.channels_last, c.dtype, 1), w = make(c.w, c.channels_last, c.dtype, 2);
    Tensor b = c.bias ? make({c_out}, false, c.dtype, 3) : Tensor();
    const ConvolutionReference ref = reference_for(c, x.h, w.h, b.h);
    ASSERT_EQ(ref.check(), "");
    const std::vector<int64_t> want_sizes = ref.output_sizes();
    const std::vector<double> want = ref.output();
    AtenTensorHandle ret = nullptr;

    std::vector<float> legacy;
    {
      PathScope scope(ops::ConvPath::Legacy);
      const uint64_t before = ops::convolution_cudnn_stats().executions;
      ASSERT_EQ(run(c, x.h, w.h, b.h, &ret), 0) << last_error_message();
      Tensor out(ret);
      ASSERT_EQ(sizes_of(out.h), want_sizes);
      legacy = values(out.h, c.dtype);
      EXPECT_EQ(ops::convolution_cudnn_stats().executions, before) << "legacy must not reach the frontend";
    }
    expect_close(legacy, want, c.dtype, "legacy vs float64");

    PathScope scope(ops::ConvPath::Frontend);
    const ops::ConvolutionCudnnStats s0 = ops::convolution_cudnn_stats();
    ASSERT_EQ(run(c, x.h, w.h, b.h, &ret), 0) << last_error_message();
    Tensor out(ret);
    const ops::ConvolutionCudnnStats s1 = ops::convolution_cudnn_stats();
    EXPECT_EQ(s1.executions, s0.executions + 1);
    EXPECT_EQ(s1.graphs_built, s0.graphs_built + 1);
    ASSERT_EQ(sizes_of(out.h), want_sizes);
    const std::vector<float> frontend = values(out.h, c.dtype);
    expect_close(frontend, want, c.dtype, "frontend vs float64");
    expect_close(frontend, widened(legacy), c.dtype, "frontend vs legacy");
    if (s1.unfused_bias != s0.unfused_bias) std::printf("%s: bias added by slimcuda's kernel (not fused)\n", c.name);

    // The second call reuses the graph.
    ASSERT_EQ(run(c, x.h, w.h, b.h, &ret), 0) << last_error_message();
    Tensor again(ret);
    const ops::ConvolutionCudnnStats s2 = ops::convolution_cudnn_stats();
    EXPECT_EQ(s2.graphs_built, s1.graphs_built);
    EXPECT_EQ(s2.executions, s1.executions + 1);
    expect_close(values(again.h, c.dtype), widened(frontend), c.dtype, "frontend, second call");
  }
}

// An input 2 bytes past a 16-byte boundary: the frontend declines (its graphs promise 16-byte
// alignment); Frontend makes that an error naming the reason, Auto falls back to the legacy
// path, which computes the same result.
TEST(ConvolutionCudnn, MisalignedInputDeclinesQuietly) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const Conv c = {"misaligned", "float16", {1, 8, 6, 6}, {8, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1},
                  {0, 0},       1,         false,        false,        false};
  Tensor buf = make({1 + 8 * 6 * 6}, false, c.dtype, 1);
  void* base = nullptr;
  SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(buf.h, &base);
  const std::vector<int64_t> st = strides_of(c.x, false);
  AtenTensorHandle xh = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(static_cast<char*>(base) + 2, 4, c.x.data(), st.data(), 0,
                                                              dtype_code(c.dtype),
                                                              SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0, &xh),
            0)
      << last_error_message();
  Tensor x(xh);
  Tensor w = make(c.w, false, c.dtype, 2);
  const ConvolutionReference ref = reference_for(c, x.h, w.h, nullptr);
  ASSERT_EQ(ref.check(), "");
  AtenTensorHandle ret = nullptr;
  std::vector<float> legacy;
  {
    PathScope scope(ops::ConvPath::Legacy);
    ASSERT_EQ(run(c, x.h, w.h, nullptr, &ret), 0) << last_error_message();
    Tensor out(ret);
    legacy = values(out.h, c.dtype);
  }
  expect_close(legacy, ref.output(), c.dtype, "legacy vs float64");
  {
    PathScope scope(ops::ConvPath::Frontend);
    ret = nullptr;
    EXPECT_EQ(run(c, x.h, w.h, nullptr, &ret), static_cast<int32_t>(Error::NotSupported));
    EXPECT_EQ(ret, nullptr);
    EXPECT_NE(std::strstr(last_error_message(), "16-byte aligned"), nullptr) << last_error_message();
  }
  PathScope scope(ops::ConvPath::Auto);
  const uint64_t before = ops::convolution_cudnn_stats().executions;
  ASSERT_EQ(run(c, x.h, w.h, nullptr, &ret), 0) << last_error_message();
  Tensor out(ret);
  EXPECT_EQ(ops::convolution_cudnn_stats().executions, before);
  EXPECT_NE(std::strstr(ops::convolution_cudnn_unsupported_reason(), "16-byte aligned"), nullptr);
  expect_close(values(out.h, c.dtype), widened(legacy), c.dtype, "auto (legacy fallback) vs legacy");
}

}  // namespace
}  // namespace slimcuda::testing
