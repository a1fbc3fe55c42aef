// SPDX-License-Identifier: Apache-2.0
// Two GPUs through the C ABI, from testdata/multi_gpu.json (go/slimcuda's TestMultiGPU*
// run the same cases): device 1 everywhere, the caller stream's own device, copies
// between GPUs, a model on device 1; and the current device restored after every call.
#include <cuda_runtime_api.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("multi_gpu.json");

int current_device() {
  int d = -1;
  EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
  return d;
}

TEST(MultiGpu, Copy) {
  for (const Case& c : cases("multi_gpu.json", "copy")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const int before = current_device();
    const size_t n = c.data.at("nbytes").get<size_t>();
    void* buf = nullptr;
    void* stream = nullptr;
    ASSERT_EQ(slimcuda_device_alloc(n, c.data.at("buffer_device").get<int32_t>(), 0, &buf), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, c.data.at("stream_device").get<int32_t>(), &stream),
              SLIMCUDA_OK);
    std::vector<uint8_t> in(n), out(n, 0);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(i * 7 + 1);
    const int32_t index = c.data.at("device_index").get<int32_t>();
    const int32_t rc = slimcuda_copy_host_to_device_on(buf, in.data(), n, index, stream);
    expect_code(c, rc);
    if (rc == SLIMCUDA_OK) {
      ASSERT_EQ(slimcuda_copy_device_to_host_on(out.data(), buf, n, index, stream), SLIMCUDA_OK);
      EXPECT_TRUE(in == out);
    }
    EXPECT_EQ(current_device(), before) << "a call left another device current";
    EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
    EXPECT_EQ(slimcuda_device_free(buf, c.data.at("buffer_device").get<int32_t>()), SLIMCUDA_OK);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

int32_t dtype_of(const std::string& name) { return name == "float64" ? SLIMCUDA_FLOAT64 : SLIMCUDA_FLOAT32; }

TEST(MultiGpu, TensorCopy) {
  for (const Case& c : cases("multi_gpu.json", "tensor_copy")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const int before = current_device();
    const std::vector<int64_t> sizes = c.data.at("sizes").get<std::vector<int64_t>>();
    const int64_t n = sizes[0] * sizes[1];
    slimcuda_tensor *src = nullptr, *dst = nullptr, *dst_base = nullptr;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes.data(), nullptr, dtype_of(c.data.at("src_dtype")), SLIMCUDA_DEVICE_CUDA,
                                    c.data.at("src_device").get<int32_t>(), 0, &src),
              SLIMCUDA_OK);
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<double>(i);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(src, values.data(), n * 8, SLIMCUDA_FLOAT64), SLIMCUDA_OK);
    const int32_t dst_device = c.data.at("dst_device").get<int32_t>();
    if (c.data.at("transpose_dst").get<bool>()) {
      const int64_t tsizes[2] = {sizes[1], sizes[0]}, strides[2] = {1, sizes[0]};
      ASSERT_EQ(slimcuda_tensor_empty(2, tsizes, nullptr, dtype_of(c.data.at("dst_dtype")), SLIMCUDA_DEVICE_CUDA,
                                      dst_device, 0, &dst_base),
                SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_tensor_view(dst_base, 2, sizes.data(), strides, 0, &dst), SLIMCUDA_OK);
    } else {
      ASSERT_EQ(slimcuda_tensor_empty(2, sizes.data(), nullptr, dtype_of(c.data.at("dst_dtype")), SLIMCUDA_DEVICE_CUDA,
                                      dst_device, 0, &dst),
                SLIMCUDA_OK);
    }
    const int32_t rc = slimcuda_tensor_copy(dst, src);
    expect_code(c, rc);
    if (rc == SLIMCUDA_OK) {
      std::vector<double> got(n, -1);
      ASSERT_EQ(slimcuda_tensor_copy_to_host(dst, got.data(), n * 8, SLIMCUDA_FLOAT64), SLIMCUDA_OK);
      EXPECT_TRUE(got == values) << "first " << got[0] << ", last " << got[n - 1];
      slimcuda_tensor_info info{};
      ASSERT_EQ(slimcuda_tensor_get_info(dst, &info), SLIMCUDA_OK);
      EXPECT_EQ(info.device_index, dst_device);
    }
    EXPECT_EQ(current_device(), before);
    slimcuda_tensor_delete(src);
    slimcuda_tensor_delete(dst);
    slimcuda_tensor_delete(dst_base);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(MultiGpu, Model) {
  std::vector<float> input, want;
  for (const Case& d : cases("demo_model.json", "run")) {
    if (d.name == "run_cpu_batch_4") {
      input = d.data.at("input").get<std::vector<float>>();
      want = d.data.at("expect_output").get<std::vector<float>>();
    }
  }
  ASSERT_EQ(input.size(), 64u);
  for (const Case& c : cases("multi_gpu.json", "model")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const int before = current_device();
    slimcuda_model* model = nullptr;
    ASSERT_EQ(slimcuda_model_load_file(demo_package_path().c_str(), SLIMCUDA_DEVICE_CUDA,
                                       c.data.at("model_device").get<int32_t>(), &model),
              SLIMCUDA_OK)
        << slimcuda_last_error_message();
    int32_t type = -1, index = -1;
    ASSERT_EQ(slimcuda_model_device(model, &type, &index), SLIMCUDA_OK);
    EXPECT_EQ(index, c.data.at("model_device").get<int32_t>());
    const int64_t sizes[2] = {4, 16};
    slimcuda_tensor *in = nullptr, *out = nullptr;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA,
                                    c.data.at("input_device").get<int32_t>(), 0, &in),
              SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(in, input.data(), input.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    const int32_t rc = slimcuda_model_run(model, &in, 1, &out, 1);
    expect_code(c, rc);
    if (rc == SLIMCUDA_OK) {
      std::vector<float> got(want.size());
      ASSERT_EQ(slimcuda_tensor_copy_to_host(out, got.data(), got.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
      EXPECT_EQ(got, want);
      slimcuda_tensor_info info{};
      ASSERT_EQ(slimcuda_tensor_get_info(out, &info), SLIMCUDA_OK);
      EXPECT_EQ(info.device_index, index) << "outputs live on the model's device";
    }
    EXPECT_EQ(current_device(), before);
    slimcuda_tensor_delete(in);
    slimcuda_tensor_delete(out);
    slimcuda_model_free(model);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
