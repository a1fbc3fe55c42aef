// SPDX-License-Identifier: Apache-2.0
// What a generated wrapper source states about a model's inputs and outputs, read without
// running it: the constructor's counts and names (parse_wrapper_io), and each output's
// allocation followed back through whole-buffer reuses (parse_output_allocations), over
// sources shaped as PyTorch 2.11 writes them (testdata/pt2/real_cpu_linear.pt2's wrapper
// has this shape) and the variants that must stay unknown.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/archive/pt2_model.h"
#include "slimcuda/last_error.h"

namespace slimcuda::test {
namespace {

const char* kConstructor = R"(
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   const std::string& device_str,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(2,
                           3,
                           1,
                           device_str,
                           std::move(cubin_dir),
                           true) {
    inputs_info_[0].name = "arg2_1";
    inputs_info_[1].name = "arg3_1";
    constants_info_[0].name = "linear_weight";
    outputs_info_[0].name = "output0";
    outputs_info_[1].name = "output1";
    outputs_info_[2].name = "output2";
}
)";

// Output 0: a buffer reused twice; 1: a view of a buffer; 2: symbolic sizes.
const char* kRunImpl = R"(
void AOTInductorModel::run_impl(
    AtenTensorHandle* input_handles,
    AtenTensorHandle* output_handles,
    DeviceStreamType stream,
    AOTIProxyExecutorHandle proxy_executor
) {
    static constexpr int64_t int_array_2[] = {2L, 3L};
    static constexpr int64_t int_array_3[] = {3L, 1L};
    AtenTensorHandle buf1_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_2, int_array_3, cached_torch_dtype_bfloat16, cached_torch_device_type_cuda, this->device_idx_, &buf1_handle));
    RAIIAtenTensorHandle buf1(buf1_handle);
    auto buf2 = std::move(buf1);  // reuse
    auto buf12 = std::move(buf2);  // reuse
    static constexpr int64_t int_array_4[] = {6L, };
    static constexpr int64_t int_array_5[] = {1L, };
    AtenTensorHandle buf3_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(1, int_array_4, int_array_5, cached_torch_dtype_float32, cached_torch_device_type_cuda, this->device_idx_, &buf3_handle));
    RAIIAtenTensorHandle buf3(buf3_handle);
    auto buf4 = wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(buf3, 2, int_array_2, int_array_3, 0L));
    int64_t s0 = 4;
    const int64_t int_array_6[] = {s0, 8L};
    AtenTensorHandle buf5_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_6, int_array_3, cached_torch_dtype_float32, cached_torch_device_type_cuda, this->device_idx_, &buf5_handle));
    RAIIAtenTensorHandle buf5(buf5_handle);
    output_handles[0] = buf12.release();
    output_handles[1] = buf4.release();
    output_handles[2] = buf5.release();
} // AOTInductorModel::run_impl
)";

TEST(WrapperIo, CountsAndNamesFromTheConstructor) {
  WrapperIo io;
  ASSERT_EQ(parse_wrapper_io(kConstructor, &io), Error::Ok) << last_error_message();
  EXPECT_EQ(io.num_inputs, 2u);
  EXPECT_EQ(io.num_outputs, 3u);
  EXPECT_EQ(io.input_names, (std::vector<std::string>{"arg2_1", "arg3_1"}));
  EXPECT_EQ(io.output_names, (std::vector<std::string>{"output0", "output1", "output2"}));
}

TEST(WrapperIo, NoConstructorIsNotFound) {
  WrapperIo io;
  EXPECT_EQ(parse_wrapper_io("static void check_input_0(", &io), Error::NotFound);
  EXPECT_EQ(parse_wrapper_io("", &io), Error::NotFound);
}

TEST(WrapperIo, MalformedCountsAndNamesAreInvalidProgram) {
  const struct {
    const char* description;
    std::string source;
    const char* message;
  } cases[] = {
      {"no numbers", "AOTInductorModelBase(n, m, 0", "states no input and output counts"},
      {"negative", "AOTInductorModelBase(-1, 1, 0", "-1 inputs"},
      {"too many", "AOTInductorModelBase(1, 99999999, 0", "99999999 outputs"},
      {"name out of range", "AOTInductorModelBase(1, 1, 0) {\n    outputs_info_[1].name = \"y\";", "outputs 1 of 1"},
      {"negative name index", "AOTInductorModelBase(1, 1, 0) {\n    inputs_info_[-1].name = \"x\";", "inputs -1 of 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.description);
    WrapperIo io;
    EXPECT_EQ(parse_wrapper_io(c.source, &io), Error::InvalidProgram);
    EXPECT_NE(std::string(last_error_message()).find(c.message), std::string::npos) << last_error_message();
  }
}

TEST(OutputAllocations, StaticBuffersAreKnownViewsAndSymbolicSizesAreNot) {
  std::vector<TensorSpec> specs;
  const std::vector<std::string> names = {"output0", "output1", "output2", "output3"};
  ASSERT_EQ(parse_output_allocations(std::string(kConstructor) + kRunImpl, names, &specs), Error::Ok);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_TRUE(specs[0].known);
  EXPECT_EQ(specs[0].name, "output0");
  EXPECT_EQ(specs[0].dtype, ScalarType::BFloat16);
  EXPECT_EQ(specs[0].sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(specs[0].dynamism, Dynamism::Static);
  EXPECT_EQ(specs[0].device.type, DeviceType::CUDA);
  for (size_t i : {1, 2, 3}) {  // a view, symbolic sizes, no output_handles line at all
    SCOPED_TRACE(i);
    EXPECT_FALSE(specs[i].known);
    EXPECT_EQ(specs[i].name, names[i]);
    EXPECT_TRUE(specs[i].sizes.empty());
  }
}

TEST(OutputAllocations, OnlyRunImplsBuffersCount) {
  // The same allocation outside run_impl (a constant-folding function) says nothing.
  const std::string source = std::string(R"(
void AOTInductorModel::_const_run_impl() {
    static constexpr int64_t int_array_0[] = {5L, };
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(1, int_array_0, int_array_0, cached_torch_dtype_float32, cached_torch_device_type_cpu, this->device_idx_, &buf0_handle));
}
)");
  std::vector<TensorSpec> specs;
  ASSERT_EQ(parse_output_allocations(source + "output_handles[0] = buf0.release();", {"y"}, &specs), Error::Ok);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_FALSE(specs[0].known);
}

TEST(OutputAllocations, MalformedArraysStayUnknown) {
  for (const char* array : {"{2L, -3L}", "{2L 3L}", "{2, 3}", "{2L, 3L", "{}"}) {
    SCOPED_TRACE(array);
    const std::string source = std::string("::run_impl(\n    static constexpr int64_t int_array_0[] = ") + array +
                               ";\n    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, "
                               "int_array_0, cached_torch_dtype_float32, cached_torch_device_type_cpu, "
                               "this->device_idx_, &buf0_handle));\n    output_handles[0] = buf0.release();";
    std::vector<TensorSpec> specs;
    ASSERT_EQ(parse_output_allocations(source, {"y"}, &specs), Error::Ok);
    EXPECT_FALSE(specs[0].known);
  }
}

TEST(OutputAllocations, AReuseCycleEnds) {
  const std::string source =
      "::run_impl(\n    auto buf1 = std::move(buf2);\n    auto buf2 = std::move(buf1);\n"
      "    output_handles[0] = buf1.release();";
  std::vector<TensorSpec> specs;
  ASSERT_EQ(parse_output_allocations(source, {"y"}, &specs), Error::Ok);
  EXPECT_FALSE(specs[0].known);
}

}  // namespace
}  // namespace slimcuda::test
