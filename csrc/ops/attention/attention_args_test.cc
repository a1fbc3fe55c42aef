// SPDX-License-Identifier: Apache-2.0
// The attention output layouts (check_attention) for every attention case of
// testdata/ops.json, the CUDA ops' included, on the CPU: the layouts are decided before any
// device work, so the strides PyTorch's meta functions give are checked here without a GPU.
// The cases' values run in ops_fixtures_test (and from Go).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "csrc/ops/attention/attention_args.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

struct Deleter {
  void operator()(AtenTensorOpaque* t) const { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }
};
using Tensor = std::unique_ptr<AtenTensorOpaque, Deleter>;

std::vector<int64_t> ints(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? j[key].get<std::vector<int64_t>>() : std::vector<int64_t>{};
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(sizes[d], 1);
  return s;
}

int32_t dtype_code(const std::string& name) {
  if (name == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (name == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  if (name == "bool") return SLIMCUDA_SHIM(aoti_torch_dtype_bool)();
  return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
}

ops::AttentionOp op_of(const std::string& fn) {
  if (fn == "efficient") return ops::AttentionOp::Efficient;
  if (fn == "flash") return ops::AttentionOp::Flash;
  if (fn == "cudnn") return ops::AttentionOp::Cudnn;
  return ops::AttentionOp::FlashForCpu;
}

TEST(AttentionArgs, LayoutsAreTheMetaFunctions) {
  int checked = 0;
  for (const Case& c : cases("ops.json", "attention")) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in;
    for (const auto& spec : c.data["inputs"]) {
      const std::vector<int64_t> sizes = ints(spec, "sizes");
      const std::vector<int64_t> strides = spec.contains("strides") ? ints(spec, "strides") : contiguous(sizes);
      AtenTensorHandle h = nullptr;
      ASSERT_EQ(
          SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                                  dtype_code(spec.value("dtype", c.data["dtype"].get<std::string>())),
                                                  SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
          0);
      in.emplace_back(h);
    }
    AtenTensorHandle bias = in.size() > 3 ? in[3].get() : nullptr;
    ops::AttentionOptions o;
    o.bias = bias != nullptr ? &bias : nullptr;
    o.compute_log_sumexp = c.data.value("compute_log_sumexp", true);
    o.is_causal = c.data.value("is_causal", false);
    AtenTensorHandle ret0 = nullptr;
    ops::AttentionProblem p;
    ops::AttentionLayout layout;
    ASSERT_EQ(ops::check_attention(DeviceType::CPU, op_of(c.data["fn"]), in[0].get(), in[1].get(), in[2].get(), o,
                                   &ret0, &p, &layout),
              Error::Ok)
        << last_error_message();
    EXPECT_EQ(layout.out_sizes, ints(c.data, "expect_sizes"));
    EXPECT_EQ(layout.out_strides, ints(c.data, "expect_strides"));
    EXPECT_EQ(layout.lse_sizes, ints(c.data, "lse_sizes"));
    EXPECT_EQ(layout.lse_strides, ints(c.data, "lse_strides"));
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// The CUDA ops' bad-input cases through the same checks on CPU tensors (on a GPU they run
// in ops_fixtures_test): every rejection but the kernel's own (head dims above 256, which
// the checks pass on to it) comes from check_attention, so codes and messages show here.
TEST(AttentionArgs, CudaBadInputIsRejectedByTheSharedChecks) {
  int checked = 0;
  for (const Case& c : cases("ops.json", "attention_error")) {
    if (c.data["device"] != "cuda" || c.data.contains("tensors_on")) continue;
    SCOPED_TRACE(c.name);
    const auto dtypes = c.data["dtypes"].get<std::vector<std::string>>();
    const auto sizes = c.data["sizes"].get<std::vector<std::vector<int64_t>>>();
    std::vector<Tensor> in;
    for (size_t i = 0; i < sizes.size(); ++i) {
      AtenTensorHandle h = nullptr;
      const int32_t dt = dtypes[i] == "float64" ? SLIMCUDA_SHIM(aoti_torch_dtype_float64)() : dtype_code(dtypes[i]);
      ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes[i].size()), sizes[i].data(), nullptr,
                                                        dt, SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
                0);
      in.emplace_back(h);
    }
    const std::string null = c.data.value("null", "");
    AtenTensorHandle bias = in.size() > 3 ? in[3].get() : nullptr;
    ops::AttentionOptions o;
    o.bias = bias != nullptr ? &bias : nullptr;
    o.dropout_p = c.data.value("dropout_p", 0.0);
    o.return_debug_mask = c.data.value("return_debug_mask", 0) != 0;
    AtenTensorHandle ret0 = nullptr;
    ops::AttentionProblem p;
    ops::AttentionLayout layout;
    const Error got =
        ops::check_attention(DeviceType::CPU, op_of(c.data["fn"]), null == "query" ? nullptr : in[0].get(),
                             null == "key" ? nullptr : in[1].get(), null == "value" ? nullptr : in[2].get(), o,
                             null == "ret0" ? nullptr : &ret0, &p, &layout);
    if (c.data["message"] == "at most 256") {
      EXPECT_EQ(got, Error::Ok) << "the kernel, not the checks, refuses this";
    } else {
      expect_code(c, static_cast<int32_t>(got), last_error_message());
    }
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

}  // namespace
}  // namespace slimcuda::testing
