// SPDX-License-Identifier: Apache-2.0
// The package reader on untrusted bytes, from testdata/packages.json's check cases, the
// writer's round trip and the JSON manifest's numbers. The same cases through the C ABI
// (slimcuda_package_check, slimcuda_model_load, slimcuda_package_pack), as Go runs them:
// csrc/c_api/package_api_test.cc.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/package/manifest.h"
#include "csrc/package/model_package.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

TEST(Packages, Read) {
  for (const Case& c : cases("packages.json", "check")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::vector<uint8_t> bytes = read_bytes(fixture_relative("packages.json", c.data.at("file")));
    ModelPackage p;
    const Error got = ModelPackage::parse(bytes.data(), bytes.size(), &p);
    expect_code(c, static_cast<int32_t>(got), last_error_message());
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// Every prefix of a valid package: an error or a success, never a crash (ASan watches).
TEST(Packages, EveryTruncationIsHandled) {
  const std::vector<uint8_t> bytes =
      read_bytes(fixture_relative("packages.json", "packages/valid_dynamic_bounded.slimcuda"));
  int ok = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    ModelPackage p;
    const Error e = ModelPackage::parse(prefix.data(), prefix.size(), &p);
    EXPECT_TRUE(e == Error::Ok || e == Error::InvalidProgram) << n;
    ok += e == Error::Ok;
  }
  EXPECT_EQ(ok, 0) << "a truncated package was accepted";
}

TEST(Packages, WriterRoundTripsAndRefusesBadMetadata) {
  ModelPackage p;
  LibrarySpec lib;
  lib.device_type = DeviceType::CUDA;
  lib.so = test_library();
  MethodSpec m;
  m.name = "forward";
  TensorSpec t;
  t.name = "x";
  t.sizes = {8, 4};
  t.min_sizes = {1, 4};
  t.dynamism = Dynamism::DynamicBounded;
  t.device = Device{DeviceType::CUDA, 0};
  t.dim_order = {1, 0};
  m.inputs.push_back(t);
  lib.methods.push_back(m);
  p.libraries.push_back(lib);
  p.weights = {9, 9};
  std::vector<uint8_t> bytes;
  ASSERT_EQ(p.serialize(&bytes), Error::Ok);
  ModelPackage q;
  ASSERT_EQ(ModelPackage::parse(bytes.data(), bytes.size(), &q), Error::Ok) << last_error_message();
  ASSERT_EQ(q.libraries.size(), 1u);
  const TensorSpec& r = q.libraries[0].methods[0].inputs[0];
  EXPECT_EQ(r.name, "x");
  EXPECT_EQ(r.sizes, t.sizes);
  EXPECT_EQ(r.min_sizes, t.min_sizes);
  EXPECT_EQ(r.dim_order, t.dim_order);
  EXPECT_EQ(r.dynamism, Dynamism::DynamicBounded);
  EXPECT_EQ(r.device.index, 0);
  EXPECT_EQ(q.weights, p.weights);
  EXPECT_EQ(q.library(DeviceType::CUDA)->so, lib.so);
  EXPECT_EQ(q.library(DeviceType::CPU), nullptr);
  // The writer applies the reader's rules.
  p.libraries[0].methods[0].inputs[0].dynamism = Dynamism::DynamicUnbounded;
  EXPECT_EQ(p.serialize(&bytes), Error::InvalidProgram);
  p.libraries[0].methods[0].inputs[0].dynamism = Dynamism::DynamicBounded;
  p.libraries[0].so = {1, 2, 3};  // not an ELF shared object
  EXPECT_EQ(p.serialize(&bytes), Error::InvalidProgram);
  p.libraries.clear();
  EXPECT_EQ(p.serialize(&bytes), Error::InvalidArgument);
}

// Manifest numbers are JSON integers within their field's range, never truncated or
// wrapped (go/slimcuda/package_test.go checks the same cases through Pack).
TEST(Manifest, RefusesNumbersThatAreNotIntegersInRange) {
  struct NumberCase {
    const char* description;
    const char* fields;  // the input tensor's numeric fields, as JSON
    const char* message;
  };
  const NumberCase cases[] = {
      {"fractional sizes", R"("sizes": [2.7, 3.9])", "tensor 'x': sizes[0] must be an integer"},
      {"integral float size", R"("sizes": [2.0])", "tensor 'x': sizes[0] must be an integer"},
      {"size 1e10", R"("sizes": [1e10])", "tensor 'x': sizes[0] must be an integer"},
      {"size 1e300", R"("sizes": [3, 1e300])", "tensor 'x': sizes[1] must be an integer"},
      {"size past int64", R"("sizes": [9223372036854775808])", "tensor 'x': sizes[0] must be an integer"},
      {"boolean size", R"("sizes": [true])", "tensor 'x': sizes[0] must be an integer"},
      {"sizes not an array", R"("sizes": 3)", "tensor 'x': sizes must be an array"},
      {"fractional min size", R"("sizes": [3], "min_sizes": [0.5], "dynamism": "dynamic_bounded")",
       "tensor 'x': min_sizes[0] must be an integer"},
      {"dim_order past uint8", R"("sizes": [3, 3], "dim_order": [257, 256])",
       "tensor 'x': dim_order[0] must be an integer in [0, 255], got 257"},
      {"negative dim_order", R"("sizes": [3], "dim_order": [-1])", "tensor 'x': dim_order[0] must be an integer"},
      {"device_index past int32", R"("sizes": [3], "device_index": 4294967295)",
       "tensor 'x': device_index must be an integer in [-1, 127], got 4294967295"},
      {"device_index 1e300", R"("sizes": [3], "device_index": 1e300)", "tensor 'x': device_index must be an integer"},
      {"fractional device_index", R"("sizes": [3], "device_index": 0.5)",
       "tensor 'x': device_index must be an integer"},
  };
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/n.so", std::ios::binary) << "not really a library";
  for (const NumberCase& c : cases) {
    SCOPED_TRACE(c.description);
    const std::string path = dir + "/numbers.json";
    std::ofstream(path) << R"({"libraries": [{"device": "cpu", "so": "n.so", "methods": [{"name": "forward",
        "inputs": [{"name": "x", "dtype": "int64", "device": "cpu", )"
                        << c.fields << R"(}],
        "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}]})";
    ModelPackage p;
    EXPECT_EQ(package_from_manifest(path, &p), Error::InvalidArgument);
    EXPECT_NE(std::string(last_error_message()).find(c.message), std::string::npos) << last_error_message();
  }
}

}  // namespace
}  // namespace slimcuda::testing
