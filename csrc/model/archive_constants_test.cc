// SPDX-License-Identifier: Apache-2.0
// What a `.pt2` says about externally kept constants (archive_constants.h): the wrapper
// source's constants_info_ declarations, their check against the library's container, and
// pickle_weights' weights_config.json — well-formed text and every malformed case.
#include "csrc/model/archive_constants.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

// The shape of PyTorch 2.11's generated constructor (written here for the test: two
// parameters and a folded constant, the fields in the generator's order).
constexpr char kWrapper[] = R"(
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   const std::string& device_str,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(1, 1, 3, device_str, std::move(cubin_dir), false) {
    inputs_info_[0].name = "arg4_1";
    constants_info_[0].name = "l1_weight";
    constants_info_[0].dtype = cached_torch_dtype_float32;
    constants_info_[0].device_type = cached_torch_device_type_cpu;
    constants_info_[0].offset = 0;
    constants_info_[0].data_size = 2048;
    constants_info_[0].from_folded = false;
    constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter);
    constants_info_[0].shape = {32, 16};
    constants_info_[0].stride = {16, 1};
    constants_info_[0].layout = static_cast<int32_t>(cached_torch_layout_strided);
    constants_info_[0].original_fqn = "l1.weight";
    constants_info_[1].name = "l1_bias";
    constants_info_[1].offset = 3;
    constants_info_[1].data_size = 192;
    constants_info_[1].from_folded = false;
    constants_info_[1].shape = {32};
    constants_info_[1].stride = {1};
    constants_info_[1].original_fqn = "l1.bias";
    constants_info_[2].name = "_FOLDED_CONST_mul";
    constants_info_[2].data_size = 64;
    constants_info_[2].from_folded = true;
    constants_info_[2].shape = {};
    constants_info_[2].stride = {};
    constants_info_[2].original_fqn = "_FOLDED_CONST_mul";
    update_constants_map(std::move(constants_map));
}
)";

std::vector<ContainerConstant> container_of_wrapper() {
  return {{"l1_weight", "l1.weight", false, 6, 2048},
          {"l1_bias", "l1.bias", false, 6, 192},
          {"_FOLDED_CONST_mul", "_FOLDED_CONST_mul", true, 6, 64}};
}

TEST(WrapperConstants, ReadsTheGeneratedDeclarations) {
  std::vector<WrapperConstant> w;
  ASSERT_EQ(parse_wrapper_constants(kWrapper, sizeof kWrapper - 1, &w), Error::Ok) << last_error_message();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].name, "l1_weight");
  EXPECT_EQ(w[0].original_fqn, "l1.weight");
  EXPECT_EQ(w[0].data_size, 2048u);
  EXPECT_EQ(w[0].shape, (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(w[0].stride, (std::vector<int64_t>{16, 1}));
  EXPECT_FALSE(w[0].from_folded);
  EXPECT_EQ(w[1].offset, 3);
  EXPECT_TRUE(w[2].from_folded);
  EXPECT_TRUE(w[2].shape.empty());
  EXPECT_EQ(w[0].device, "cpu");
  EXPECT_EQ(w[1].device, "");

  std::vector<ConstantShape> shapes;
  ASSERT_EQ(blob_shapes(container_of_wrapper(), w, DeviceType::CPU, &shapes), Error::Ok) << last_error_message();
  ASSERT_EQ(shapes.size(), 2u) << "the folded constant has no bytes in the blob";
  EXPECT_EQ(shapes[1].sizes, (std::vector<int64_t>{32}));
  EXPECT_EQ(shapes[1].storage_offset, 3);
}

TEST(WrapperConstants, NoConstantsIsAnEmptyList) {
  const std::string text = "int main() { return 0; }";
  std::vector<WrapperConstant> w = {WrapperConstant{}};
  ASSERT_EQ(parse_wrapper_constants(text.data(), text.size(), &w), Error::Ok);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse_wrapper_constants(nullptr, 0, &w), Error::Ok);
  EXPECT_EQ(parse_wrapper_constants(nullptr, 4, &w), Error::InvalidArgument);
}

struct Bad {
  const char* description;
  const char* text;
  const char* message;
};

