// SPDX-License-Identifier: Apache-2.0
// The CPU convolution on OpenBLAS (im2col; col2im for transposed ones) gives the reference
// loops' values: 1-D, 2-D and 3-D, groups (depthwise too), strides, padding, dilation, output
// padding, bias, a channels-last input and channels-last weights, float32/float16/bfloat16,
// and more output positions than one block of columns.
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/conv/convolution_cpu.h"
#include "csrc/tensor/slim_tensor.h"

namespace slimcuda::ops {
namespace {

struct Buffer {
  std::vector<char> bytes;
  std::unique_ptr<SlimTensor> tensor;
};

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;) s[i] = s[i + 1] * sizes[i + 1];
  return s;
}

Buffer make(ScalarType t, const std::vector<int64_t>& sizes, std::vector<int64_t> strides, uint32_t seed) {
  int64_t n = 1;
  for (int64_t x : sizes) n *= x;
  Buffer b;
  b.bytes.resize(static_cast<size_t>(n) * element_size(t));
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    store_element(b.bytes.data(), t, i, static_cast<double>(seed >> 8) / static_cast<double>(1u << 23) - 1.0);
  }
  b.tensor = std::make_unique<SlimTensor>(Storage::borrow(b.bytes.data(), b.bytes.size(), Device{DeviceType::CPU, 0}),
                                          sizes, std::move(strides), t, 0);
  return b;
}

struct Case {
  ScalarType t;
  int spatial;
  int64_t n, c_in, c_out, groups, in, kernel, stride, padding, dilation;
  bool bias, channels_last;
  bool weights_channels_last = false;  // as Inductor's CPU layout optimization leaves them
  bool transposed = false;
  int64_t output_padding = 0;
};

void run(const Case& c) {
  SCOPED_TRACE(testing::Message() << "dtype " << static_cast<int>(c.t) << " spatial " << c.spatial << " cin " << c.c_in
                                  << " cout " << c.c_out << " groups " << c.groups << " in " << c.in << " k "
                                  << c.kernel << " s " << c.stride << " p " << c.padding << " d " << c.dilation);
  ConvProblem p;
  p.spatial = c.spatial, p.n = c.n, p.c_in = c.c_in, p.c_out = c.c_out, p.groups = c.groups, p.dtype = c.t;
  p.transposed = c.transposed;
  std::vector<int64_t> in_sizes = {c.n, c.c_in}, out_sizes = {c.n, c.c_out};
  std::vector<int64_t> w_sizes = c.transposed ? std::vector<int64_t>{c.c_in, c.c_out / c.groups}
                                              : std::vector<int64_t>{c.c_out, c.c_in / c.groups};
  for (int d = 0; d < c.spatial; ++d) {
    const int slot = 3 - c.spatial + d;
    p.in[slot] = c.in, p.kernel[slot] = c.kernel, p.stride[slot] = c.stride, p.padding[slot] = c.padding;
    p.dilation[slot] = c.dilation;
    p.output_padding[slot] = c.output_padding;
    p.out[slot] = c.transposed
                      ? (c.in - 1) * c.stride - 2 * c.padding + c.dilation * (c.kernel - 1) + c.output_padding + 1
                      : (c.in + 2 * c.padding - c.dilation * (c.kernel - 1) - 1) / c.stride + 1;
    in_sizes.push_back(c.in), w_sizes.push_back(c.kernel), out_sizes.push_back(p.out[slot]);
  }
  Buffer in = make(c.t, in_sizes, c.channels_last ? channels_last_strides(in_sizes) : contiguous(in_sizes), 1);
  Buffer w = make(c.t, w_sizes, c.weights_channels_last ? channels_last_strides(w_sizes) : contiguous(w_sizes), 2),
         b = make(c.t, {c.c_out}, {1}, 3);
  p.input = in.tensor.get(), p.weight = w.tensor.get(), p.bias = c.bias ? b.tensor.get() : nullptr;
  p.channels_last = c.channels_last;
  Buffer out = make(c.t, out_sizes, contiguous(out_sizes), 4), want = make(c.t, out_sizes, contiguous(out_sizes), 4);
  ASSERT_EQ(convolution_cpu_reference(p, *want.tensor), Error::Ok);
  ASSERT_EQ(convolution_cpu(p, *out.tensor), Error::Ok);
  const double patch = static_cast<double>(c.c_in / c.groups) * std::pow(static_cast<double>(c.kernel), c.spatial);
  const double abs_tol = (c.t == ScalarType::Float ? 1e-6 : 1e-4) * (patch + 1);
  const double rel_tol = c.t == ScalarType::Float ? 1e-6 : c.t == ScalarType::Half ? 0x1p-10 : 0x1p-7;
  int64_t bad = 0;
  const int64_t elements = static_cast<int64_t>(out.bytes.size() / element_size(c.t));
  for (int64_t i = 0; i < elements; ++i) {
    const double got = load_element(out.bytes.data(), c.t, i), ref = load_element(want.bytes.data(), c.t, i);
    if (!(std::fabs(got - ref) <= abs_tol + rel_tol * std::fabs(ref)) && bad++ < 5) {
      ADD_FAILURE() << "element " << i << ": " << got << ", reference " << ref;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(ConvolutionCpu, Im2colBlasMatchesTheReference) {
  for (ScalarType t : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16}) {
    for (int spatial : {1, 2, 3}) {
      run({t, spatial, 2, 4, 6, 1, 7, 3, 1, 1, 1, true, false});
      run({t, spatial, 1, 6, 6, 3, 8, 3, 2, 2, 2, false, false});  // groups, stride, dilation
      run({t, spatial, 2, 4, 4, 4, 6, 3, 1, 0, 1, true, false});   // depthwise
    }
    run({t, 2, 2, 8, 5, 1, 9, 1, 1, 0, 1, true, true});  // 1x1 over a channels-last input
    for (int spatial : {1, 2, 3}) {
      run({t, spatial, 2, 6, 4, 1, 7, 3, 1, 1, 1, true, true, true});    // channels-last weights
      run({t, spatial, 1, 6, 6, 2, 8, 3, 2, 1, 1, false, false, true});  // and groups
    }
    run({t, 2, 1, 3, 4, 1, 10, 5, 3, 2, 1, true, true});
  }
}

TEST(ConvolutionCpu, TransposedOnBlasMatchesTheReference) {
  for (ScalarType t : {ScalarType::Float, ScalarType::Half, ScalarType::BFloat16}) {
    for (int spatial : {1, 2, 3}) {
      // UNet's 2x2 stride-2 upsampling, then padding, dilation, groups and output padding.
      run({t, spatial, 2, 6, 4, 1, 5, 2, 2, 0, 1, true, false, false, true, 0});
      run({t, spatial, 1, 4, 6, 2, 6, 3, 2, 1, 2, false, false, false, true, 1});
      run({t, spatial, 2, 3, 3, 3, 4, 3, 1, 1, 1, true, true, false, true, 0});
    }
  }
}

TEST(ConvolutionCpu, MoreOutputPositionsThanOneBlock) {
  // patch 3 * 7 * 7 = 147: a block is 16 Mi / 147 = 114,130 positions; 400 x 400 are more.
  run({ScalarType::Float, 2, 1, 3, 2, 1, 400, 7, 1, 3, 1, true, false});
}

}  // namespace
}  // namespace slimcuda::ops
