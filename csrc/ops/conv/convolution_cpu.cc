// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/conv/convolution_cpu.h"

#include <cblas.h>

#include <climits>
#include <vector>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/common/cpu_threads.h"

namespace slimcuda::ops {
namespace {

// Output positions per block: the columns buffer (patch size x block floats) stays near
// 64 MB or less whatever the image size.
int64_t block_for(int64_t patch, int64_t positions) {
  const int64_t budget = (int64_t{16} << 20) / (patch > 0 ? patch : 1);
  const int64_t b = budget < 64 ? 64 : budget;
  return b < positions ? b : positions;
}

struct Geometry {
  int64_t is[5], ws[5], os[5];
  int64_t cin_g, cout_g, patch, positions;
  /// The patch's order: input channel innermost (the weights are channels-last, as
  /// Inductor's CPU layout optimization leaves them) or outermost (contiguous weights).
  bool channels_inner;
};

// Positions [d, h, w] of a 3-D extent walked in row-major order from a linear start: the
// counters advance without a division per element.
struct Walk3 {
  const int64_t* size;
  int64_t d, h, w;
  Walk3(const int64_t (&extent)[3], int64_t start)
      : size(extent), d(start / (extent[1] * extent[2])), h((start / extent[2]) % extent[1]), w(start % extent[2]) {}
  void next() {
    if (++w == size[2]) {
      w = 0;
      if (++h == size[1]) h = 0, ++d;
    }
  }
};

// One row of the columns (input channel ci's plane, kernel offset kd/kh/kw) for output
// positions [p0, p0 + count), walking the output positions with counters (no division per
// element); `load(offset)` reads one input element as float.
template <typename Load>
void unfold_row(const ConvProblem& p, const Geometry& gm, int64_t cbase, int64_t kd, int64_t kh, int64_t kw, int64_t p0,
                int64_t count, float* row, Load load) {
  Walk3 o(p.out, p0);
  for (int64_t c = 0; c < count; ++c, o.next()) {
    const int64_t id = o.d * p.stride[0] - p.padding[0] + kd * p.dilation[0];
    const int64_t ih = o.h * p.stride[1] - p.padding[1] + kh * p.dilation[1];
    const int64_t iw = o.w * p.stride[2] - p.padding[2] + kw * p.dilation[2];
    const bool inside = id >= 0 && id < p.in[0] && ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2];
    row[c] = inside ? load(cbase + id * gm.is[2] + ih * gm.is[3] + iw * gm.is[4]) : 0.0f;
  }
}

// Columns [patch, count] of image n, group g, for output positions [p0, p0 + count): each
// column the input values one output position's kernel window covers (0 outside). The
// rows on OpenMP threads (CpuThreadScope's count).
void unfold(const ConvProblem& p, const Geometry& gm, const char* in, int64_t n, int64_t g, int64_t p0, int64_t count,
            std::vector<float>& cols) {
  cols.resize(static_cast<size_t>(gm.patch * count));
  const int64_t kvol = p.kernel[0] * p.kernel[1] * p.kernel[2];
  const bool f32 = p.dtype == ScalarType::Float;
  const auto* in_f = reinterpret_cast<const float*>(in);
#pragma omp parallel for if (gm.patch * count >= (int64_t{1} << 15))
  for (int64_t r = 0; r < gm.patch; ++r) {
    const int64_t cig = gm.channels_inner ? r % gm.cin_g : r / kvol;
    const int64_t kk = gm.channels_inner ? r / gm.cin_g : r % kvol;
    const int64_t kd = kk / (p.kernel[1] * p.kernel[2]), kh = (kk / p.kernel[2]) % p.kernel[1], kw = kk % p.kernel[2];
    const int64_t cbase = n * gm.is[0] + (g * gm.cin_g + cig) * gm.is[1];
    float* row = cols.data() + r * count;
    if (f32) {
      unfold_row(p, gm, cbase, kd, kh, kw, p0, count, row, [in_f](int64_t at) { return in_f[at]; });
    } else {
      unfold_row(p, gm, cbase, kd, kh, kw, p0, count, row,
                 [in, &p](int64_t at) { return static_cast<float>(load_element(in, p.dtype, at)); });
    }
  }
}

// Group g's weights as a row-major [cout_g, patch] float matrix.
void pack_weights(const ConvProblem& p, const Geometry& gm, const char* w, int64_t g, std::vector<float>& into) {
  into.resize(static_cast<size_t>(gm.cout_g * gm.patch));
  const int64_t kvol = p.kernel[0] * p.kernel[1] * p.kernel[2];
  for (int64_t co = 0; co < gm.cout_g; ++co) {
    for (int64_t cig = 0; cig < gm.cin_g; ++cig) {
      const int64_t base = (g * gm.cout_g + co) * gm.ws[0] + cig * gm.ws[1];
      for (int64_t kk = 0; kk < kvol; ++kk) {
        const int64_t kd = kk / (p.kernel[1] * p.kernel[2]), kh = (kk / p.kernel[2]) % p.kernel[1],
                      kw = kk % p.kernel[2];
        into[co * gm.patch + (gm.channels_inner ? kk * gm.cin_g + cig : cig * kvol + kk)] =
            static_cast<float>(load_element(w, p.dtype, base + kd * gm.ws[2] + kh * gm.ws[3] + kw * gm.ws[4]));
      }
    }
  }
}

// The block's [cout_g, count] products, with bias, into out at output positions
// [p0, p0 + count).
void store_block(const ConvProblem& p, const Geometry& gm, char* o_bytes, const char* bias, int64_t n, int64_t g,
                 int64_t p0, int64_t count, const std::vector<float>& acc) {
#pragma omp parallel for if (gm.cout_g * count >= (int64_t{1} << 15))
  for (int64_t co = 0; co < gm.cout_g; ++co) {
    const int64_t c = g * gm.cout_g + co;
    const double b = bias != nullptr ? load_element(bias, p.dtype, c * p.bias->strides()[0]) : 0.0;
    const float* a = acc.data() + co * count;
    const int64_t base = n * gm.os[0] + c * gm.os[1];
    Walk3 o(p.out, p0);
    for (int64_t k = 0; k < count; ++k, o.next()) {
      const int64_t at = base + o.d * gm.os[2] + o.h * gm.os[3] + o.w * gm.os[4];
      if (p.dtype == ScalarType::Float) {
        reinterpret_cast<float*>(o_bytes)[at] = a[k] + static_cast<float>(b);
      } else {
        store_element(o_bytes, p.dtype, at, static_cast<double>(a[k]) + b);
      }
    }
  }
}

// Whether the weights already are each group's row-major [cout_g, patch] float matrix in
// the patch order gm says (float32; contiguous weights for channels outermost, channels-last
// ones for channels innermost): then BLAS reads them in place, with the output channel's
// stride as the leading dimension, instead of a copy on every call.
bool weights_are_a_matrix(const ConvProblem& p, const Geometry& gm) {
  const int64_t k0 = p.kernel[0], k1 = p.kernel[1], k2 = p.kernel[2], kvol = k0 * k1 * k2;
  const int64_t c = gm.channels_inner ? 1 : kvol;         // an input channel's stride
  const int64_t unit = gm.channels_inner ? gm.cin_g : 1;  // the innermost kernel offset's
  return p.dtype == ScalarType::Float && (k2 == 1 || gm.ws[4] == unit) && (k1 == 1 || gm.ws[3] == k2 * unit) &&
         (k0 == 1 || gm.ws[2] == k1 * k2 * unit) && (gm.cin_g == 1 || gm.ws[1] == c) &&
         (gm.cout_g == 1 || gm.ws[0] >= gm.patch) && gm.ws[0] <= INT_MAX && gm.ws[0] >= 1;
}

bool fits_blas(const ConvProblem& p, const Geometry& gm) {
  return !p.transposed && gm.patch > 0 && gm.patch <= INT_MAX && gm.cout_g <= INT_MAX &&
         gm.patch * block_for(gm.patch, gm.positions) <= INT_MAX;
}

// A transposed convolution as BLAS takes it: per image and group, the products of every
// input position with every (output channel, kernel offset) by one sgemm (the weights'
// [cin_g, cout_g * kvol] matrix transposed, times the input's [cin_g, positions]), then each
// product added where its kernel offset lands in the output (col2im), bias, one store.
bool transposed_fits_blas(const ConvProblem& p, const Geometry& gm) {
  const int64_t kvol = p.kernel[0] * p.kernel[1] * p.kernel[2], rows = gm.cout_g * kvol;
  const int64_t in_positions = p.in[0] * p.in[1] * p.in[2];
  return p.transposed && rows > 0 && gm.cin_g > 0 && rows <= INT_MAX && gm.cin_g <= INT_MAX &&
         gm.cin_g * in_positions <= INT_MAX && gm.cout_g * gm.positions <= INT_MAX &&
         rows * block_for(rows, in_positions) <= INT_MAX;
}

// Rows [cin_g] x columns [count] of image n, group g, input positions [i0, i0 + count), as
// floats.
void gather_input(const ConvProblem& p, const Geometry& gm, const char* in, int64_t n, int64_t g, int64_t i0,
                  int64_t count, std::vector<float>& x) {
  x.resize(static_cast<size_t>(gm.cin_g * count));
  for (int64_t cig = 0; cig < gm.cin_g; ++cig) {
    const int64_t cbase = n * gm.is[0] + (g * gm.cin_g + cig) * gm.is[1];
    Walk3 i(p.in, i0);
    for (int64_t c = 0; c < count; ++c, i.next()) {
      x[cig * count + c] =
          static_cast<float>(load_element(in, p.dtype, cbase + i.d * gm.is[2] + i.h * gm.is[3] + i.w * gm.is[4]));
    }
  }
}

// Group g's transposed weights [cin_g, cout_g * kvol] ([Cin, Cout/g, k...] in PyTorch), as
// floats.
void pack_transposed_weights(const ConvProblem& p, const Geometry& gm, const char* w, int64_t g,
                             std::vector<float>& into) {
  const int64_t k1 = p.kernel[1], k2 = p.kernel[2], kvol = p.kernel[0] * k1 * k2, cols = gm.cout_g * kvol;
  into.resize(static_cast<size_t>(gm.cin_g * cols));
  for (int64_t cig = 0; cig < gm.cin_g; ++cig) {
    for (int64_t co = 0; co < gm.cout_g; ++co) {
      const int64_t base = (g * gm.cin_g + cig) * gm.ws[0] + co * gm.ws[1];
      for (int64_t kk = 0; kk < kvol; ++kk) {
        const int64_t kd = kk / (k1 * k2), kh = (kk / k2) % k1, kw = kk % k2;
        into[cig * cols + co * kvol + kk] =
            static_cast<float>(load_element(w, p.dtype, base + kd * gm.ws[2] + kh * gm.ws[3] + kw * gm.ws[4]));
      }
    }
  }
}

// Adds the block's products [cout_g * kvol, count] (input positions [i0, i0 + count)) into
// acc [cout_g, positions] where each kernel offset lands; the output channels on OpenMP
// threads (each thread its own rows of acc).
void col2im(const ConvProblem& p, const Geometry& gm, const std::vector<float>& prod, int64_t i0, int64_t count,
            std::vector<float>& acc) {
  const int64_t k1 = p.kernel[1], k2 = p.kernel[2], kvol = p.kernel[0] * k1 * k2;
#pragma omp parallel for if (gm.cout_g * kvol * count >= (int64_t{1} << 15))
  for (int64_t co = 0; co < gm.cout_g; ++co) {
    float* out = acc.data() + co * gm.positions;
    for (int64_t kk = 0; kk < kvol; ++kk) {
      const int64_t kd = kk / (k1 * k2), kh = (kk / k2) % k1, kw = kk % k2;
      const float* row = prod.data() + (co * kvol + kk) * count;
      Walk3 i(p.in, i0);
      for (int64_t c = 0; c < count; ++c, i.next()) {
        const int64_t od = i.d * p.stride[0] - p.padding[0] + kd * p.dilation[0];
        const int64_t oh = i.h * p.stride[1] - p.padding[1] + kh * p.dilation[1];
        const int64_t ow = i.w * p.stride[2] - p.padding[2] + kw * p.dilation[2];
        if (od >= 0 && od < p.out[0] && oh >= 0 && oh < p.out[1] && ow >= 0 && ow < p.out[2]) {
          out[(od * p.out[1] + oh) * p.out[2] + ow] += row[c];
        }
      }
    }
  }
}

Error convolution_transposed_blas(const ConvProblem& p, const Geometry& gm, const SlimTensor& out) {
  const char* in = static_cast<const char*>(p.input->data_ptr());
  const char* w = static_cast<const char*>(p.weight->data_ptr());
  const char* bias = p.bias != nullptr ? static_cast<const char*>(p.bias->data_ptr()) : nullptr;
  char* o = static_cast<char*>(out.data_ptr());
  const int64_t kvol = p.kernel[0] * p.kernel[1] * p.kernel[2], rows = gm.cout_g * kvol;
  const int64_t in_positions = p.in[0] * p.in[1] * p.in[2];
  const int64_t block = block_for(rows, in_positions);
  std::vector<float> weights, x, prod, acc;
  for (int64_t g = 0; g < p.groups; ++g) {
    pack_transposed_weights(p, gm, w, g, weights);
    for (int64_t n = 0; n < p.n; ++n) {
      acc.assign(static_cast<size_t>(gm.cout_g * gm.positions), 0.0f);
      for (int64_t i0 = 0; i0 < in_positions; i0 += block) {
        const int64_t count = in_positions - i0 < block ? in_positions - i0 : block;
        gather_input(p, gm, in, n, g, i0, count, x);
        prod.resize(static_cast<size_t>(rows * count));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(count),
                    static_cast<int>(gm.cin_g), 1.0f, weights.data(), static_cast<int>(rows), x.data(),
                    static_cast<int>(count), 0.0f, prod.data(), static_cast<int>(count));
        col2im(p, gm, prod, i0, count, acc);
      }
      store_block(p, gm, o, bias, n, g, 0, gm.positions, acc);
    }
  }
  return Error::Ok;
}

}  // namespace

