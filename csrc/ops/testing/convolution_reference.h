// SPDX-License-Identifier: Apache-2.0
#pragma once

// Convolution in double, written from its definition (PyTorch's torch.nn.functional.conv1d/2d/3d
// and conv_transpose1d/2d/3d) for tests to check slimcuda's convolutions against; it shares
// no code with slimcuda. Operands are packed row-major over their logical sizes (N, C,
// spatial...), whatever layout the op under test stored them in (NCHW or NHWC).
//   forward:    out[n, oc, o] = bias[oc] + sum_{c, t} x[n, G*Cg + c, o*stride - padding + t*dilation] w[oc, c, t]
//               with Cg = C_in / groups, G = oc / (C_out / groups), x zero outside the input;
//   transposed: every input element scatters x[n, ic, i] * w[ic, c, t] into
//               out[n, G*Og + c, i*stride - padding + t*dilation] (kept where inside the output),
//               with Og = C_out / groups, G = ic / (C_in / groups); then bias[oc] is added.
// (o, i and t are spatial multi-indices; the arithmetic is per spatial dimension.)

#include <cstdint>
#include <string>
#include <vector>

namespace slimcuda::testing {

struct ConvolutionReference {
  std::vector<int64_t> input_sizes;   ///< [N, C_in, spatial...], 1 to 3 spatial dimensions
  std::vector<int64_t> weight_sizes;  ///< [C_out, C_in / groups, k...]; transposed: [C_in, C_out / groups, k...]
  /// One per spatial dimension (output_padding: transposed only, zeros otherwise).
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  std::vector<double> input, weight;
  std::vector<double> bias;  ///< [C_out], or empty

  /// "" when the sizes and operands fit together; else what does not.
  [[nodiscard]] std::string check() const;

  /// [N, C_out, spatial...]: forward (in + 2p - d(k - 1) - 1) / s + 1, rounded down;
  /// transposed (in - 1) s - 2p + d(k - 1) + output_padding + 1.
  [[nodiscard]] std::vector<int64_t> output_sizes() const;

  /// The output, packed row-major over output_sizes().
  [[nodiscard]] std::vector<double> output() const;
};

}  // namespace slimcuda::testing
