// SPDX-License-Identifier: Apache-2.0
// A model's state through the C ABI (slimcuda_model_constant, _reset_state,
// _read_constant, _write_constant) with the CPU test model models/testing/stateful_model.cc
// (each run adds x to "counter", 10 at load, and returns (counter + x) * 2 + 1), bad input
// included. csrc/model/state_test.cc tests the internals, decode_test.cc a real decoder.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

slimcuda_model* load(const char* name, int32_t instances, int32_t want = SLIMCUDA_OK) {
  slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), 0, -1, instances, nullptr, 0};
  slimcuda_model* m = nullptr;
  EXPECT_EQ(slimcuda_model_load_file_with(test_package_path(name).c_str(), &o, &m), want)
      << slimcuda_last_error_message();
  return m;
}

slimcuda_tensor* scalar(float v) {
  const int64_t one[1] = {1};
  slimcuda_tensor* t = nullptr;
  EXPECT_EQ(slimcuda_tensor_empty(1, one, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &t), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_tensor_copy_from_host(t, &v, 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  return t;
}

float value(const slimcuda_tensor* t) {
  float v = -1;
  EXPECT_EQ(slimcuda_tensor_copy_to_host(t, &v, 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  return v;
}

float run(slimcuda_model* m, float x) {
  slimcuda_tensor* in = scalar(x);
  slimcuda_tensor* out = nullptr;
  EXPECT_EQ(slimcuda_model_run(m, &in, 1, &out, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  const float y = out != nullptr ? value(out) : -1;
  slimcuda_tensor_delete(in);
  slimcuda_tensor_delete(out);
  return y;
}

TEST(StateApi, ConstantsResetReadWrite) {
  slimcuda_model* m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  int32_t instances = 0;
  ASSERT_EQ(slimcuda_model_instances(m, &instances), SLIMCUDA_OK);
  EXPECT_EQ(instances, 1);
  size_t n = 0;
  ASSERT_EQ(slimcuda_model_num_constants(m, &n), SLIMCUDA_OK);
  ASSERT_EQ(n, 3u);
  slimcuda_constant_info c{};
  ASSERT_EQ(slimcuda_model_constant(m, 1, &c), SLIMCUDA_OK);
  EXPECT_STREQ(c.name, "counter");
  EXPECT_EQ(c.kind, SLIMCUDA_CONSTANT_BUFFER);
  EXPECT_EQ(c.is_state, 1);
  EXPECT_EQ(c.visible, 1);
  ASSERT_EQ(c.ndim, 1);
  EXPECT_EQ(c.sizes[0], 1);
  EXPECT_EQ(c.nbytes, 64u);
  ASSERT_EQ(slimcuda_model_constant(m, 0, &c), SLIMCUDA_OK);
  EXPECT_EQ(c.kind, SLIMCUDA_CONSTANT_PARAMETER);
  EXPECT_EQ(c.is_state, 0);

  EXPECT_EQ(run(m, 2), 25.0f);  // (10 + 2) * 2 + 1
  slimcuda_tensor* t = scalar(0);
  ASSERT_EQ(slimcuda_model_read_constant(m, "counter", t), SLIMCUDA_OK);
  EXPECT_EQ(value(t), 12.0f);
  ASSERT_EQ(slimcuda_model_reset_state(m), SLIMCUDA_OK);
  EXPECT_EQ(run(m, 2), 25.0f) << "the same answer after a reset";
  slimcuda_tensor* v = scalar(40);
  ASSERT_EQ(slimcuda_model_write_constant(m, "counter", v), SLIMCUDA_OK);
  EXPECT_EQ(run(m, 0), 81.0f);

  // Bad input: a clear code, nothing changed.
  EXPECT_EQ(slimcuda_model_write_constant(m, "scale", v), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("read-only"), std::string::npos);
  EXPECT_EQ(slimcuda_model_read_constant(m, "nope", t), SLIMCUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(slimcuda_model_read_constant(m, nullptr, t), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_read_constant(m, "counter", nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_write_constant(nullptr, "counter", v), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_reset_state(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_constant(m, 3, &c), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_constant(m, 0, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_num_constants(nullptr, &n), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  const int64_t two[1] = {2};
  slimcuda_tensor* wide = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(1, two, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &wide), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_model_write_constant(m, "counter", wide), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(run(m, 0), 81.0f);
  slimcuda_tensor_delete(wide);
  slimcuda_tensor_delete(t);
  slimcuda_tensor_delete(v);
  slimcuda_model_free(m);
}

TEST(StateApi, LoadsAreIndependentAndInstancesAreOne) {
  slimcuda_model* a = load("stateful", 1);
  slimcuda_model* b = load("stateful", 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(run(a, 1), 23.0f);
  EXPECT_EQ(run(b, 1), 23.0f);
  EXPECT_EQ(run(a, 1), 25.0f);
  slimcuda_model_free(a);
  slimcuda_model_free(b);
  EXPECT_EQ(load("stateful", 2, SLIMCUDA_ERROR_INVALID_ARGUMENT), nullptr);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("load it once per caller"), std::string::npos)
      << slimcuda_last_error_message();
  slimcuda_model* opaque = load("stateful_opaque", 0);
  ASSERT_NE(opaque, nullptr);
  EXPECT_EQ(slimcuda_model_reset_state(opaque), SLIMCUDA_ERROR_NOT_SUPPORTED);
  slimcuda_model_free(opaque);
}

TEST(StateApi, StatelessModelShowsItsWeights) {
  slimcuda_model* m = load("constant_1", 0);
  ASSERT_NE(m, nullptr);
  size_t n = 7;
  ASSERT_EQ(slimcuda_model_num_constants(m, &n), SLIMCUDA_OK);
  EXPECT_EQ(n, 0u) << "a library without the constants API shows none";
  EXPECT_EQ(slimcuda_model_reset_state(m), SLIMCUDA_OK);
  slimcuda_model_free(m);
}

}  // namespace
}  // namespace slimcuda::testing