const Bad kBadWrappers[] = {
    {"index not a number", "constants_info_[x].name = \"a\";", "not a constants_info_[i].field"},
    {"huge index", "constants_info_[99999999999].name = \"a\";", "constant index"},
    {"index overflowing int64", "constants_info_[999999999999999999999].name = \"a\";", "not a constants_info_"},
    {"no '='", "constants_info_[0].name \"a\";", "not a constants_info_"},
    {"name not a string", "constants_info_[0].name = a;", "constants_info_[0].name has a value"},
    {"name with an escape", "constants_info_[0].name = \"a\\\"b\";", "constants_info_[0].name has a value"},
    {"empty name", "constants_info_[0].name = \"\";", "constants_info_[0].name has a value"},
    {"unterminated string", "constants_info_[0].name = \"abc", "constants_info_[0].name has a value"},
    {"negative size", "constants_info_[0].data_size = -4;", "constants_info_[0].data_size has a value"},
    {"negative offset", "constants_info_[0].offset = -1;", "constants_info_[0].offset has a value"},
    {"shape with a negative size", "constants_info_[0].shape = {2, -3};", "constants_info_[0].shape has a value"},
    {"shape unterminated", "constants_info_[0].shape = {2, 3;", "constants_info_[0].shape has a value"},
    {"shape of 40 dimensions",
     "constants_info_[0].shape = {1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1};",
     "constants_info_[0].shape has a value"},
    {"from_folded not a bool", "constants_info_[0].from_folded = 1;", "constants_info_[0].from_folded has a value"},
    {"no ';'", "constants_info_[0].data_size = 4\n", "constants_info_[0].data_size has a value"},
    {"other field without ';' on its line", "constants_info_[0].dtype = x\n;", "constants_info_[0].dtype has a value"},
    {"a constant without shape", "constants_info_[0].name = \"a\"; constants_info_[0].stride = {1};",
     "constant 0 lacks its name, shape or stride"},
    {"a gap in the indices",
     "constants_info_[1].name = \"a\"; constants_info_[1].shape = {1}; constants_info_[1].stride = {1};",
     "constant 0 lacks"},
    {"rank of shape and stride differ",
     "constants_info_[0].name = \"a\"; constants_info_[0].shape = {1, 2}; constants_info_[0].stride = {1};",
     "has 2 sizes and 1 strides"},
};

TEST(WrapperConstants, MalformedDeclarationsAreInvalidProgram) {
  for (const Bad& b : kBadWrappers) {
    SCOPED_TRACE(b.description);
    std::vector<WrapperConstant> w;
    const std::string text = b.text;
    EXPECT_EQ(parse_wrapper_constants(text.data(), text.size(), &w), Error::InvalidProgram);
    EXPECT_NE(std::string(last_error_message()).find(b.message), std::string::npos) << last_error_message();
  }
}

TEST(WrapperConstants, WrapperAndLibraryMustAgree) {
  std::vector<WrapperConstant> w;
  ASSERT_EQ(parse_wrapper_constants(kWrapper, sizeof kWrapper - 1, &w), Error::Ok);
  std::vector<ConstantShape> shapes;
  std::vector<ContainerConstant> c = container_of_wrapper();
  c.pop_back();
  EXPECT_EQ(blob_shapes(c, w, DeviceType::CPU, &shapes), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("3 constants declared, 2 in the library"), std::string::npos)
      << last_error_message();
  for (int field = 0; field < 3; ++field) {
    c = container_of_wrapper();
    if (field == 0) c[1].name = "l1_other";
    if (field == 1) c[1].data_size = 128;
    if (field == 2) c[1].from_folded = true;
    EXPECT_EQ(blob_shapes(c, w, DeviceType::CPU, &shapes), Error::InvalidProgram) << field;
    EXPECT_NE(std::string(last_error_message()).find("disagree on constant 1"), std::string::npos)
        << last_error_message();
  }
}

