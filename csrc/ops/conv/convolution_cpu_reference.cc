// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/conv/convolution_cpu.h"  // convolution_cpu_reference

#include <vector>

#include "csrc/ops/common/cpu_elements.h"

namespace slimcuda::ops {

void conv_strides_5d(const SlimTensor& t, int spatial, int64_t s[5]) {
  s[0] = t.strides()[0];
  s[1] = t.strides()[1];
  for (int i = 0; i < 3; ++i) s[2 + i] = 0;
  for (int d = 0; d < spatial; ++d) s[2 + 3 - spatial + d] = t.strides()[2 + d];
}

Error convolution_cpu_reference(const ConvProblem& p, const SlimTensor& out) {
  const ScalarType t = p.dtype;
  const char* in = static_cast<const char*>(p.input->data_ptr());
  const char* w = static_cast<const char*>(p.weight->data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  int64_t is[5], ws[5], os[5];
  conv_strides_5d(*p.input, p.spatial, is);
  conv_strides_5d(*p.weight, p.spatial, ws);
  conv_strides_5d(out, p.spatial, os);
  const int64_t cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups;
  const int64_t out_plane = p.out[0] * p.out[1] * p.out[2];
  std::vector<double> acc(static_cast<size_t>(out_plane));
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t co = 0; co < p.c_out; ++co) {
      const int64_t g = co / cout_g;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t cig = 0; cig < cin_g; ++cig) {
        const int64_t ci = g * cin_g + cig;
        // Weight element for (co, ci) at kernel position: forward [Cout, Cin/g, k...],
        // transposed [Cin, Cout/g, k...].
        const int64_t wbase = p.transposed ? ci * ws[0] + (co - g * cout_g) * ws[1] : co * ws[0] + cig * ws[1];
        for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
          for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
            for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
              const double wv = load_element(w, t, wbase + kd * ws[2] + kh * ws[3] + kw * ws[4]);
              const int64_t k[3] = {kd, kh, kw};
              if (!p.transposed) {
                // out[o] += in[o * stride - padding + k * dilation] * w[k]
                for (int64_t od = 0; od < p.out[0]; ++od) {
                  const int64_t id = od * p.stride[0] - p.padding[0] + k[0] * p.dilation[0];
                  if (id < 0 || id >= p.in[0]) continue;
                  for (int64_t oh = 0; oh < p.out[1]; ++oh) {
                    const int64_t ih = oh * p.stride[1] - p.padding[1] + k[1] * p.dilation[1];
                    if (ih < 0 || ih >= p.in[1]) continue;
                    for (int64_t ow = 0; ow < p.out[2]; ++ow) {
                      const int64_t iw = ow * p.stride[2] - p.padding[2] + k[2] * p.dilation[2];
                      if (iw < 0 || iw >= p.in[2]) continue;
                      acc[(od * p.out[1] + oh) * p.out[2] + ow] +=
                          wv * load_element(in, t, n * is[0] + ci * is[1] + id * is[2] + ih * is[3] + iw * is[4]);
                    }
                  }
                }
              } else {
                // The adjoint: out[i * stride - padding + k * dilation] += in[i] * w[k]
                for (int64_t id = 0; id < p.in[0]; ++id) {
                  const int64_t od = id * p.stride[0] - p.padding[0] + k[0] * p.dilation[0];
                  if (od < 0 || od >= p.out[0]) continue;
                  for (int64_t ih = 0; ih < p.in[1]; ++ih) {
                    const int64_t oh = ih * p.stride[1] - p.padding[1] + k[1] * p.dilation[1];
                    if (oh < 0 || oh >= p.out[1]) continue;
                    for (int64_t iw = 0; iw < p.in[2]; ++iw) {
                      const int64_t ow = iw * p.stride[2] - p.padding[2] + k[2] * p.dilation[2];
                      if (ow < 0 || ow >= p.out[2]) continue;
                      acc[(od * p.out[1] + oh) * p.out[2] + ow] +=
                          wv * load_element(in, t, n * is[0] + ci * is[1] + id * is[2] + ih * is[3] + iw * is[4]);
                    }
                  }
                }
              }
            }
      }
      const double bias = p.bias != nullptr
                              ? load_element(static_cast<const char*>(p.bias->data_ptr()), t, co * p.bias->strides()[0])
                              : 0.0;
      for (int64_t od = 0; od < p.out[0]; ++od)
        for (int64_t oh = 0; oh < p.out[1]; ++oh)
          for (int64_t ow = 0; ow < p.out[2]; ++ow)
            store_element(o, t, n * os[0] + co * os[1] + od * os[2] + oh * os[3] + ow * os[4],
                          acc[(od * p.out[1] + oh) * p.out[2] + ow] + bias);
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
