// SPDX-License-Identifier: Apache-2.0
// C ABI entry points not covered by a suite of their own: versions, device properties,
// error names, streams, and the pinned pool's calls.
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "csrc/testing/spin.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

TEST(CApi, CudaVersions) {
  int32_t runtime = -1, driver = -1;
  ASSERT_EQ(slimcuda_cuda_versions(&runtime, &driver), SLIMCUDA_OK) << slimcuda_last_error_message();
  EXPECT_GE(runtime, 13000);
  EXPECT_EQ(driver > 0, has_gpu()) << "a driver exactly when a GPU is usable, on our machines";
  EXPECT_EQ(slimcuda_cuda_versions(nullptr, &driver), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("slimcuda_cuda_versions: null runtime"), std::string::npos);
}

TEST(CApi, DevicePropertiesBadIndex) {
  EXPECT_EQ(slimcuda_device_properties(-2, nullptr, 0, nullptr, nullptr, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_device_properties(1000, nullptr, 0, nullptr, nullptr, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
}

TEST(CApi, DevicePropertiesWithoutGpu) {
  SLIMCUDA_SKIP_WITH_A_GPU();
  EXPECT_EQ(slimcuda_device_properties(0, nullptr, 0, nullptr, nullptr, nullptr), SLIMCUDA_ERROR_NOT_SUPPORTED);
}

TEST(CApi, DevicePropertiesOnGpu) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  char name[8];
  uint64_t mem = 0;
  int32_t major = 0, minor = -1;
  ASSERT_EQ(slimcuda_device_properties(0, name, sizeof name, &mem, &major, &minor), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  EXPECT_EQ(std::strlen(name), sizeof name - 1) << "long names are truncated and terminated";
  EXPECT_GT(mem, uint64_t{1} << 30);
  EXPECT_GE(major, 9);  // sm_90 code is what we build
  EXPECT_GE(minor, 0);
  EXPECT_EQ(slimcuda_device_properties(-1, nullptr, 0, nullptr, nullptr, nullptr), SLIMCUDA_OK);
}

TEST(CApi, VersionMatchesHeaderMacros) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", SLIMCUDA_VERSION_MAJOR, SLIMCUDA_VERSION_MINOR, SLIMCUDA_VERSION_PATCH);
  EXPECT_STREQ(slimcuda_version(), want);
  EXPECT_STREQ(slimcuda_version(), SLIMCUDA_VERSION_STRING);
}

TEST(CApi, ErrorNames) {
  EXPECT_STREQ(slimcuda_error_name(SLIMCUDA_ERROR_INVALID_ARGUMENT), "InvalidArgument");
  EXPECT_STREQ(slimcuda_error_name(SLIMCUDA_OK), "Ok");
  EXPECT_STREQ(slimcuda_error_name(0x7777), "Unknown");
}

TEST(CApi, StreamCallsRejectBadInput) {
  void* s = nullptr;
  int32_t device = 0;
  EXPECT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_DEFAULT, 0, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_stream_create(7, 0, &s), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_DEFAULT, -3, &s), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_stream_destroy(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_stream_release(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  // A stream no block was ever freed on: nothing to forget, no CUDA call (also without a GPU).
  int not_a_stream = 0;
  EXPECT_EQ(slimcuda_stream_release(&not_a_stream), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_device(nullptr, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  if (!has_gpu()) {
    EXPECT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_DEFAULT, 0, &s), SLIMCUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(slimcuda_stream_synchronize(nullptr), SLIMCUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(slimcuda_stream_device(nullptr, &device), SLIMCUDA_ERROR_NOT_SUPPORTED);
  }
}

TEST(CApi, PinnedPoolCallsRejectBadInput) {
  slimcuda_memory_stats s{};
  EXPECT_EQ(slimcuda_pinned_memory_stats_get(nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  if (!has_gpu()) {
    EXPECT_EQ(slimcuda_pinned_memory_stats_get(&s), SLIMCUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(slimcuda_pinned_empty_cache(), SLIMCUDA_ERROR_NOT_SUPPORTED);
  }
}

TEST(CApi, StreamsOnGpu) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  void* s = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, -1, &s), SLIMCUDA_OK);
  int32_t device = -1;
  EXPECT_EQ(slimcuda_stream_device(s, &device), SLIMCUDA_OK);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(slimcuda_testing_spin(100, s), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_synchronize(s), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_destroy(s), SLIMCUDA_OK);
  // A freed pointer or a host pointer is not this device's memory.
  int host = 0;
  EXPECT_EQ(slimcuda_device_free(&host, 0), SLIMCUDA_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace slimcuda::testing
