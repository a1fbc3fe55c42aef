// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/testing/convolution_reference.h"

namespace slimcuda::testing {
namespace {

// Spatial sizes and parameters padded to three dimensions (leading size-1 dimensions with
// stride 1, no padding, dilation 1), so one loop nest serves conv1d, conv2d and conv3d.
struct Spatial {
  int64_t in[3], k[3], out[3], s[3], p[3], d[3];
};

Spatial spatial(const ConvolutionReference& c, const std::vector<int64_t>& out_sizes) {
  Spatial sp;
  const size_t n = c.input_sizes.size() - 2, lead = 3 - n;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= lead;
    sp.in[i] = real ? c.input_sizes[2 + i - lead] : 1;
    sp.k[i] = real ? c.weight_sizes[2 + i - lead] : 1;
    sp.out[i] = real ? out_sizes[2 + i - lead] : 1;
    sp.s[i] = real ? c.stride[i - lead] : 1;
    sp.p[i] = real ? c.padding[i - lead] : 0;
    sp.d[i] = real ? c.dilation[i - lead] : 1;
  }
  return sp;
}

int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}

// Row-major offset of spatial position (z, y, x) within one channel of extent e.
int64_t offset(const int64_t e[3], int64_t z, int64_t y, int64_t x) { return (z * e[1] + y) * e[2] + x; }

}  // namespace

std::string ConvolutionReference::check() const {
  const size_t nd = input_sizes.size();
  if (nd < 3 || nd > 5) return "input must have 1 to 3 spatial dimensions";
  if (weight_sizes.size() != nd) return "weight and input ranks differ";
  const size_t n = nd - 2;
  if (stride.size() != n || padding.size() != n || dilation.size() != n || output_padding.size() != n) {
    return "stride, padding, dilation and output_padding need one value per spatial dimension";
  }
  for (int64_t s : input_sizes) {
    if (s < 1) return "input sizes must be positive";
  }
  for (int64_t s : weight_sizes) {
    if (s < 1) return "weight sizes must be positive";
  }
  if (groups < 1) return "groups must be positive";
  const int64_t c_in = input_sizes[1];
  if (c_in % groups != 0) return "C_in must be a multiple of groups";
  if (!transposed && weight_sizes[1] * groups != c_in) return "weight's dimension 1 must be C_in / groups";
  if (!transposed && weight_sizes[0] % groups != 0) return "C_out must be a multiple of groups";
  if (transposed && weight_sizes[0] != c_in) return "a transposed weight's dimension 0 must be C_in";
  for (size_t i = 0; i < n; ++i) {
    if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0 || output_padding[i] < 0) {
      return "stride and dilation must be positive, padding and output_padding not negative";
    }
    if (!transposed && output_padding[i] != 0) return "output_padding is for transposed convolutions";
  }
  for (int64_t s : output_sizes()) {
    if (s < 1) return "the output would be empty";
  }
  if (static_cast<int64_t>(input.size()) != product(input_sizes, 0)) return "input has the wrong size";
  if (static_cast<int64_t>(weight.size()) != product(weight_sizes, 0)) return "weight has the wrong size";
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != output_sizes()[1]) return "bias must have C_out values";
  return "";
}

