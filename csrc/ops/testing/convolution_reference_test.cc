// SPDX-License-Identifier: Apache-2.0
// The float64 convolution reference against values worked out by hand from the definition,
// and its transposed form against the forward one through the identity that defines it:
// conv_transpose is the adjoint of conv, <conv(x, w), y> = <x, conv_transpose(y, w)>.
#include "csrc/ops/testing/convolution_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace slimcuda::testing {
namespace {

ConvolutionReference conv1d(std::vector<double> x, std::vector<double> w, int64_t stride, int64_t padding,
                            int64_t dilation) {
  ConvolutionReference c;
  c.input_sizes = {1, 1, static_cast<int64_t>(x.size())};
  c.weight_sizes = {1, 1, static_cast<int64_t>(w.size())};
  c.stride = {stride}, c.padding = {padding}, c.dilation = {dilation}, c.output_padding = {0};
  c.input = std::move(x), c.weight = std::move(w);
  return c;
}

TEST(ConvolutionReference, Conv1dByHand) {
  // out[o] = x[o*s - p] + 10 x[o*s - p + d] + 100 x[o*s - p + 2d], x zero outside [0, 4).
  ConvolutionReference c = conv1d({1, 2, 3, 4}, {1, 10, 100}, 1, 1, 1);
  ASSERT_EQ(c.check(), "");
  EXPECT_EQ(c.output_sizes(), (std::vector<int64_t>{1, 1, 4}));
  EXPECT_EQ(c.output(), (std::vector<double>{210, 321, 432, 43}));
  c = conv1d({1, 2, 3, 4}, {1, 10, 100}, 2, 1, 1);
  EXPECT_EQ(c.output(), (std::vector<double>{210, 432}));
  c = conv1d({1, 2, 3, 4}, {1, 10, 100}, 1, 2, 2);
  EXPECT_EQ(c.output(), (std::vector<double>{310, 420, 31, 42}));
  c.bias = {0.5};
  EXPECT_EQ(c.output(), (std::vector<double>{310.5, 420.5, 31.5, 42.5}));
}

TEST(ConvolutionReference, GroupsSeeOnlyTheirOwnChannels) {
  // Two groups of one channel each (depthwise), a 1x1 kernel: out channel g = w[g] * x channel g.
  ConvolutionReference c;
  c.input_sizes = {1, 2, 1, 2};
  c.weight_sizes = {2, 1, 1, 1};
  c.stride = {1, 1}, c.padding = {0, 0}, c.dilation = {1, 1}, c.output_padding = {0, 0};
  c.groups = 2;
  c.input = {1, 2, 3, 4};
  c.weight = {10, 100};
  ASSERT_EQ(c.check(), "");
  EXPECT_EQ(c.output(), (std::vector<double>{10, 20, 300, 400}));
}

TEST(ConvolutionReference, TransposedByHand) {
  // Stride 2: each input scatters w at 2i - p; x = {1, 2}, w = {1, 10, 100}, p = 0:
  // out = {1, 10, 100 + 2, 20, 200}; output_padding 1 adds one (zero) element at the end.
  ConvolutionReference c = conv1d({1, 2}, {1, 10, 100}, 2, 0, 1);
  c.transposed = true;
  ASSERT_EQ(c.check(), "");
  EXPECT_EQ(c.output(), (std::vector<double>{1, 10, 102, 20, 200}));
  c.output_padding = {1};
  EXPECT_EQ(c.output(), (std::vector<double>{1, 10, 102, 20, 200, 0}));
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> ramp(int64_t n, double a, double b) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(a * static_cast<double>(i) + b);
  return v;
}

TEST(ConvolutionReference, TransposedIsTheAdjointOfForward) {
  // conv2d x [1, 4, 7, 6] -> y [1, 6, 4, 2] with w [6, 2, 3, 2], groups 2, stride 2, padding
  // {1, 0}, dilation {1, 2}; conv_transpose2d of y with the same w (read as [C_in = 6,
  // C_out / groups = 2, 3, 2]) and output_padding {0, 1} gives x's sizes back.
  ConvolutionReference f;
  f.input_sizes = {1, 4, 7, 6};
  f.weight_sizes = {6, 2, 3, 2};
  f.stride = {2, 2}, f.padding = {1, 0}, f.dilation = {1, 2}, f.output_padding = {0, 0};
  f.groups = 2;
  f.input = ramp(4 * 7 * 6, 0.37, 0.1);
  f.weight = ramp(6 * 2 * 3 * 2, 0.91, 0.5);
  ASSERT_EQ(f.check(), "");
  ASSERT_EQ(f.output_sizes(), (std::vector<int64_t>{1, 6, 4, 2}));

  ConvolutionReference t = f;
  t.transposed = true;
  t.input_sizes = f.output_sizes();
  t.input = ramp(6 * 4 * 2, 0.53, 0.2);
  t.output_padding = {0, 1};
  ASSERT_EQ(t.check(), "");
  ASSERT_EQ(t.output_sizes(), f.input_sizes);
  const double lhs = dot(f.output(), t.input), rhs = dot(f.input, t.output());
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::fabs(lhs)) << "conv_transpose is conv's adjoint";
  EXPECT_GT(std::fabs(lhs), 1.0);
}

TEST(ConvolutionReference, CheckNamesWhatDoesNotFit) {
  ConvolutionReference c = conv1d({1, 2, 3, 4}, {1, 10, 100}, 1, 0, 1);
  EXPECT_EQ(c.check(), "");
  c.output_padding = {1};
  EXPECT_EQ(c.check(), "output_padding is for transposed convolutions");
  c = conv1d({1, 2}, {1, 10, 100}, 1, 0, 1);
  EXPECT_EQ(c.check(), "the output would be empty");
  c = conv1d({1, 2, 3, 4}, {1, 10, 100}, 1, 0, 1);
  c.bias = {1, 2};
  EXPECT_EQ(c.check(), "bias must have C_out values");
}

}  // namespace
}  // namespace slimcuda::testing
