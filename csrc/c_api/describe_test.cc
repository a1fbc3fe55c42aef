// SPDX-License-Identifier: Apache-2.0
// slimcuda_describe and slimcuda_describe_file: a model file's devices, inputs and outputs
// read without loading its library, so a CUDA .pt2 is described on a machine without a GPU;
// a real PyTorch 2.11 export's output known from its wrapper source; the files that cannot
// be described get a code and a message that says why; every null argument is refused.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

struct Description {
  slimcuda_description* d = nullptr;
  ~Description() { slimcuda_description_free(d); }
};

std::string pt2(const std::string& name) { return fixture_relative("pt2.json", "pt2/" + name); }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::vector<int64_t> sizes_of(const slimcuda_tensor_spec& s) {
  return s.sizes == nullptr ? std::vector<int64_t>{} : std::vector<int64_t>(s.sizes, s.sizes + s.ndim);
}

TEST(Describe, ARealExportsInputsAndOutputFromItsWrapperSource) {
  const std::string path = pt2("real_cpu_linear.pt2");
  const std::vector<uint8_t> bytes = read_bytes(path);
  for (const bool from_file : {true, false}) {
    SCOPED_TRACE(from_file ? "file" : "memory");
    Description d;
    ASSERT_EQ(from_file ? slimcuda_describe_file(path.c_str(), nullptr, &d.d)
                        : slimcuda_describe(bytes.data(), bytes.size(), nullptr, &d.d),
              SLIMCUDA_OK)
        << slimcuda_last_error_message();
    int32_t type = -1;
    uint32_t types = 0;
    ASSERT_EQ(slimcuda_description_device(d.d, &type, &types), SLIMCUDA_OK);
    EXPECT_EQ(type, SLIMCUDA_DEVICE_CPU);
    EXPECT_EQ(types, 1u << SLIMCUDA_DEVICE_CPU);
    size_t n_in = 0, n_out = 0;
    ASSERT_EQ(slimcuda_description_num_io(d.d, &n_in, &n_out), SLIMCUDA_OK);
    ASSERT_EQ(n_in, 2u);
    ASSERT_EQ(n_out, 1u);
    slimcuda_tensor_spec s{};
    ASSERT_EQ(slimcuda_description_input_spec(d.d, 0, &s), SLIMCUDA_OK);
    EXPECT_STREQ(s.name, "arg2_1");
    EXPECT_EQ(s.dtype, SLIMCUDA_FLOAT32);
    EXPECT_EQ(sizes_of(s), (std::vector<int64_t>{2, 4}));
    // y = relu(x @ W.T + b + z): [2, 3] float32, from run_impl's allocation of its buffer
    // (testdata/pt2/real_cpu_linear.ref.json's y has its 6 values).
    ASSERT_EQ(slimcuda_description_output_spec(d.d, 0, &s), SLIMCUDA_OK);
    EXPECT_STREQ(s.name, "output0");
    EXPECT_EQ(s.dtype, SLIMCUDA_FLOAT32);
    EXPECT_EQ(s.dynamism, SLIMCUDA_STATIC);
    EXPECT_EQ(sizes_of(s), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(s.device_type, SLIMCUDA_DEVICE_CPU);
    EXPECT_EQ(slimcuda_description_output_spec(d.d, 1, &s), SLIMCUDA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(slimcuda_description_input_spec(d.d, 2, &s), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  }
}

// The CUDA demo as a .pt2 (its wrapper as AOTInductor writes a dynamic model): described
// here whether or not there is a GPU; its output's sizes are symbolic, so unknown.
TEST(Describe, ACudaPt2NeedsNoGpu) {
  Description d;
  ASSERT_EQ(slimcuda_describe_file(env("SLIMCUDA_DEMO_CUDA_PT2").c_str(), nullptr, &d.d), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  int32_t type = -1;
  uint32_t types = 0;
  ASSERT_EQ(slimcuda_description_device(d.d, &type, &types), SLIMCUDA_OK);
  EXPECT_EQ(type, SLIMCUDA_DEVICE_CUDA);
  EXPECT_EQ(types, 1u << SLIMCUDA_DEVICE_CUDA);
  slimcuda_tensor_spec s{};
  ASSERT_EQ(slimcuda_description_input_spec(d.d, 0, &s), SLIMCUDA_OK);
  EXPECT_STREQ(s.name, "arg0_1");
  EXPECT_EQ(s.dynamism, SLIMCUDA_DYNAMIC_BOUNDED);
  EXPECT_EQ(sizes_of(s), (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(s.device_type, SLIMCUDA_DEVICE_CUDA);
  ASSERT_EQ(slimcuda_description_output_spec(d.d, 0, &s), SLIMCUDA_OK);
  EXPECT_STREQ(s.name, "output0");
  EXPECT_EQ(s.dtype, SLIMCUDA_SPEC_UNKNOWN);
  EXPECT_EQ(s.dynamism, SLIMCUDA_SPEC_UNKNOWN);
  EXPECT_EQ(s.ndim, 0);
}

TEST(Describe, APackageFromItsManifest) {
  Description d;
  ASSERT_EQ(slimcuda_describe_file(env("SLIMCUDA_DEMO_PACKAGE").c_str(), nullptr, &d.d), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  int32_t type = -1;
  uint32_t types = 0;
  ASSERT_EQ(slimcuda_description_device(d.d, &type, &types), SLIMCUDA_OK);
  EXPECT_EQ(types, (1u << SLIMCUDA_DEVICE_CPU) | (1u << SLIMCUDA_DEVICE_CUDA));
  int32_t devices = 0;
  ASSERT_EQ(slimcuda_device_count(&devices), SLIMCUDA_OK);
  EXPECT_EQ(type, devices > 0 ? SLIMCUDA_DEVICE_CUDA : SLIMCUDA_DEVICE_CPU) << "what a load would pick";
  slimcuda_tensor_spec s{};
  ASSERT_EQ(slimcuda_description_output_spec(d.d, 0, &s), SLIMCUDA_OK);
  EXPECT_STREQ(s.name, "y");
  EXPECT_EQ(s.dtype, SLIMCUDA_FLOAT32);
  EXPECT_EQ(sizes_of(s), (std::vector<int64_t>{64, 8}));
  // The CPU library asked for by name, whatever the machine.
  slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), 0, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF};
  Description cpu;
  ASSERT_EQ(slimcuda_describe_file(env("SLIMCUDA_DEMO_PACKAGE").c_str(), &o, &cpu.d), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_description_device(cpu.d, &type, &types), SLIMCUDA_OK);
  EXPECT_EQ(type, SLIMCUDA_DEVICE_CPU);
}

TEST(Describe, FilesThatCannotBeDescribedSayWhy) {
  const std::string text = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : ".") + "/notes.txt";
  std::ofstream(text) << "hello\n";
  slimcuda_load_options on_cpu{
      static_cast<int32_t>(sizeof(slimcuda_load_options)), 0, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF};
  const struct {
    const char* description;
    std::string path;
    const slimcuda_load_options* options;
    int32_t code;
    const char* message;
  } cases[] = {
      {"a text file", text, nullptr, SLIMCUDA_ERROR_INVALID_PROGRAM, "notes.txt is not a model file"},
      {"no wrapper source", pt2("valid_no_source.pt2"), nullptr, SLIMCUDA_ERROR_NOT_SUPPORTED, "no wrapper source"},
      {"a wrapper without its constructor", pt2("valid.pt2"), nullptr, SLIMCUDA_ERROR_NOT_SUPPORTED,
       "states no input and output counts"},
      {"another device", env("SLIMCUDA_DEMO_CUDA_PT2"), &on_cpu, SLIMCUDA_ERROR_NOT_SUPPORTED, "compiled for cuda"},
      {"a malformed archive", pt2("truncated_half.pt2"), nullptr, SLIMCUDA_ERROR_INVALID_PROGRAM, ""},
      {"no such file", pt2("absent.pt2"), nullptr, SLIMCUDA_ERROR_NOT_FOUND, "absent.pt2"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.description);
    Description d;
    EXPECT_EQ(slimcuda_describe_file(c.path.c_str(), c.options, &d.d), c.code);
    EXPECT_NE(std::string(slimcuda_last_error_message()).find(c.message), std::string::npos)
        << slimcuda_last_error_message();
    EXPECT_EQ(d.d, nullptr);
  }
  // The same text as a model to load: the same message.
  slimcuda_model* m = nullptr;
  EXPECT_EQ(slimcuda_model_load_file_with(text.c_str(), nullptr, &m), SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("is not a model file"), std::string::npos);
  const char hello[] = "hello";
  Description d;
  EXPECT_EQ(slimcuda_describe(hello, sizeof hello, nullptr, &d.d), SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("the data is not a model file"), std::string::npos)
      << slimcuda_last_error_message();
}

TEST(Describe, NullArgumentsAreRefused) {
  Description d;
  const std::string path = pt2("real_cpu_linear.pt2");
  EXPECT_EQ(slimcuda_describe_file(nullptr, nullptr, &d.d), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_describe_file(path.c_str(), nullptr, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_describe(nullptr, 4, nullptr, &d.d), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  slimcuda_load_options bad{3, -1, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF};
  EXPECT_EQ(slimcuda_describe_file(path.c_str(), &bad, &d.d), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  bad = slimcuda_load_options{static_cast<int32_t>(sizeof(slimcuda_load_options)), 7, -1, 0, nullptr, 0};
  EXPECT_EQ(slimcuda_describe_file(path.c_str(), &bad, &d.d), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(slimcuda_describe_file(path.c_str(), nullptr, &d.d), SLIMCUDA_OK);
  int32_t type = 0;
  uint32_t types = 0;
  size_t n = 0;
  slimcuda_tensor_spec s{};
  EXPECT_EQ(slimcuda_description_device(nullptr, &type, &types), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_device(d.d, nullptr, &types), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_device(d.d, &type, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_num_io(nullptr, &n, &n), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_num_io(d.d, nullptr, &n), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_input_spec(nullptr, 0, &s), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_output_spec(d.d, 0, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_description_free(nullptr), SLIMCUDA_OK);
}

}  // namespace
}  // namespace slimcuda::testing
