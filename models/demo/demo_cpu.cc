// SPDX-License-Identifier: Apache-2.0
// The demo model's CPU backend.
#include "models/demo/demo_weights.h"

namespace slimcuda_demo {

int forward(const float* x, int batch, const float* w1, const float* b1, const float* w2, const float* b2,
            float* hidden, float* y, void* stream) {
  (void)stream;
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < kHidden; ++j) {
      float acc = b1[j];
      for (int i = 0; i < kIn; ++i) acc += x[b * kIn + i] * w1[i * kHidden + j];
      hidden[b * kHidden + j] = acc > 0.0f ? acc : 0.0f;
    }
    for (int j = 0; j < kOut; ++j) {
      float acc = b2[j];
      for (int i = 0; i < kHidden; ++i) acc += hidden[b * kHidden + i] * w2[i * kOut + j];
      y[b * kOut + j] = acc;
    }
  }
  return 0;
}

}  // namespace slimcuda_demo
