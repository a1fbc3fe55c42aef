// SPDX-License-Identifier: Apache-2.0
// The cuda_library's objects linked statically into an executable (everything else links
// them into libslimcuda.so): the launchers run and report errors through the static copy.
// This binary does not load libslimcuda.so, so its one copy of the core is the only one.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/demo_kernels/kernels.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::kernels {
namespace {

TEST(KernelsStaticLink, FillRunsOrReportsNoGpu) {
  if (!testing::has_gpu()) {
    if (testing::gpu_required()) FAIL() << "SLIMCUDA_REQUIRE_GPU=1 but no CUDA device is usable";
    // No driver: the launch fails and the launcher says so instead of crashing.
    EXPECT_EQ(fill_f32(nullptr, 16, 1.0f, nullptr), Error::Internal);
    EXPECT_NE(std::string(last_error_message()).find("launch failed"), std::string::npos) << last_error_message();
    return;
  }
  constexpr size_t n = 1000;
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(fill_f32(d, n, 3.25f, nullptr), Error::Ok) << last_error_message();
  std::vector<float> h(n);
  ASSERT_EQ(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h, std::vector<float>(n, 3.25f));
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

}  // namespace
}  // namespace slimcuda::kernels
