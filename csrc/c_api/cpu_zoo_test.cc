// SPDX-License-Identifier: Apache-2.0
// testdata/cpu_zoo.json: real CPU exports of the zoo's kinds of model (BERT, GPT-2, Llama,
// T5 encoder, ViT, convolutions, a 1-D conv audio net, GRU, a KV-cache decoder) loaded from
// their .pt2 through the C ABI on the CPU and compared with eager PyTorch's outputs
// (go/slimcuda/cpu_zoo_test.go runs the same cases).
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

const bool kOwnsCpuZoo = own_fixture("cpu_zoo.json");

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return in.good() ? nlohmann::json::parse(in) : nlohmann::json::object();
}

int32_t dtype_of(const std::string& name, size_t* size) {
  if (name == "float32") return *size = 4, SLIMCUDA_FLOAT32;
  if (name == "int64") return *size = 8, SLIMCUDA_INT64;
  ADD_FAILURE() << "unexpected input dtype " << name;
  return *size = 0, -1;
}

struct Tensors {
  std::vector<slimcuda_tensor*> t;
  ~Tensors() {
    for (slimcuda_tensor* x : t) slimcuda_tensor_delete(x);
  }
};

struct ModelHandle {
  slimcuda_model* m = nullptr;
  ~ModelHandle() { slimcuda_model_free(m); }
};

// The case's inputs as CPU tensors; `patch` (when given) overwrites one element of one.
void load_inputs(const std::string& case_dir, Tensors* in, const nlohmann::json* patch = nullptr) {
  for (const auto& spec : read_json(case_dir + "/inputs.json")) {
    const auto sizes = spec["sizes"].get<std::vector<int64_t>>();
    size_t es = 0;
    const int32_t dtype = dtype_of(spec["dtype"], &es);
    std::vector<uint8_t> bytes = read_bytes(case_dir + "/" + spec["file"].get<std::string>());
    const size_t index = in->t.size();
    if (patch != nullptr && (*patch)["input"].get<size_t>() == index) {
      const size_t at = (*patch)["element"].get<size_t>() * es;
      ASSERT_EQ(dtype, SLIMCUDA_INT64);
      ASSERT_LE(at + 8, bytes.size());
      const int64_t v = (*patch)["value"].get<int64_t>();
      std::memcpy(bytes.data() + at, &v, 8);
    }
    slimcuda_tensor* t = nullptr;
    ASSERT_EQ(slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, dtype,
                                    SLIMCUDA_DEVICE_CPU, 0, 0, &t),
              SLIMCUDA_OK)
        << slimcuda_last_error_message();
    in->t.push_back(t);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(t, bytes.data(), bytes.size(), dtype), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
}

void expect_outputs(const std::string& case_dir, const Tensors& out, double atol, double rtol) {
  const nlohmann::json expected = read_json(case_dir + "/expected.json");
  ASSERT_EQ(out.t.size(), expected.size());
  for (size_t o = 0; o < expected.size(); ++o) {
    const std::vector<uint8_t> raw = read_bytes(case_dir + "/" + expected[o]["float32_file"].get<std::string>());
    std::vector<float> want(raw.size() / 4), got(want.size());
    std::memcpy(want.data(), raw.data(), raw.size());
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(out.t[o], &info), SLIMCUDA_OK);
    EXPECT_EQ(std::vector<int64_t>(info.sizes, info.sizes + info.ndim),
              expected[o]["sizes"].get<std::vector<int64_t>>())
        << "output " << o;
    ASSERT_EQ(info.numel, static_cast<int64_t>(want.size())) << "output " << o;
    ASSERT_EQ(slimcuda_tensor_copy_to_host(out.t[o], got.data(), got.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    int bad = 0;
    for (size_t i = 0; i < want.size() && bad < 5; ++i) {
      if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
        ADD_FAILURE() << "output " << o << " element " << i << " = " << got[i] << ", want " << want[i];
        ++bad;
      }
    }
  }
}

ModelHandle load(const std::string& dir) {
  ModelHandle m;
  EXPECT_EQ(slimcuda_model_load_file((dir + "/model.pt2").c_str(), SLIMCUDA_DEVICE_CPU, -1, &m.m), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  return m;
}

TEST(CpuZoo, RealExportsMatchEager) {
  for (const Case& c : cases("cpu_zoo.json", "run")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string dir = fixture_relative("cpu_zoo.json", c.data["dir"]);
    const nlohmann::json meta = read_json(dir + "/meta.json");
    ModelHandle m = load(dir);
    ASSERT_NE(m.m, nullptr);
    size_t n_in = 0, n_out = 0;
    ASSERT_EQ(slimcuda_model_num_io(m.m, &n_in, &n_out), SLIMCUDA_OK);
    EXPECT_EQ(n_in, meta["inputs"].size());
    EXPECT_EQ(n_out, meta["outputs"].size());
    for (const auto& mc : meta["cases"]) {
      const std::string case_dir = dir + "/" + mc["dir"].get<std::string>();
      Tensors in;
      load_inputs(case_dir, &in);
      ASSERT_EQ(in.t.size(), n_in);
      for (int round = 0; round < 2; ++round) {  // a model with state must give the same again
        SCOPED_TRACE(mc["dir"].get<std::string>() + (round == 0 ? ", first run" : ", second run"));
        Tensors out;
        out.t.assign(n_out, nullptr);
        ASSERT_EQ(slimcuda_model_run(m.m, in.t.data(), n_in, out.t.data(), n_out), SLIMCUDA_OK)
            << slimcuda_last_error_message();
        expect_outputs(case_dir, out, meta["tolerance"]["atol"].get<double>(), meta["tolerance"]["rtol"].get<double>());
      }
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(CpuZoo, BadInputFailsTheRun) {
  for (const Case& c : cases("cpu_zoo.json", "run_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string dir = fixture_relative("cpu_zoo.json", c.data["dir"]);
    const nlohmann::json meta = read_json(dir + "/meta.json");
    ModelHandle m = load(dir);
    ASSERT_NE(m.m, nullptr);
    const std::string case_dir = dir + "/" + meta["cases"][0]["dir"].get<std::string>();
    Tensors in, out;
    load_inputs(case_dir, &in, &c.data);
    out.t.assign(meta["outputs"].size(), nullptr);
    expect_code(c, slimcuda_model_run(m.m, in.t.data(), in.t.size(), out.t.data(), out.t.size()));
    for (slimcuda_tensor* t : out.t) EXPECT_EQ(t, nullptr) << "a failed run handed out an output";
    // The model still serves good input afterwards.
    Tensors good, again;
    load_inputs(case_dir, &good);
    again.t.assign(meta["outputs"].size(), nullptr);
    EXPECT_EQ(slimcuda_model_run(m.m, good.t.data(), good.t.size(), again.t.data(), again.t.size()), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
