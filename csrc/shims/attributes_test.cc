// SPDX-License-Identifier: Apache-2.0
// The attribute and constant shims: values, and errors for null arguments.
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

TEST(AttributeShims, NullArgumentsAreErrors) {
  const int64_t sizes[2] = {2, 3};
  AtenTensorHandle t = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, sizes, nullptr, 6, 0, 0, &t), 0);
  int64_t i64 = 0;
  int32_t i32 = 0;
  int64_t* arr = nullptr;
  void* p = nullptr;
  bool b = false;
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(nullptr, &p), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_strides)(nullptr, &arr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_dim)(nullptr, &i64), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_numel)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_storage_offset)(nullptr, &i64), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_device_type)(nullptr, &i32), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_get_device_index)(t, nullptr), 0);
  EXPECT_NE(SLIMCUDA_SHIM(aoti_torch_is_contiguous)(nullptr, &b), 0);
  EXPECT_NE(std::string(last_error_message()).find("null t"), std::string::npos) << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
}

TEST(AttributeShims, SizeAndStrideByDimension) {
  const int64_t sizes[3] = {2, 3, 4};
  AtenTensorHandle t = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(3, sizes, nullptr, 4, 0, 0, &t), 0);
  int64_t v = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_size)(t, 1, &v), 0);
  EXPECT_EQ(v, 3);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_size)(t, -1, &v), 0);
  EXPECT_EQ(v, 4);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_stride)(t, 0, &v), 0);
  EXPECT_EQ(v, 12);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_stride)(t, -3, &v), 0);
  EXPECT_EQ(v, 12);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_size)(t, 3, &v), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_stride)(t, -4, &v), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
}

TEST(ConstantShims, CodesMatchC10) {
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 1);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_uint8)(), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_int8)(), 1);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_int16)(), 2);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_int32)(), 3);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_int64)(), 4);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_float16)(), 5);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_float32)(), 6);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_float64)(), 7);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_bool)(), 11);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)(), 15);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_layout_strided)(), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)()), 2u);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(SLIMCUDA_SHIM(aoti_torch_dtype_float64)()), 8u);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(99), 0u);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(-1), 0u);
}

TEST(ConstantShims, GradModeIsPerThreadAndOnByDefault) {
  EXPECT_TRUE(SLIMCUDA_SHIM(aoti_torch_grad_mode_is_enabled)());
  SLIMCUDA_SHIM(aoti_torch_grad_mode_set_enabled)(false);
  EXPECT_FALSE(SLIMCUDA_SHIM(aoti_torch_grad_mode_is_enabled)());
  bool child = false;
  std::thread([&] { child = SLIMCUDA_SHIM(aoti_torch_grad_mode_is_enabled)(); }).join();
  EXPECT_TRUE(child);
  SLIMCUDA_SHIM(aoti_torch_grad_mode_set_enabled)(true);
  SLIMCUDA_SHIM(aoti_torch_warn)("fn", "file.cc", 7, "a warning from the attributes test");
  SLIMCUDA_SHIM(aoti_torch_warn)(nullptr, nullptr, 0, nullptr);  // tolerated
}

}  // namespace
}  // namespace slimcuda::testing
