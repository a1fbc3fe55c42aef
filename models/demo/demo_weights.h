// SPDX-License-Identifier: Apache-2.0
#pragma once

// The demo MLP's shapes and deterministic weights: y = relu(x W1 + b1) W2 + b2.
// Every value is a small dyadic fraction, so every product and partial sum is exact in
// float32 and the CPU, the GPU and tools/demo/reference.py agree bit for bit.
namespace slimcuda_demo {

constexpr int kMaxBatch = 64;  // the input's batch dimension is dynamic, bounded by this
constexpr int kIn = 16, kHidden = 32, kOut = 8;

constexpr float w1(int i, int j) { return static_cast<float>((i * 31 + j * 17) % 23 - 11) / 64.0f; }
constexpr float b1(int j) { return static_cast<float>((j * 7) % 5 - 2) / 16.0f; }
constexpr float w2(int i, int j) { return static_cast<float>((i * 13 + j * 7) % 19 - 9) / 32.0f; }
constexpr float b2(int j) { return static_cast<float>(j % 3 - 1) / 8.0f; }

/// One forward pass on raw pointers: x [batch, kIn], row-major; y [batch, kOut]. The
/// weights are row-major [kIn, kHidden], [kHidden], [kHidden, kOut], [kOut]. `stream` is a
/// cudaStream_t for the CUDA backend (ignored on the CPU). Returns 0 on success.
int forward(const float* x, int batch, const float* w1, const float* b1, const float* w2, const float* b2,
            float* hidden, float* y, void* stream);

}  // namespace slimcuda_demo
