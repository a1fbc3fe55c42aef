// SPDX-License-Identifier: Apache-2.0
// The kernel entry points of the C ABI (slimcuda_fill_f32, slimcuda_axpy_f32) and the
// basic calls, driven by testdata/kernels.json (also run by go/slimcuda/buffer_test.go and
// device_test.go).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("kernels.json");

// A device buffer of n floats for the duration of a case (at least one element, so a
// zero-length case still has a real device pointer).
class DeviceFloats {
 public:
  explicit DeviceFloats(size_t n) {
    EXPECT_EQ(slimcuda_device_alloc((n == 0 ? 1 : n) * sizeof(float), 0, 0, &ptr_), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  ~DeviceFloats() { EXPECT_EQ(slimcuda_device_free(ptr_, 0), SLIMCUDA_OK) << slimcuda_last_error_message(); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;

  void* get() const { return ptr_; }
  void upload(const std::vector<float>& v) {
    ASSERT_EQ(slimcuda_copy_host_to_device(ptr_, v.data(), v.size() * sizeof(float), 0), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  std::vector<float> download(size_t n) const {
    std::vector<float> v(n);
    EXPECT_EQ(slimcuda_copy_device_to_host(v.data(), ptr_, n * sizeof(float), 0), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    return v;
  }

 private:
  void* ptr_ = nullptr;
};

std::vector<float> floats(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

TEST(Kernels, DeviceCount) {
  for (const Case& c : cases("kernels.json", "device_count")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    int32_t n = -1;
    expect_code(c, slimcuda_device_count(&n));
    EXPECT_GE(n, 0);
    if (c.data.contains("count")) {
      EXPECT_EQ(n, c.data["count"].get<int>());
    }
  }
  EXPECT_EQ(slimcuda_device_count(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Kernels, Fill) {
  for (const Case& c : cases("kernels.json", "fill")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const size_t n = c.data.at("n").get<size_t>();
    const float value = c.data.at("value").get<float>();
    const int32_t index = c.data.value("device_index", 0);
    const std::string dst = c.data.at("dst").get<std::string>();
    if (dst == "device") {
      DeviceFloats buf(n);
      expect_code(c, slimcuda_fill_f32(buf.get(), n, value, index));
      if (c.data["expect"] != "Ok" || n == 0) continue;
      const std::vector<float> got = buf.download(n);
      size_t wrong = 0;
      for (float v : got) wrong += (v != value);
      EXPECT_EQ(wrong, 0u) << "of " << n << " elements, first " << got[0] << ", last " << got[n - 1];
    } else {
      std::vector<float> host(n + 1, 0.0f);
      expect_code(c, slimcuda_fill_f32(dst == "host" ? host.data() : nullptr, n, value, index));
      for (float v : host) EXPECT_EQ(v, 0.0f) << "a refused fill wrote host memory";
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Kernels, Axpy) {
  for (const Case& c : cases("kernels.json", "axpy")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const float a = c.data.at("a").get<float>();
    if (c.data.at("x").is_null()) {
      float y = 1.0f;
      expect_code(c, slimcuda_axpy_f32(&y, nullptr, 1, a, 0));
      continue;
    }
    const std::vector<float> x = floats(c.data["x"]), y = floats(c.data.at("y"));
    ASSERT_EQ(x.size(), y.size());
    DeviceFloats dx(x.size()), dy(y.size());
    dx.upload(x);
    dy.upload(y);
    expect_code(c, slimcuda_axpy_f32(dy.get(), dx.get(), x.size(), a, 0));
    EXPECT_EQ(dy.download(y.size()), floats(c.data.at("expect_y")));
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
