// SPDX-License-Identifier: Apache-2.0
// testdata/select_export.json: a real CPU export of PyTorch 2.11 (testdata/select/
// select_ops_cpu.pt2, tools/ops/make_select_export.py) whose wrapper calls the selection
// shims (nonzero, masked_select, index_Tensor with a bool mask) and the proxy executor's
// _unique2 and unique_consecutive, loaded and run through the C ABI on the CPU with another
// input than the export saw: every output's sizes and values are PyTorch's eager ones.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsExport = own_fixture("select_export.json");

int32_t dtype_code(const std::string& name) {
  if (name == "float32") return SLIMCUDA_FLOAT32;
  if (name == "int64") return SLIMCUDA_INT64;
  ADD_FAILURE() << "unexpected dtype " << name;
  return -1;
}

struct Tensors {
  std::vector<slimcuda_tensor*> t;
  ~Tensors() {
    for (slimcuda_tensor* x : t) slimcuda_tensor_delete(x);
  }
};

struct Model {
  slimcuda_model* m = nullptr;
  ~Model() { slimcuda_model_free(m); }
};

TEST(SelectExport, RunsWithDataDependentOutputs) {
  for (const Case& c : cases("select_export.json", "export")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Model m;
    const std::string path = fixture_relative("select_export.json", c.data["pt2"].get<std::string>());
    ASSERT_EQ(slimcuda_model_load_file(path.c_str(), SLIMCUDA_DEVICE_CPU, -1, &m.m), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    Tensors in;
    for (const auto& spec : c.data["inputs"]) {
      const auto sizes = spec["sizes"].get<std::vector<int64_t>>();
      const auto vals = spec["values"].get<std::vector<float>>();
      slimcuda_tensor* t = nullptr;
      ASSERT_EQ(slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, SLIMCUDA_FLOAT32,
                                      SLIMCUDA_DEVICE_CPU, 0, 0, &t),
                SLIMCUDA_OK)
          << slimcuda_last_error_message();
      in.t.push_back(t);
      ASSERT_EQ(slimcuda_tensor_copy_from_host(t, vals.data(), vals.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK)
          << slimcuda_last_error_message();
    }
    const auto& want = c.data["outputs"];
    Tensors out;
    out.t.assign(want.size(), nullptr);
    ASSERT_EQ(slimcuda_model_run(m.m, in.t.data(), in.t.size(), out.t.data(), out.t.size()), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    for (size_t o = 0; o < want.size(); ++o) {
      SCOPED_TRACE("output " + std::to_string(o));
      slimcuda_tensor_info info{};
      ASSERT_EQ(slimcuda_tensor_get_info(out.t[o], &info), SLIMCUDA_OK);
      EXPECT_EQ(info.dtype, dtype_code(want[o]["dtype"].get<std::string>()));
      EXPECT_EQ(std::vector<int64_t>(info.sizes, info.sizes + info.ndim), want[o]["sizes"].get<std::vector<int64_t>>());
      std::vector<double> got(static_cast<size_t>(info.numel));
      ASSERT_EQ(slimcuda_tensor_copy_to_host(out.t[o], got.data(), got.size() * 8, SLIMCUDA_FLOAT64), SLIMCUDA_OK)
          << slimcuda_last_error_message();
      EXPECT_EQ(got, want[o]["values"].get<std::vector<double>>());
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
