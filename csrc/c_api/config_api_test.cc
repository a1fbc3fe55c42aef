// SPDX-License-Identifier: Apache-2.0
// The configuration and the log through the C ABI: slimcuda_config_set / _get (names,
// values, overrides, NULL pointers, truncation) and slimcuda_set_log_callback (a model's
// warning reaches the callback, the level filters, NULL restores stderr).
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "slimcuda/aoti_torch.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

std::string get(const char* name) {
  char buf[256];
  size_t len = 0;
  EXPECT_EQ(slimcuda_config_get(name, buf, sizeof(buf), &len), SLIMCUDA_OK) << slimcuda_last_error_message();
  EXPECT_EQ(len, std::strlen(buf));
  return buf;
}

std::string last_error() { return slimcuda_last_error_message(); }

TEST(ConfigApi, SetGetAndBackToTheEnvironment) {
  const std::string before = get("SLIMCUDA_STAGING_CHUNK");
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_STAGING_CHUNK", "65536"), SLIMCUDA_OK) << last_error();
  EXPECT_EQ(get("SLIMCUDA_STAGING_CHUNK"), "65536");
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_STAGING_CHUNK", ""), SLIMCUDA_OK);
  EXPECT_EQ(get("SLIMCUDA_STAGING_CHUNK"), "4194304") << "an empty value is the default";
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_STAGING_CHUNK", nullptr), SLIMCUDA_OK);
  EXPECT_EQ(get("SLIMCUDA_STAGING_CHUNK"), before);

  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_GEMM_PLAIN", "Yes"), SLIMCUDA_OK);
  EXPECT_EQ(get("SLIMCUDA_GEMM_PLAIN"), "1") << "canonical form";
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_GEMM_PLAIN", nullptr), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_config_set("TMPDIR", "/somewhere"), SLIMCUDA_OK);
  EXPECT_EQ(get("TMPDIR"), "/somewhere");
  ASSERT_EQ(slimcuda_config_set("TMPDIR", nullptr), SLIMCUDA_OK);
}

TEST(ConfigApi, UnknownNamesAndBadValuesAreInvalidArgument) {
  EXPECT_EQ(slimcuda_config_set("SLIMCUDA_NO_SUCH_SETTING", "1"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("slimcuda_config_set: no setting is called \"SLIMCUDA_NO_SUCH_SETTING\""),
            std::string::npos)
      << last_error();
  size_t len = 0;
  char buf[8];
  EXPECT_EQ(slimcuda_config_get("slimcuda_conv", buf, sizeof(buf), &len), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("slimcuda_config_get: no setting"), std::string::npos) << last_error();

  const std::string before = get("SLIMCUDA_STAGING_BUFFERS");
  EXPECT_EQ(slimcuda_config_set("SLIMCUDA_STAGING_BUFFERS", "six"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "slimcuda_config_set: SLIMCUDA_STAGING_BUFFERS=six is not a non-negative decimal integer");
  EXPECT_EQ(get("SLIMCUDA_STAGING_BUFFERS"), before) << "a bad value changes nothing";
  EXPECT_EQ(slimcuda_config_set("SLIMCUDA_CACHING_ALLOCATOR", "2"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_config_set("SLIMCUDA_CONV", "fastest"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("one of legacy, frontend, auto"), std::string::npos) << last_error();
}

TEST(ConfigApi, NullPointersAreInvalidArgument) {
  size_t len = 7;
  char buf[8];
  EXPECT_EQ(slimcuda_config_set(nullptr, "1"), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "slimcuda_config_set: null name");
  EXPECT_EQ(slimcuda_config_get(nullptr, buf, sizeof(buf), &len), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_config_get("TMPDIR", buf, sizeof(buf), nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "slimcuda_config_get: null ret_len");
  EXPECT_EQ(slimcuda_config_get("TMPDIR", nullptr, 4, &len), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(len, 7u) << "outputs untouched on failure";
}

TEST(ConfigApi, ShortBuffersTruncateAndTellTheLength) {
  ASSERT_EQ(slimcuda_config_set("TMPDIR", "/a/long/folder"), SLIMCUDA_OK);
  size_t len = 0;
  ASSERT_EQ(slimcuda_config_get("TMPDIR", nullptr, 0, &len), SLIMCUDA_OK) << "a size query";
  EXPECT_EQ(len, 14u);
  char buf[6];
  std::memset(buf, 'x', sizeof(buf));
  ASSERT_EQ(slimcuda_config_get("TMPDIR", buf, sizeof(buf), &len), SLIMCUDA_OK);
  EXPECT_STREQ(buf, "/a/lo");
  EXPECT_EQ(len, 14u);
  ASSERT_EQ(slimcuda_config_set("TMPDIR", nullptr), SLIMCUDA_OK);
}

std::mutex g_mu;
std::vector<std::pair<int32_t, std::string>> g_messages;

void capture(int32_t level, const char* message, void* user) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_messages.emplace_back(level, std::string(static_cast<const char*>(user)) + message);
}

class LogApi : public ::testing::Test {
 protected:
  void SetUp() override { g_messages.clear(); }
  void TearDown() override {
    EXPECT_EQ(slimcuda_set_log_callback(nullptr, nullptr), SLIMCUDA_OK);
    EXPECT_EQ(slimcuda_config_set("SLIMCUDA_LOG_LEVEL", nullptr), SLIMCUDA_OK);
  }
};

TEST_F(LogApi, ModelWarningsReachTheCallback) {
  static char kUser[] = "user:";
  ASSERT_EQ(slimcuda_set_log_callback(&capture, kUser), SLIMCUDA_OK);
  SLIMCUDA_SHIM(aoti_torch_warn)("forward", "model.cpp", 12, "odd input");
  SLIMCUDA_SHIM(aoti_torch_warn)(nullptr, nullptr, 0, nullptr);
  std::lock_guard<std::mutex> lock(g_mu);
  ASSERT_EQ(g_messages.size(), 2u);
  EXPECT_EQ(g_messages[0].first, SLIMCUDA_LOG_WARNING);
  EXPECT_EQ(g_messages[0].second, "user:warning from model: forward (model.cpp:12): odd input");
  EXPECT_EQ(g_messages[1].second, "user:warning from model: ? (?:0): ");
}

TEST_F(LogApi, LevelDropsWarningsAndNullRestoresStderr) {
  static char kUser[] = "";
  ASSERT_EQ(slimcuda_set_log_callback(&capture, kUser), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_LOG_LEVEL", "ERROR"), SLIMCUDA_OK);
  SLIMCUDA_SHIM(aoti_torch_warn)("f", "f.cpp", 1, "dropped");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    EXPECT_TRUE(g_messages.empty());
  }
  ASSERT_EQ(slimcuda_config_set("SLIMCUDA_LOG_LEVEL", nullptr), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_set_log_callback(nullptr, nullptr), SLIMCUDA_OK);
  ::testing::internal::CaptureStderr();
  SLIMCUDA_SHIM(aoti_torch_warn)("f", "f.cpp", 2, "to stderr");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "slimcuda: warning from model: f (f.cpp:2): to stderr\n");
  std::lock_guard<std::mutex> lock(g_mu);
  EXPECT_TRUE(g_messages.empty());
}

}  // namespace
}  // namespace slimcuda::testing
