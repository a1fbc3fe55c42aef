// SPDX-License-Identifier: Apache-2.0
// The CUDA guard shims and get_current_cuda_stream, which reports slimcuda's caller stream.
#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/demo_kernels/kernels.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/spin.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

TEST(CudaGuardShims, CurrentStreamFollowsTheCallerStream) {
  void* s = reinterpret_cast<void*>(0x1);
  // No selection: the legacy default stream.
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(-1, &s), 0);
  EXPECT_EQ(s, nullptr);
  {
    // An explicit null selection reports null, not some other stream.
    CallerStreamGuard guard(nullptr);
    s = reinterpret_cast<void*>(0x1);
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(0, &s), 0);
    EXPECT_EQ(s, nullptr);
  }
  {
    // device_index -1: no device check, the selected stream itself.
    CallerStreamGuard guard(reinterpret_cast<cudaStream_t>(0x5000));
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(-1, &s), 0);
    EXPECT_EQ(s, reinterpret_cast<void*>(0x5000));
  }
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(0, nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(-2, &s), code_of(Error::InvalidArgument));
}

TEST(CudaGuardShims, NullArguments) {
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(0, nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_guard)(nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_guard_set_index)(nullptr, 0), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(nullptr), code_of(Error::InvalidArgument));
}

TEST(CudaGuardShims, WithoutGpu) {
  SLIMCUDA_SKIP_WITH_A_GPU();
  CUDAGuardHandle g = nullptr;
  CUDAStreamGuardHandle sg = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(0, &g), code_of(Error::NotSupported));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &sg), code_of(Error::NotSupported));
}

TEST(CudaGuardShims, DeviceGuardOnGpu) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CUDAGuardHandle g = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(0, &g), 0) << last_error_message();
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_guard_set_index)(g, 0), 0);
  const int32_t count = gpu_count();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_guard_set_index)(g, count), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_guard)(g), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_guard)(count, &g), code_of(Error::InvalidArgument));
}

// A stream guard selects its stream as the caller stream (what AOTInductor's Run does);
// copies made under it are ordered on that stream; deleting it restores the outer one.
TEST(CudaGuardShims, StreamGuardSelectsAndRestores) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  cudaStream_t outer = nullptr, inner = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&outer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&inner, cudaStreamNonBlocking), cudaSuccess);
  {
    CallerStreamGuard g(outer);
    CUDAStreamGuardHandle sg = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(inner, 0, &sg), 0) << last_error_message();
    void* cur = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_current_cuda_stream)(0, &cur), 0);
    EXPECT_EQ(cur, inner);
    EXPECT_EQ(getCallerStream(), std::optional<cudaStream_t>(inner));
    // A kernel on the guard's stream, then a D2H copy of a CUDA tensor: ordered on it.
    const int64_t n = 1 << 18;
    AtenTensorHandle t = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &n, nullptr, 6, 1, 0, &t), 0);
    void* p = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &p), 0);
    ASSERT_EQ(slimcuda_testing_spin(30000, inner), code_of(Error::Ok));
    ASSERT_EQ(kernels::fill_f32(static_cast<float*>(p), static_cast<size_t>(n), 6.5f, inner), Error::Ok);
    std::vector<float> host(n, 0.0f);
    AtenTensorHandle h = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(host.data(), 1, &n, nullptr, 0, 6, 0, 0, &h), 0);
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << last_error_message();
    size_t wrong = 0;
    for (float v : host) wrong += (v != 6.5f);
    EXPECT_EQ(wrong, 0u) << "copy_ did not run on the stream guard's stream";
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h), 0);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(sg), 0);
    EXPECT_EQ(getCallerStream(), std::optional<cudaStream_t>(outer));
  }
  EXPECT_FALSE(getCallerStream().has_value());
  // The stream's device must be the index: one past the last device is refused.
  const int32_t count = gpu_count();
  CUDAStreamGuardHandle sg = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(inner, count, &sg), code_of(Error::InvalidArgument));
  EXPECT_EQ(cudaStreamDestroy(inner), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(outer), cudaSuccess);
}

}  // namespace
}  // namespace slimcuda::testing
