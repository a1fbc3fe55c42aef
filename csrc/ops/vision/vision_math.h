// SPDX-License-Identifier: Apache-2.0
#pragma once

// The per-element arithmetic of torchvision's detection ops, written once for the CPU loops
// and the CUDA kernels (compiled by nvcc with __host__ __device__): one output element from
// its index, in the compute type T (float, or double for float64), reading elements of
// storage type In through the problem's strides. The order of every operation follows
// torchvision's kernels, so float32 results match theirs to rounding.

#include <cmath>
#include <cstdint>

#include "csrc/ops/vision/vision_problem.h"

namespace slimcuda::ops::vision_math {

// std::max / std::min, NaN handling included (the first argument unless the second compares
// beyond it), usable in device code.
template <typename T>
SLIMCUDA_VISION_HD T max_of(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
SLIMCUDA_VISION_HD T min_of(T a, T b) {
  return b < a ? b : a;
}

/// Element `i` of `p` (storage type In) in the compute type.
template <typename T, typename In>
SLIMCUDA_VISION_HD T ld(const void* p, int64_t i) {
  return static_cast<T>(static_cast<const In*>(p)[i]);
}

/// roi_align's and ps_roi_align's bilinear sample of plane `base` (element offset into
/// input, strides sh/sw) at (y, x): 0 outside [-1, size], edges clamped.
template <typename T, typename In>
SLIMCUDA_VISION_HD T roi_bilinear(const void* input, int64_t base, int64_t sh, int64_t sw, int64_t height,
                                  int64_t width, T y, T x) {
  if (height <= 0 || width <= 0) return T(0);
  if (y < T(-1) || y > static_cast<T>(height) || x < T(-1) || x > static_cast<T>(width)) return T(0);
  if (y <= T(0)) y = T(0);
  if (x <= T(0)) x = T(0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<T>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<T>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - static_cast<T>(y_low), lx = x - static_cast<T>(x_low);
  const T hy = T(1) - ly, hx = T(1) - lx;
  const T v1 = ld<T, In>(input, base + y_low * sh + x_low * sw);
  const T v2 = ld<T, In>(input, base + y_low * sh + x_high * sw);
  const T v3 = ld<T, In>(input, base + y_high * sh + x_low * sw);
  const T v4 = ld<T, In>(input, base + y_high * sh + x_high * sw);
  return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
}

/// The rois' batch index of roi k, or -1 when it is not in [0, batch) (then the roi's
/// outputs are 0 and its indices -1: torchvision does not check, and reads out of bounds).
template <typename T, typename In>
SLIMCUDA_VISION_HD int64_t roi_batch(const RoiProblem& p, int64_t k) {
  const T b = ld<T, In>(p.roi_data, k * p.roi_strides[0]);
  if (!(b > T(-1) && b < static_cast<T>(p.batch))) return -1;
  return static_cast<int64_t>(b);  // truncated, as torchvision's int conversion
}

/// roi_align's and ps_roi_align's bin (ph, pw) of the plane at `base`, roi corners r (x1 y1
/// x2 y2, unscaled): the mean of its bilinear samples.
template <typename T, typename In>
SLIMCUDA_VISION_HD T align_bin(const RoiProblem& p, int64_t base, const T r[4], int64_t ph, int64_t pw) {
  const T ss = static_cast<T>(p.spatial_scale);
  // ps_roi_align always takes the half-pixel offset and never widens a small roi.
  const T off = (p.op == RoiOp::PsAlign || p.aligned) ? T(0.5) : T(0);
  const T x1 = r[0] * ss - off, y1 = r[1] * ss - off, x2 = r[2] * ss - off, y2 = r[3] * ss - off;
  T rw = x2 - x1, rh = y2 - y1;
  if (p.op == RoiOp::Align && !p.aligned) {
    rw = max_of(rw, T(1));
    rh = max_of(rh, T(1));
  }
  const T bh = rh / static_cast<T>(p.pooled_h), bw = rw / static_cast<T>(p.pooled_w);
  const int64_t gh =
      p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(ceil(rh / static_cast<T>(p.pooled_h)));
  const int64_t gw =
      p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(ceil(rw / static_cast<T>(p.pooled_w)));
  // roi_align divides by at least 1; ps_roi_align by the grid's size (0 gives NaN, as there).
  const T count = p.op == RoiOp::Align ? static_cast<T>(max_of<int64_t>(gh * gw, 1)) : static_cast<T>(gh * gw);
  const T hstart = y1 + static_cast<T>(ph) * bh, wstart = x1 + static_cast<T>(pw) * bw;
  T sum = T(0);
  for (int64_t iy = 0; iy < gh; ++iy) {
    const T y = hstart + static_cast<T>(static_cast<float>(iy) + .5f) * bh / static_cast<T>(gh);
    for (int64_t ix = 0; ix < gw; ++ix) {
      const T x = wstart + static_cast<T>(static_cast<float>(ix) + .5f) * bw / static_cast<T>(gw);
      sum += roi_bilinear<T, In>(p.input, base, p.in_strides[2], p.in_strides[3], p.height, p.width, y, x);
    }
  }
  return sum / count;
}

/// roi_pool's (max, +1 in the roi's size, clipped to [0, size]; *arg the argmax) and
/// ps_roi_pool's (mean, clipped to [0, size - 1]) bin (ph, pw): rounded roi corners, bins
/// floor/ceil'ed.
template <typename T, typename In>
SLIMCUDA_VISION_HD T pool_bin(const RoiProblem& p, int64_t base, const T r[4], int64_t ph, int64_t pw, int32_t* arg) {
  const T ss = static_cast<T>(p.spatial_scale);
  const int64_t sh = p.in_strides[2], sw = p.in_strides[3];
  const bool pool = p.op == RoiOp::Pool;
  const int64_t x1 = static_cast<int64_t>(round(r[0] * ss)), y1 = static_cast<int64_t>(round(r[1] * ss));
  const int64_t x2 = static_cast<int64_t>(round(r[2] * ss)), y2 = static_cast<int64_t>(round(r[3] * ss));
  const int64_t extra = pool ? 1 : 0;
  const int64_t rw = max_of<int64_t>(x2 - x1 + extra, 1), rh = max_of<int64_t>(y2 - y1 + extra, 1);
  const T bh = static_cast<T>(rh) / static_cast<T>(p.pooled_h), bw = static_cast<T>(rw) / static_cast<T>(p.pooled_w);
  const int64_t hi = pool ? p.height : p.height - 1, wi = pool ? p.width : p.width - 1;
  auto clip = [](int64_t v, int64_t top) { return min_of<int64_t>(max_of<int64_t>(v, 0), top); };
  const int64_t hs = clip(static_cast<int64_t>(floor(static_cast<T>(ph) * bh)) + y1, hi);
  const int64_t he = clip(static_cast<int64_t>(ceil(static_cast<T>(ph + 1) * bh)) + y1, hi);
  const int64_t ws = clip(static_cast<int64_t>(floor(static_cast<T>(pw) * bw)) + x1, wi);
  const int64_t we = clip(static_cast<int64_t>(ceil(static_cast<T>(pw + 1) * bw)) + x1, wi);
  const bool empty = he <= hs || we <= ws;
  if (pool) {
    T best = empty ? T(0) : static_cast<T>(-3.402823466e+38f);  // -FLT_MAX, as torchvision
    int64_t best_at = -1;
    for (int64_t h = hs; h < he; ++h) {
      for (int64_t w = ws; w < we; ++w) {
        const T v = ld<T, In>(p.input, base + h * sh + w * sw);
        if (v > best) {
          best = v;
          best_at = h * p.width + w;
        }
      }
    }
    *arg = static_cast<int32_t>(best_at);
    return best;
  }
  if (empty) return T(0);
  T sum = T(0);
  for (int64_t h = hs; h < he; ++h) {
    for (int64_t w = ws; w < we; ++w) sum += ld<T, In>(p.input, base + h * sh + w * sw);
  }
  return sum / static_cast<T>((he - hs) * (we - ws));
}

/// Output element `index` of an roi op (out [K, channels_out, pooled_h, pooled_w]): its
/// value and, for all but roi_align, its argmax / channel_mapping.
template <typename T, typename In>
SLIMCUDA_VISION_HD T roi_element(const RoiProblem& p, int64_t index, int32_t* arg) {
  const int64_t pw = index % p.pooled_w, ph = (index / p.pooled_w) % p.pooled_h;
  const int64_t c = (index / (p.pooled_w * p.pooled_h)) % p.channels_out;
  const int64_t k = index / (p.pooled_w * p.pooled_h * p.channels_out);
  const bool ps = p.op == RoiOp::PsAlign || p.op == RoiOp::PsPool;
  const int64_t c_in = ps ? (c * p.pooled_h + ph) * p.pooled_w + pw : c;
  *arg = p.op == RoiOp::Pool ? -1 : static_cast<int32_t>(c_in);
  const int64_t b = roi_batch<T, In>(p, k);
  if (b < 0) return T(0);
  const int64_t base = b * p.in_strides[0] + c_in * p.in_strides[1];
  const int64_t at = k * p.roi_strides[0];
  const T r[4] = {ld<T, In>(p.roi_data, at + 1 * p.roi_strides[1]), ld<T, In>(p.roi_data, at + 2 * p.roi_strides[1]),
                  ld<T, In>(p.roi_data, at + 3 * p.roi_strides[1]), ld<T, In>(p.roi_data, at + 4 * p.roi_strides[1])};
  if (p.op == RoiOp::Align || p.op == RoiOp::PsAlign) return align_bin<T, In>(p, base, r, ph, pw);
  return pool_bin<T, In>(p, base, r, ph, pw, arg);
}

/// deform_conv2d's bilinear sample (zero outside the image, per corner).
template <typename T, typename In>
SLIMCUDA_VISION_HD T deform_bilinear(const DeformProblem& p, int64_t base, T y, T x) {
  const int64_t height = p.height, width = p.width, sh = p.in_strides[2], sw = p.in_strides[3];
  if (y <= T(-1) || static_cast<T>(height) <= y || x <= T(-1) || static_cast<T>(width) <= x) return T(0);
  const int64_t y_low = static_cast<int64_t>(floor(y)), x_low = static_cast<int64_t>(floor(x));
  const int64_t y_high = y_low + 1, x_high = x_low + 1;
  const T ly = y - static_cast<T>(y_low), lx = x - static_cast<T>(x_low);
  const T hy = T(1) - ly, hx = T(1) - lx;
  const T v1 = (y_low >= 0 && x_low >= 0) ? ld<T, In>(p.input, base + y_low * sh + x_low * sw) : T(0);
  const T v2 = (y_low >= 0 && x_high <= width - 1) ? ld<T, In>(p.input, base + y_low * sh + x_high * sw) : T(0);
  const T v3 = (y_high <= height - 1 && x_low >= 0) ? ld<T, In>(p.input, base + y_high * sh + x_low * sw) : T(0);
  const T v4 =
      (y_high <= height - 1 && x_high <= width - 1) ? ld<T, In>(p.input, base + y_high * sh + x_high * sw) : T(0);
  return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
}

/// Output element `index` of deform_conv2d (out [B, Cout, outH, outW]): the bias plus the sum
/// over the group's input channels and the kernel taps of weight * mask * sample.
template <typename T, typename In>
SLIMCUDA_VISION_HD T deform_element(const DeformProblem& p, int64_t index) {
  const int64_t ox = index % p.out_w, oy = (index / p.out_w) % p.out_h;
  const int64_t oc = (index / (p.out_w * p.out_h)) % p.c_out, b = index / (p.out_w * p.out_h * p.c_out);
  const int64_t cin_g = p.c_in / p.groups, g = oc / (p.c_out / p.groups);
  const int64_t per_offset_group = p.c_in / p.offset_groups, taps = p.kh * p.kw;
  const int64_t off_at = b * p.off_strides[0] + oy * p.off_strides[2] + ox * p.off_strides[3];
  const int64_t mask_at = b * p.mask_strides[0] + oy * p.mask_strides[2] + ox * p.mask_strides[3];
  T sum = T(0);
  for (int64_t cc = 0; cc < cin_g; ++cc) {
    const int64_t c = g * cin_g + cc, og = c / per_offset_group;
    const int64_t base = b * p.in_strides[0] + c * p.in_strides[1];
    for (int64_t i = 0; i < p.kh; ++i) {
      for (int64_t j = 0; j < p.kw; ++j) {
        const int64_t tap = i * p.kw + j;
        const T dy = ld<T, In>(p.offset, off_at + (og * 2 * taps + 2 * tap) * p.off_strides[1]);
        const T dx = ld<T, In>(p.offset, off_at + (og * 2 * taps + 2 * tap + 1) * p.off_strides[1]);
        const T m = p.use_mask ? ld<T, In>(p.mask, mask_at + (og * taps + tap) * p.mask_strides[1]) : T(1);
        const T y = static_cast<T>(oy * p.stride_h - p.pad_h + i * p.dil_h) + dy;
        const T x = static_cast<T>(ox * p.stride_w - p.pad_w + j * p.dil_w) + dx;
        const T col = m * deform_bilinear<T, In>(p, base, y, x);
        const T w =
            ld<T, In>(p.weight, oc * p.w_strides[0] + cc * p.w_strides[1] + i * p.w_strides[2] + j * p.w_strides[3]);
        sum += w * col;
      }
    }
  }
  return sum + ld<T, In>(p.bias, oc * p.bias_stride);
}

/// IoU of boxes a and b (x1, y1, x2, y2) with their areas, as torchvision's CPU nms: the
/// intersection clamped at 0, divided by the union.
template <typename T>
SLIMCUDA_VISION_HD T iou(const T* a, const T* b, T area_a, T area_b) {
  const T w = max_of(T(0), min_of(a[2], b[2]) - max_of(a[0], b[0]));
  const T h = max_of(T(0), min_of(a[3], b[3]) - max_of(a[1], b[1]));
  const T inter = w * h;
  return inter / (area_a + area_b - inter);
}

}  // namespace slimcuda::ops::vision_math