TEST(WrapperConstants, CpuConstantOfACudaModelStaysOnTheHost) {
  // PyTorch's mixed-device constants: l1_weight is declared on the CPU, l1_bias on no device.
  std::vector<WrapperConstant> w;
  ASSERT_EQ(parse_wrapper_constants(kWrapper, sizeof kWrapper - 1, &w), Error::Ok);
  std::vector<ConstantShape> shapes;
  ASSERT_EQ(blob_shapes(container_of_wrapper(), w, DeviceType::CUDA, &shapes), Error::Ok) << last_error_message();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_TRUE(shapes[0].on_cpu);
  EXPECT_FALSE(shapes[1].on_cpu);
  // In a CPU model every constant is on the model's device.
  ASSERT_EQ(blob_shapes(container_of_wrapper(), w, DeviceType::CPU, &shapes), Error::Ok) << last_error_message();
  EXPECT_FALSE(shapes[0].on_cpu);
}

TEST(WrapperConstants, ConstantOnAnotherDeviceIsNotSupported) {
  std::vector<WrapperConstant> w;
  ASSERT_EQ(parse_wrapper_constants(kWrapper, sizeof kWrapper - 1, &w), Error::Ok);
  std::vector<ConstantShape> shapes;
  // A CUDA constant in a CPU model, and another backend's device.
  for (const char* device : {"cuda", "xpu"}) {
    w[0].device = device;
    EXPECT_EQ(blob_shapes(container_of_wrapper(), w, DeviceType::CPU, &shapes), Error::NotSupported) << device;
    EXPECT_NE(std::string(last_error_message())
                  .find("constant 'l1_weight' lives on " + std::string(device) + " in a cpu model"),
              std::string::npos)
        << last_error_message();
  }
  w[0].device = "xpu";
  EXPECT_EQ(blob_shapes(container_of_wrapper(), w, DeviceType::CUDA, &shapes), Error::NotSupported);
}

TEST(WeightsConfig, ReadsPickleWeightsConfig) {
  const std::string text =
      R"({"l1.weight": ["weight_0", [32, 16], [16, 1], 0], "l1.bias": ["weight_1", [32], [1], 5]})";
  std::vector<PickledWeight> w;
  ASSERT_EQ(parse_weights_config(text.data(), text.size(), &w), Error::Ok) << last_error_message();
  ASSERT_EQ(w.size(), 2u);
  // nlohmann's objects are ordered by key.
  EXPECT_EQ(w[0].fqn, "l1.bias");
  EXPECT_EQ(w[0].file, "weight_1");
  EXPECT_EQ(w[0].offset, 5);
  EXPECT_EQ(w[1].shape, (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(w[1].stride, (std::vector<int64_t>{16, 1}));
}

TEST(WeightsConfig, MalformedConfigIsInvalidProgram) {
  const Bad cases[] = {
      {"not JSON", "{", "not a JSON object"},
      {"an array", "[]", "not a JSON object"},
      {"value not a list", R"({"w": "weight_0"})", "'w' is not [file, [sizes], [strides], offset]"},
      {"three fields", R"({"w": ["weight_0", [1], [1]]})", "'w' is not"},
      {"negative size", R"({"w": ["weight_0", [-1], [1], 0]})", "'w' is not"},
      {"negative offset", R"({"w": ["weight_0", [1], [1], -2]})", "'w' is not"},
      {"ranks differ", R"({"w": ["weight_0", [1, 2], [1], 0]})", "'w' is not"},
      {"size not an integer", R"({"w": ["weight_0", [1.5], [1], 0]})", "'w' is not"},
      {"path traversal", R"({"w": ["../../etc/passwd", [1], [1], 0]})", "names the file '../../etc/passwd'"},
      {"dot-dot", R"({"w": ["..", [1], [1], 0]})", "names the file '..'"},
      {"backslash", R"({"w": ["a\\b", [1], [1], 0]})", "names the file"},
      {"empty file name", R"({"w": ["", [1], [1], 0]})", "names the file ''"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.description);
    std::vector<PickledWeight> w;
    const std::string text = b.text;
    EXPECT_EQ(parse_weights_config(text.data(), text.size(), &w), Error::InvalidProgram);
    EXPECT_NE(std::string(last_error_message()).find(b.message), std::string::npos) << last_error_message();
  }
}

}  // namespace
}  // namespace slimcuda::testing