std::vector<int64_t> ConvolutionReference::output_sizes() const {
  const size_t n = input_sizes.size() - 2;
  std::vector<int64_t> out = {input_sizes[0], transposed ? weight_sizes[1] * groups : weight_sizes[0]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = input_sizes[2 + i], k = weight_sizes[2 + i];
    if (transposed) {
      out.push_back((in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + output_padding[i] + 1);
    } else {
      const int64_t span = in + 2 * padding[i] - dilation[i] * (k - 1) - 1;
      out.push_back(span < 0 ? 0 : span / stride[i] + 1);
    }
  }
  return out;
}

std::vector<double> ConvolutionReference::output() const {
  const std::vector<int64_t> out_sizes = output_sizes();
  const Spatial sp = spatial(*this, out_sizes);
  const int64_t batch = input_sizes[0], c_in = input_sizes[1], c_out = out_sizes[1];
  const int64_t in_plane = product(input_sizes, 2), out_plane = product(out_sizes, 2),
                k_plane = product(weight_sizes, 2);
  std::vector<double> out(static_cast<size_t>(batch * c_out * out_plane), 0.0);
  auto inside = [](int64_t pos, int64_t extent) { return pos >= 0 && pos < extent; };

  if (!transposed) {
    const int64_t cg = c_in / groups, og = c_out / groups;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t oc = 0; oc < c_out; ++oc)
        for (int64_t oz = 0; oz < sp.out[0]; ++oz)
          for (int64_t oy = 0; oy < sp.out[1]; ++oy)
            for (int64_t ox = 0; ox < sp.out[2]; ++ox) {
              double acc = 0.0;
              for (int64_t c = 0; c < cg; ++c) {
                const int64_t ic = (oc / og) * cg + c;
                const double* x = input.data() + (n * c_in + ic) * in_plane;
                const double* w = weight.data() + (oc * cg + c) * k_plane;
                for (int64_t tz = 0; tz < sp.k[0]; ++tz)
                  for (int64_t ty = 0; ty < sp.k[1]; ++ty)
                    for (int64_t tx = 0; tx < sp.k[2]; ++tx) {
                      const int64_t iz = oz * sp.s[0] - sp.p[0] + tz * sp.d[0];
                      const int64_t iy = oy * sp.s[1] - sp.p[1] + ty * sp.d[1];
                      const int64_t ix = ox * sp.s[2] - sp.p[2] + tx * sp.d[2];
                      if (!inside(iz, sp.in[0]) || !inside(iy, sp.in[1]) || !inside(ix, sp.in[2])) continue;
                      acc += x[offset(sp.in, iz, iy, ix)] * w[offset(sp.k, tz, ty, tx)];
                    }
              }
              out[(n * c_out + oc) * out_plane + offset(sp.out, oz, oy, ox)] = acc;
            }
  } else {
    // The scatter form: the transpose of the forward map, not a gather rewritten.
    const int64_t cg = c_in / groups, og = c_out / groups;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t ic = 0; ic < c_in; ++ic)
        for (int64_t iz = 0; iz < sp.in[0]; ++iz)
          for (int64_t iy = 0; iy < sp.in[1]; ++iy)
            for (int64_t ix = 0; ix < sp.in[2]; ++ix) {
              const double xv = input[(n * c_in + ic) * in_plane + offset(sp.in, iz, iy, ix)];
              for (int64_t c = 0; c < og; ++c) {
                const int64_t oc = (ic / cg) * og + c;
                const double* w = weight.data() + (ic * og + c) * k_plane;
                for (int64_t tz = 0; tz < sp.k[0]; ++tz)
                  for (int64_t ty = 0; ty < sp.k[1]; ++ty)
                    for (int64_t tx = 0; tx < sp.k[2]; ++tx) {
                      const int64_t oz = iz * sp.s[0] - sp.p[0] + tz * sp.d[0];
                      const int64_t oy = iy * sp.s[1] - sp.p[1] + ty * sp.d[1];
                      const int64_t ox = ix * sp.s[2] - sp.p[2] + tx * sp.d[2];
                      if (!inside(oz, sp.out[0]) || !inside(oy, sp.out[1]) || !inside(ox, sp.out[2])) continue;
                      out[(n * c_out + oc) * out_plane + offset(sp.out, oz, oy, ox)] +=
                          xv * w[offset(sp.k, tz, ty, tx)];
                    }
              }
            }
  }
  if (!bias.empty()) {
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t oc = 0; oc < c_out; ++oc)
        for (int64_t i = 0; i < out_plane; ++i) out[(n * c_out + oc) * out_plane + i] += bias[oc];
  }
  return out;
}

}  // namespace slimcuda::testing
