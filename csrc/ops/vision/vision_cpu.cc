// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/vision/vision_cpu.h"

#include <algorithm>
#include <cmath>

#include "csrc/ops/vision/vision_math.h"

namespace slimcuda::ops {
namespace {

template <typename T>
void roi_typed(const RoiProblem& p) noexcept {
  T* out = static_cast<T*>(p.out);
  const int64_t n = p.out_numel();
  for (int64_t i = 0; i < n; ++i) {
    int32_t arg = -1;
    out[i] = vision_math::roi_element<T, T>(p, i, &arg);
    if (p.index != nullptr) p.index[i] = arg;
  }
}

template <typename T>
void deform_typed(const DeformProblem& p) noexcept {
  T* out = static_cast<T*>(p.out);
  const int64_t n = p.out_numel();
  for (int64_t i = 0; i < n; ++i) out[i] = vision_math::deform_element<T, T>(p, i);
}

template <typename T>
std::vector<int64_t> nms_typed(const NmsProblem& p) {
  const int64_t n = p.n;
  std::vector<T> box(static_cast<size_t>(n) * 4), area(static_cast<size_t>(n)), score(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      box[i * 4 + k] = vision_math::ld<T, T>(p.boxes, i * p.box_strides[0] + k * p.box_strides[1]);
    }
    area[i] = (box[i * 4 + 2] - box[i * 4]) * (box[i * 4 + 3] - box[i * 4 + 1]);
    score[i] = vision_math::ld<T, T>(p.scores, i * p.score_stride);
  }
  // Descending and stable, NaN first (ATen's sort order for floating scores).
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const bool na = std::isnan(score[a]), nb = std::isnan(score[b]);
    if (na || nb) return na && !nb;
    return score[a] > score[b];
  });
  std::vector<char> suppressed(static_cast<size_t>(n), 0);
  std::vector<int64_t> keep;
  for (int64_t a = 0; a < n; ++a) {
    const int64_t i = order[a];
    if (suppressed[i]) continue;
    keep.push_back(i);
    for (int64_t b = a + 1; b < n; ++b) {
      const int64_t j = order[b];
      if (suppressed[j]) continue;
      const T o = vision_math::iou<T>(&box[i * 4], &box[j * 4], area[i], area[j]);
      if (static_cast<double>(o) > p.iou_threshold) suppressed[j] = 1;
    }
  }
  return keep;
}

}  // namespace

void roi_cpu(const RoiProblem& p) noexcept {
  if (p.type == VisionType::F64) {
    roi_typed<double>(p);
  } else {
    roi_typed<float>(p);
  }
}

void deform_conv2d_cpu(const DeformProblem& p) noexcept {
  if (p.type == VisionType::F64) {
    deform_typed<double>(p);
  } else {
    deform_typed<float>(p);
  }
}

std::vector<int64_t> nms_cpu(const NmsProblem& p) {
  return p.type == VisionType::F64 ? nms_typed<double>(p) : nms_typed<float>(p);
}

}  // namespace slimcuda::ops