Error convolution_cpu(const ConvProblem& p, const SlimTensor& out) {
  Geometry gm{};
  conv_strides_5d(*p.input, p.spatial, gm.is);
  conv_strides_5d(*p.weight, p.spatial, gm.ws);
  conv_strides_5d(out, p.spatial, gm.os);
  gm.cin_g = p.c_in / p.groups, gm.cout_g = p.c_out / p.groups;
  gm.patch = gm.cin_g * p.kernel[0] * p.kernel[1] * p.kernel[2];
  gm.positions = p.out[0] * p.out[1] * p.out[2];
  // Channels-last weights (channel stride 1 under wider kernel strides): channels inner.
  gm.channels_inner = gm.cin_g > 1 && gm.ws[1] == 1 && p.kernel[0] * p.kernel[1] * p.kernel[2] > 1;
  if (transposed_fits_blas(p, gm)) {
    const CpuThreadScope threads;
    return convolution_transposed_blas(p, gm, out);
  }
  if (!fits_blas(p, gm)) return convolution_cpu_reference(p, out);
  const CpuThreadScope threads;
  const char* in = static_cast<const char*>(p.input->data_ptr());
  const char* w = static_cast<const char*>(p.weight->data_ptr());
  const char* bias = p.bias != nullptr ? static_cast<const char*>(p.bias->data_ptr()) : nullptr;
  char* o = static_cast<char*>(out.data_ptr());
  const int64_t block = block_for(gm.patch, gm.positions);
  std::vector<float> weights, cols, acc;
  const bool weights_in_place = weights_are_a_matrix(p, gm);
  for (int64_t g = 0; g < p.groups; ++g) {
    const float* wg = reinterpret_cast<const float*>(w) + g * gm.cout_g * gm.ws[0];
    int64_t ldw = gm.ws[0];
    if (!weights_in_place) {
      pack_weights(p, gm, w, g, weights);
      wg = weights.data(), ldw = gm.patch;
    }
    for (int64_t n = 0; n < p.n; ++n) {
      for (int64_t p0 = 0; p0 < gm.positions; p0 += block) {
        const int64_t count = gm.positions - p0 < block ? gm.positions - p0 : block;
        unfold(p, gm, in, n, g, p0, count, cols);
        acc.resize(static_cast<size_t>(gm.cout_g * count));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(gm.cout_g), static_cast<int>(count),
                    static_cast<int>(gm.patch), 1.0f, wg, static_cast<int>(ldw), cols.data(), static_cast<int>(count),
                    0.0f, acc.data(), static_cast<int>(count));
        store_block(p, gm, o, bias, n, g, p0, count, acc);
      }
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
