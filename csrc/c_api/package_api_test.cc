// SPDX-License-Identifier: Apache-2.0
// Packages through the C ABI: testdata/packages.json (go/slimcuda/package_test.go runs the
// same cases) through slimcuda_package_check and slimcuda_model_load, and
// slimcuda_package_pack from a manifest to a file. The reader, writer and manifest
// themselves: csrc/package/package_test.cc.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("packages.json");

TEST(Packages, Check) {
  for (const Case& c : cases("packages.json", "check")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::vector<uint8_t> bytes = read_bytes(fixture_relative("packages.json", c.data.at("file")));
    expect_code(c, slimcuda_package_check(bytes.data(), bytes.size()));
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Packages, Load) {
  for (const Case& c : cases("packages.json", "load")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::vector<uint8_t> bytes = read_bytes(fixture_relative("packages.json", c.data.at("file")));
    slimcuda_model* m = nullptr;
    expect_code(c, slimcuda_model_load(bytes.data(), bytes.size(), 0, 0, &m));
    EXPECT_EQ(m != nullptr, c.data.at("expect") == "Ok") << "a model exactly when the load succeeds";
    slimcuda_model_free(m);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Packages, PackFromManifest) {
  EXPECT_EQ(slimcuda_package_pack("/nonexistent/manifest.json", "/tmp/x.slimcuda"), SLIMCUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(slimcuda_package_pack(nullptr, "/tmp/x.slimcuda"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  const std::string dir = ::testing::TempDir();
  {
    const std::vector<uint8_t> so = test_library();
    std::ofstream(dir + "/m.so", std::ios::binary)
        .write(reinterpret_cast<const char*>(so.data()), static_cast<std::streamsize>(so.size()));
    std::ofstream(dir + "/fake.so", std::ios::binary) << std::string(128, 'x');  // not an ELF file
    std::ofstream(dir + "/manifest.json")
        << R"({"libraries": [{"device": "cpu", "so": "m.so", "methods": [{"name": "forward",
              "inputs": [{"name": "x", "dtype": "int64", "sizes": [3], "device": "cpu"}],
              "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}]})";
    std::ofstream(dir + "/bad.json") << R"({"libraries": [{"device": "tpu", "so": "m.so", "methods": []}]})";
    std::ofstream(dir + "/fake.json")
        << R"({"libraries": [{"device": "cpu", "so": "fake.so", "methods": [{"name": "forward",
              "inputs": [], "outputs": []}]}]})";
  }
  EXPECT_EQ(slimcuda_package_pack((dir + "/fake.json").c_str(), (dir + "/fake.slimcuda").c_str()),
            SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("not an ELF"), std::string::npos)
      << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_package_pack((dir + "/manifest.json").c_str(), (dir + "/out.slimcuda").c_str()), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  const std::vector<uint8_t> bytes = read_bytes(dir + "/out.slimcuda");
  EXPECT_EQ(slimcuda_package_check(bytes.data(), bytes.size()), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_package_pack((dir + "/bad.json").c_str(), (dir + "/bad.slimcuda").c_str()),
            SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("unknown device \"tpu\""), std::string::npos)
      << slimcuda_last_error_message();
}

}  // namespace
}  // namespace slimcuda::testing
