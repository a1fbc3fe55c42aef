// SPDX-License-Identifier: Apache-2.0
// A model's state through the C ABI (slimcuda_model_constant, _reset_state,
// _read_constant, _write_constant) with the CPU test model models/testing/stateful_model.cc
// (each run adds x to "counter", 10 at load, and returns (counter + x) * 2 + 1), bad input
// included. csrc/model/state_test.cc tests the internals, decode_test.cc a real decoder.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
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

// Weights swapped while serving, with a real PyTorch 2.11 CPU export (testdata/pt2:
// y = relu(x W^T + b + z), W [3, 4] a constant in the archive's binary_blob, b folded into
// the code by Inductor).
std::string pt2(const std::string& name) { return fixture_relative("pt2.json", "pt2/" + name); }

std::vector<float> run_linear(slimcuda_model* m, const std::vector<float>& x, const std::vector<float>& z) {
  const int64_t xs[2] = {2, 4}, zs[2] = {2, 3};
  slimcuda_tensor *tx = nullptr, *tz = nullptr, *out = nullptr;
  EXPECT_EQ(slimcuda_tensor_empty(2, xs, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &tx), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_tensor_empty(2, zs, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &tz), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_tensor_copy_from_host(tx, x.data(), 32, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_tensor_copy_from_host(tz, z.data(), 24, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  slimcuda_tensor* in[2] = {tx, tz};
  std::vector<float> y(6, -1);
  EXPECT_EQ(slimcuda_model_run(m, in, 2, &out, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  if (out != nullptr) {
    EXPECT_EQ(slimcuda_tensor_copy_to_host(out, y.data(), 24, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  }
  slimcuda_tensor_delete(tx);
  slimcuda_tensor_delete(tz);
  slimcuda_tensor_delete(out);
  return y;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << what << " [" << i << "]";
}

TEST(SwapApi, RealExportSwapsItsWeights) {
  std::ifstream in(pt2("real_cpu_linear.ref.json"));
  const nlohmann::json ref = nlohmann::json::parse(in);
  const std::vector<float> x = ref.at("x"), z = ref.at("z"), y = ref.at("y");
  slimcuda_model* m = nullptr;
  ASSERT_EQ(slimcuda_model_load_file(pt2("weights_blob_linear.pt2").c_str(), -1, -1, &m), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  expect_near(run_linear(m, x, z), y, "as loaded");
  // The same weights from the other archive format: the file path end to end.
  ASSERT_EQ(slimcuda_model_stage_weights_file(m, pt2("weights_pickle_linear.pt2").c_str()), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_model_swap_weights(m), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_model_free_inactive_weights(m), SLIMCUDA_OK) << slimcuda_last_error_message();
  expect_near(run_linear(m, x, z), y, "after swapping in the pickle archive's weights");
  // New values from host tensors: zeros, so y = relu(z).
  size_t n = 0;
  ASSERT_EQ(slimcuda_model_num_constants(m, &n), SLIMCUDA_OK);
  std::vector<const char*> names;
  std::vector<slimcuda_tensor*> zeros;
  for (size_t i = 0; i < n; ++i) {
    slimcuda_constant_info c{};
    ASSERT_EQ(slimcuda_model_constant(m, i, &c), SLIMCUDA_OK);
    if (c.is_state || c.kind == SLIMCUDA_CONSTANT_FOLDED) continue;
    ASSERT_EQ(c.visible, 1) << c.name;
    slimcuda_tensor* t = nullptr;
    ASSERT_EQ(slimcuda_tensor_empty(c.ndim, c.sizes, nullptr, c.dtype, SLIMCUDA_DEVICE_CPU, -1, 0, &t), SLIMCUDA_OK);
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(t, &info), SLIMCUDA_OK);
    std::memset(info.data, 0, static_cast<size_t>(info.numel) * 4);
    names.push_back(c.name);
    zeros.push_back(t);
  }
  ASSERT_EQ(names.size(), 1u) << "the one weight";
  std::vector<const slimcuda_tensor*> given(zeros.begin(), zeros.end());
  // Bad sets first: refused, the active weights untouched.
  EXPECT_EQ(slimcuda_model_stage_weights(m, names.data(), given.data(), 0), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("0 weights given; the model has 1"), std::string::npos)
      << slimcuda_last_error_message();
  const int64_t other[2] = {4, 3};
  slimcuda_tensor* transposed = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(2, other, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &transposed),
            SLIMCUDA_OK);
  const slimcuda_tensor* wrong[1] = {transposed};
  EXPECT_EQ(slimcuda_model_stage_weights(m, names.data(), wrong, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("sizes [4, 3]"), std::string::npos)
      << slimcuda_last_error_message();
  slimcuda_tensor_delete(transposed);
  EXPECT_EQ(slimcuda_model_stage_weights(m, nullptr, given.data(), 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_swap_weights(m), SLIMCUDA_ERROR_INVALID_STATE);
  expect_near(run_linear(m, x, z), y, "after refused stages");
  ASSERT_EQ(slimcuda_model_stage_weights(m, names.data(), given.data(), 1), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  expect_near(run_linear(m, x, z), y, "staged, not swapped yet");
  EXPECT_EQ(slimcuda_model_stage_weights(m, names.data(), given.data(), 1), SLIMCUDA_ERROR_INVALID_STATE);
  // W as it is now, read back, to swap in again at the end.
  const int64_t ws[2] = {3, 4};
  slimcuda_tensor* w = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(2, ws, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &w), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_model_read_constant(m, names[0], w), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_model_swap_weights(m), SLIMCUDA_OK);
  // W = 0: y = relu(b + z), whatever x is.
  std::vector<float> other_x(x.size());
  std::transform(x.begin(), x.end(), other_x.begin(), [](float v) { return 3 * v - 1; });
  const std::vector<float> y0 = run_linear(m, x, z);
  expect_near(run_linear(m, other_x, z), y0, "zero weights: x makes no difference");
  EXPECT_NE(y0, y) << "the zeros are in use";
  ASSERT_EQ(slimcuda_model_free_inactive_weights(m), SLIMCUDA_OK);
  for (slimcuda_tensor* t : zeros) slimcuda_tensor_delete(t);
  expect_near(run_linear(m, other_x, z), y0, "the staged tensors freed: the model has its own copy");
  // The old W back, from the tensor read before.
  const slimcuda_tensor* back[1] = {w};
  ASSERT_EQ(slimcuda_model_stage_weights(m, names.data(), back, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_model_swap_weights(m), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_model_free_inactive_weights(m), SLIMCUDA_OK);
  slimcuda_tensor_delete(w);
  expect_near(run_linear(m, x, z), y, "the old weights again");
  // Files that cannot give weights.
  EXPECT_EQ(slimcuda_model_stage_weights_file(m, pt2("real_cpu_linear.pt2").c_str()), SLIMCUDA_ERROR_NOT_SUPPORTED)
      << "weights inside the library";
  EXPECT_EQ(slimcuda_model_stage_weights_file(m, pt2("does_not_exist.pt2").c_str()), SLIMCUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(slimcuda_model_stage_weights_file(m, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_swap_weights(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  expect_near(run_linear(m, x, z), y, "after the refusals");
  slimcuda_model_free(m);
}

}  // namespace
}  // namespace slimcuda::testing
