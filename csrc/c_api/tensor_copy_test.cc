// SPDX-License-Identifier: Apache-2.0
// copy_tensor's 16-bit float conversions, exhaustively: every float16 and bfloat16 bit
// pattern goes to float32 and back unchanged (NaNs stay NaN), on the host and — with a
// GPU — in the CUDA kernels, which must agree with the host bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

constexpr int64_t kAll = 65536;

struct Tensor {
  slimcuda_tensor* t = nullptr;
  Tensor(int32_t dtype, int32_t device_type) {
    EXPECT_EQ(slimcuda_tensor_empty(1, &kAll, nullptr, dtype, device_type, 0, 0, &t), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  ~Tensor() { slimcuda_tensor_delete(t); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
};

std::vector<uint16_t> all_patterns() {
  std::vector<uint16_t> v(kAll);
  for (int64_t i = 0; i < kAll; ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

bool is_nan16(uint16_t h, int32_t dtype) {
  return dtype == SLIMCUDA_FLOAT16 ? ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0)
                                   : ((h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0);
}

// bits (dtype, on `device`) -> float32 (on `device`) -> bits; returns the final bits and the floats.
void round_trip(int32_t dtype, int32_t device, std::vector<uint16_t>* back, std::vector<float>* floats) {
  const std::vector<uint16_t> in = all_patterns();
  Tensor a(dtype, device), f(SLIMCUDA_FLOAT32, device), b(dtype, device);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(a.t, in.data(), 2 * kAll, dtype), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy(f.t, a.t), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_tensor_copy(b.t, f.t), SLIMCUDA_OK) << slimcuda_last_error_message();
  floats->assign(kAll, 0.0f);
  back->assign(kAll, 0);
  ASSERT_EQ(slimcuda_tensor_copy_to_host(f.t, floats->data(), 4 * kAll, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_to_host(b.t, back->data(), 2 * kAll, dtype), SLIMCUDA_OK);
}

void expect_identity(int32_t dtype, const std::vector<uint16_t>& back, const std::vector<float>& floats) {
  int wrong = 0;
  for (int64_t i = 0; i < kAll; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    if (is_nan16(h, dtype)) {
      wrong += !std::isnan(floats[i]) || !is_nan16(back[i], dtype);
    } else {
      wrong += back[i] != h;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(CopyConversions, Float16RoundTripsOnHost) {
  std::vector<uint16_t> back;
  std::vector<float> floats;
  round_trip(SLIMCUDA_FLOAT16, SLIMCUDA_DEVICE_CPU, &back, &floats);
  expect_identity(SLIMCUDA_FLOAT16, back, floats);
  EXPECT_EQ(floats[0x3c00], 1.0f);
  EXPECT_EQ(floats[0x0001], std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(floats[0x7bff], 65504.0f);
  EXPECT_TRUE(std::isinf(floats[0xfc00]) && floats[0xfc00] < 0);
}

TEST(CopyConversions, BFloat16RoundTripsOnHost) {
  std::vector<uint16_t> back;
  std::vector<float> floats;
  round_trip(SLIMCUDA_BFLOAT16, SLIMCUDA_DEVICE_CPU, &back, &floats);
  expect_identity(SLIMCUDA_BFLOAT16, back, floats);
  EXPECT_EQ(floats[0x3f80], 1.0f);
  EXPECT_EQ(floats[0x4049], 3.140625f);
}

TEST(CopyConversions, RoundsToNearestEven) {
  // float32 values halfway between two float16 values go to the even one.
  const float in[4] = {1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11), 65520.0f, 1e-8f};
  const uint16_t want[4] = {0x3c00, 0x3c02, 0x7c00, 0x0000};
  const int64_t n = 4;
  slimcuda_tensor *f = nullptr, *h = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(1, &n, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &f), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_empty(1, &n, nullptr, SLIMCUDA_FLOAT16, 0, 0, 0, &h), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(f, in, sizeof in, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy(h, f), SLIMCUDA_OK);
  uint16_t got[4];
  ASSERT_EQ(slimcuda_tensor_copy_to_host(h, got, sizeof got, SLIMCUDA_FLOAT16), SLIMCUDA_OK);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], want[i]) << i;
  slimcuda_tensor_delete(f);
  slimcuda_tensor_delete(h);
}

TEST(CopyConversions, DeviceMatchesHostBitForBit) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  for (int32_t dtype : {SLIMCUDA_FLOAT16, SLIMCUDA_BFLOAT16}) {
    std::vector<uint16_t> host_back, dev_back;
    std::vector<float> host_f, dev_f;
    round_trip(dtype, SLIMCUDA_DEVICE_CPU, &host_back, &host_f);
    round_trip(dtype, SLIMCUDA_DEVICE_CUDA, &dev_back, &dev_f);
    expect_identity(dtype, dev_back, dev_f);
    EXPECT_EQ(std::memcmp(host_back.data(), dev_back.data(), 2 * kAll), 0) << "dtype " << dtype;
    int differ = 0;
    for (int64_t i = 0; i < kAll; ++i) {
      differ += !(host_f[i] == dev_f[i] || (std::isnan(host_f[i]) && std::isnan(dev_f[i])));
    }
    EXPECT_EQ(differ, 0) << "dtype " << dtype;
  }
}

}  // namespace
}  // namespace slimcuda::testing
