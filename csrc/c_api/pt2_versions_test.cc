// SPDX-License-Identifier: Apache-2.0
// .pt2 exports from each supported PyTorch version, from testdata/pt2_versions.json
// (go/slimcuda/pt2_versions_test.go runs the same cases): each loads on the CPU, describes
// its inputs as the case states (dtype, sizes or a dynamic dimension's bounds, device),
// runs to eager PyTorch's outputs, and refuses an input one past a stated size or bound
// before the library runs. The refusal cases (a newer archive_version, .data/version or
// container ABI) fail with their code and a message naming both versions.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("pt2_versions.json");
constexpr const char* kFile = "pt2_versions.json";

struct Model {
  slimcuda_model* m = nullptr;
  ~Model() { slimcuda_model_free(m); }
};

struct Tensors {
  std::vector<slimcuda_tensor*> t;
  ~Tensors() {
    for (slimcuda_tensor* x : t) slimcuda_tensor_delete(x);
  }
};

struct Spec {
  std::vector<int64_t> sizes, min_sizes;
  bool dynamic = false;
};

Spec spec_of(const nlohmann::json& j) {
  Spec s;
  s.sizes = j.at("sizes").get<std::vector<int64_t>>();
  s.dynamic = j.at("dynamism") == "dynamic_bounded";
  if (s.dynamic) s.min_sizes = j.at("min_sizes").get<std::vector<int64_t>>();
  return s;
}

// A float32 CPU tensor of `sizes` holding `data` (zeros when empty).
void add_tensor(Tensors* ts, const std::vector<int64_t>& sizes, std::vector<float> data) {
  int64_t n = 1;
  for (const int64_t d : sizes) n *= d;
  if (data.empty()) data.assign(static_cast<size_t>(n), 0.0f);
  ASSERT_EQ(static_cast<int64_t>(data.size()), n);
  slimcuda_tensor* t = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, SLIMCUDA_FLOAT32,
                                  SLIMCUDA_DEVICE_CPU, 0, 0, &t),
            SLIMCUDA_OK);
  ts->t.push_back(t);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(t, data.data(), data.size() * sizeof(float), SLIMCUDA_FLOAT32), SLIMCUDA_OK);
}

void expect_input_specs(slimcuda_model* m, const nlohmann::json& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i));
    const nlohmann::json& want = inputs[i];
    ASSERT_EQ(want.at("dtype"), "float32");
    ASSERT_EQ(want.at("device"), "cpu");
    const Spec s = spec_of(want);
    slimcuda_tensor_spec got{};
    ASSERT_EQ(slimcuda_model_input_spec(m, i, &got), SLIMCUDA_OK) << slimcuda_last_error_message();
    EXPECT_EQ(got.dtype, SLIMCUDA_FLOAT32);
    EXPECT_EQ(got.dynamism, s.dynamic ? SLIMCUDA_DYNAMIC_BOUNDED : SLIMCUDA_STATIC);
    EXPECT_EQ(got.device_type, SLIMCUDA_DEVICE_CPU);
    ASSERT_EQ(got.ndim, static_cast<int64_t>(s.sizes.size()));
    EXPECT_EQ(std::vector<int64_t>(got.sizes, got.sizes + got.ndim), s.sizes);
  }
}

void run_to_reference(slimcuda_model* m, const nlohmann::json& run, double tolerance) {
  Tensors in, out;
  for (const nlohmann::json& x : run.at("inputs")) {
    add_tensor(&in, x.at("sizes").get<std::vector<int64_t>>(), x.at("data").get<std::vector<float>>());
  }
  const nlohmann::json& want = run.at("outputs");
  out.t.assign(want.size(), nullptr);
  ASSERT_EQ(slimcuda_model_run(m, in.t.data(), in.t.size(), out.t.data(), out.t.size()), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  for (size_t k = 0; k < want.size(); ++k) {
    const std::vector<int64_t> sizes = want[k].at("sizes").get<std::vector<int64_t>>();
    const std::vector<float> ref = want[k].at("data").get<std::vector<float>>();
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(out.t[k], &info), SLIMCUDA_OK);
    EXPECT_EQ(std::vector<int64_t>(info.sizes, info.sizes + info.ndim), sizes) << "output " << k;
    EXPECT_EQ(info.dtype, SLIMCUDA_FLOAT32);
    std::vector<float> y(ref.size(), -1);
    ASSERT_EQ(slimcuda_tensor_copy_to_host(out.t[k], y.data(), y.size() * sizeof(float), SLIMCUDA_FLOAT32),
              SLIMCUDA_OK);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], tolerance) << "output " << k << " element " << i;
  }
}

// One past each stated size (and below a dynamic minimum) is refused by slimcuda's checks,
// before the library sees it: the description is what a run enforces.
void expect_refused_outside_specs(slimcuda_model* m, const nlohmann::json& inputs, const nlohmann::json& run) {
  const nlohmann::json& valid = run.at("inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Spec s = spec_of(inputs[i]);
    std::vector<std::vector<int64_t>> wrong;
    const std::vector<int64_t> base = valid[i].at("sizes").get<std::vector<int64_t>>();
    for (size_t d = 0; d < s.sizes.size(); ++d) {
      std::vector<int64_t> w = base;
      w[d] = s.sizes[d] + 1;
      wrong.push_back(w);
      if (s.dynamic && s.min_sizes[d] > 0) {
        w[d] = s.min_sizes[d] - 1;
        wrong.push_back(w);
      }
    }
    for (const std::vector<int64_t>& w : wrong) {
      SCOPED_TRACE("input " + std::to_string(i) + " of " + nlohmann::json(w).dump());
      Tensors in;
      for (size_t j = 0; j < valid.size(); ++j) {
        add_tensor(&in, j == i ? w : valid[j].at("sizes").get<std::vector<int64_t>>(), {});
      }
      std::vector<slimcuda_tensor*> out(run.at("outputs").size(), nullptr);
      EXPECT_EQ(slimcuda_model_run(m, in.t.data(), in.t.size(), out.data(), out.size()),
                SLIMCUDA_ERROR_INVALID_ARGUMENT);
      for (slimcuda_tensor* o : out) EXPECT_EQ(o, nullptr);
    }
  }
}

TEST(Pt2Versions, EachVersionLoadsDescribesAndRuns) {
  for (const Case& c : cases(kFile, "run")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string path = fixture_relative(kFile, c.data.at("file"));
    Model model;
    ASSERT_EQ(slimcuda_model_load_file(path.c_str(), -1, -1, &model.m), SLIMCUDA_OK) << slimcuda_last_error_message();
    const nlohmann::json& inputs = c.data.at("inputs");
    const nlohmann::json& runs = c.data.at("runs");
    size_t n_in = 0, n_out = 0;
    ASSERT_EQ(slimcuda_model_num_io(model.m, &n_in, &n_out), SLIMCUDA_OK);
    ASSERT_EQ(n_in, inputs.size());
    ASSERT_EQ(n_out, runs.at(0).at("outputs").size());
    expect_input_specs(model.m, inputs);
    for (const nlohmann::json& run : runs) run_to_reference(model.m, run, c.data.at("tolerance").get<double>());
    expect_refused_outside_specs(model.m, inputs, runs.at(0));
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Pt2Versions, NewerVersionsAreRefusedByName) {
  for (const Case& c : cases(kFile, "load")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string path = fixture_relative(kFile, c.data.at("file"));
    Model model;
    expect_code(c, slimcuda_model_load_file(path.c_str(), -1, -1, &model.m));
    EXPECT_EQ(model.m, nullptr);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
