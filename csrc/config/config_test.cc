// SPDX-License-Identifier: Apache-2.0
// The configuration: the one parser, the table, a Store built from a chosen environment
// (bad values, overrides, read-once settings), the process's own store and the log.
#include "csrc/config/config.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "csrc/config/detail/store.h"
#include "csrc/config/log.h"
#include "csrc/config/parse.h"
#include "csrc/config/settings.h"

namespace slimcuda::testing {
namespace {

using config::Key;
using config::detail::Store;

struct Message {
  int32_t level;
  std::string text;
};

// What the process's store logged when it read this test's environment (below).
std::mutex g_startup_mu;
std::vector<Message> g_startup_messages;

void capture_startup(int32_t level, const char* message, void*) {
  std::lock_guard<std::mutex> lock(g_startup_mu);
  g_startup_messages.push_back({level, message});
}

// Before main: bad values in the real environment, then the process's store built (its
// first read) while a callback listens, so that no test's own callback gets its reports.
const bool kStartup = [] {
  setenv("SLIMCUDA_STAGING_BUFFERS", "lots", 1);
  setenv("SLIMCUDA_GEMM_PLAIN", "maybe", 1);
  setenv("SLIMCUDA_STAGING_CHUNK", "65536", 1);
  config::set_log_callback(&capture_startup, nullptr);
  (void)config::get_bool(Key::GemmPlain);
  config::set_log_callback(nullptr, nullptr);
  return true;
}();

// A Store's environment.
std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(ConfigParse, TruthinessIsOneRuleInAnyCase) {
  for (const char* t : {"1", "true", "yes", "on", "TRUE", "Yes", "oN"}) EXPECT_EQ(config::parse_bool(t), true) << t;
  for (const char* f : {"0", "false", "no", "off", "FALSE", "No", "OFF"}) EXPECT_EQ(config::parse_bool(f), false) << f;
  for (const char* bad : {"", "2", "y", "n", " 1", "1 ", "truee", "of", "-1", "enabled"}) {
    EXPECT_EQ(config::parse_bool(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(ConfigParse, IntegersAreDecimalDigitsOnly) {
  const auto& s = config::info(Key::StagingThreshold);
  EXPECT_EQ(config::parse(s, "0"), 0u);
  EXPECT_EQ(config::parse(s, "4194304"), 4194304u);
  EXPECT_EQ(config::parse(s, "18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"18446744073709551616", "-1", "+1", "1k", " 1", "0x10", "1.5", "one"}) {
    EXPECT_EQ(config::parse(s, bad), std::nullopt) << bad;
  }
  EXPECT_EQ(config::parse(s, ""), 1048576u) << "empty is the default";
}

TEST(ConfigParse, EnumWordsInAnyCase) {
  const auto& conv = config::info(Key::Conv);
  EXPECT_EQ(config::parse(conv, "legacy"), 0u);
  EXPECT_EQ(config::parse(conv, "Frontend"), 1u);
  EXPECT_EQ(config::parse(conv, "AUTO"), 2u);
  EXPECT_EQ(config::parse(conv, "front"), std::nullopt);
  EXPECT_EQ(config::parse(conv, ""), 2u);
  EXPECT_EQ(config::expected(conv), "one of legacy, frontend, auto");
  EXPECT_EQ(config::to_text(conv, 1), "frontend");
}

TEST(ConfigTable, NamesAreUniqueAndEveryDefaultParses) {
  std::set<std::string> names;
  for (const config::SettingInfo& s : config::settings()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_EQ(config::find(s.name), &s);
    EXPECT_NE(std::string(s.meaning), "");
    EXPECT_EQ(s.type == config::Type::Enum, s.words != nullptr) << s.name;
    if (s.computed_default == nullptr && s.type != config::Type::Path) {
      EXPECT_TRUE(config::parse(s, s.default_text).has_value()) << s.name << " default " << s.default_text;
    }
  }
  EXPECT_EQ(config::find("slimcuda_conv"), nullptr) << "names are exact";
  EXPECT_EQ(config::find("SLIMCUDA_NO_SUCH_SETTING"), nullptr);
  EXPECT_GE(config::default_value(config::info(Key::StagingThreads)), 1u);
  EXPECT_LE(config::default_value(config::info(Key::StagingThreads)), 8u);
}

TEST(ConfigStore, EnvironmentValuesAndDefaults) {
  g_env = {{"SLIMCUDA_CACHING_ALLOCATOR", "off"},
           {"SLIMCUDA_STAGING_THRESHOLD", "0"},
           {"SLIMCUDA_CONV", "Legacy"},
           {"SLIMCUDA_ATTENTION", ""},  // empty: unset
           {"TMPDIR", "/scratch"}};
  Store s(&fake_env);
  EXPECT_TRUE(s.take_reports().empty());
  EXPECT_EQ(s.value(Key::CachingAllocator), 0u);
  EXPECT_EQ(s.value(Key::StagingThreshold), 0u);
  EXPECT_EQ(s.value(Key::StagingChunk), 4194304u);
  EXPECT_EQ(s.value(Key::Conv), 0u);
  EXPECT_EQ(s.text(Key::Attention), "auto");
  EXPECT_EQ(s.path(Key::Tmpdir), "/scratch");
  EXPECT_EQ(s.path(Key::CublasLtLibrary), "");
}

TEST(ConfigStore, BadValuesAreReportedOnceAndTheDefaultUsed) {
  g_env = {{"SLIMCUDA_STAGING_FLAGS", "2"}, {"SLIMCUDA_ATTENTION", "fast"}, {"SLIMCUDA_STAGING_BUFFERS", "-3"}};
  Store s(&fake_env);
  const std::vector<std::string> reports = s.take_reports();
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0], "SLIMCUDA_STAGING_BUFFERS=-3 is not a non-negative decimal integer; using the default, 6");
  EXPECT_EQ(reports[1], "SLIMCUDA_STAGING_FLAGS=2 is not 1/true/yes/on or 0/false/no/off; using the default, 0");
  EXPECT_EQ(reports[2], "SLIMCUDA_ATTENTION=fast is not one of auto, kernel, cudnn; using the default, auto");
  EXPECT_TRUE(s.take_reports().empty()) << "reported once";
  EXPECT_EQ(s.value(Key::StagingFlags), 0u);
  EXPECT_EQ(s.value(Key::Attention), 0u);
  EXPECT_EQ(s.value(Key::StagingBuffers), 6u);
}

TEST(ConfigStore, OverrideThenBackToTheEnvironment) {
  g_env = {{"SLIMCUDA_STAGING_BUFFERS", "3"}, {"TMPDIR", "/env-tmp"}};
  Store s(&fake_env);
  std::string why;
  ASSERT_EQ(s.set(Key::StagingBuffers, "9", &why), Error::Ok) << why;
  EXPECT_EQ(s.value(Key::StagingBuffers), 9u);
  ASSERT_EQ(s.set(Key::StagingBuffers, "", &why), Error::Ok) << why;
  EXPECT_EQ(s.value(Key::StagingBuffers), 6u) << "an empty override is the default";
  ASSERT_EQ(s.set(Key::StagingBuffers, nullptr, &why), Error::Ok) << why;
  EXPECT_EQ(s.value(Key::StagingBuffers), 3u) << "nullptr: the environment again";

  EXPECT_EQ(s.set(Key::StagingBuffers, "many", &why), Error::InvalidArgument);
  EXPECT_EQ(why, "SLIMCUDA_STAGING_BUFFERS=many is not a non-negative decimal integer");
  EXPECT_EQ(s.value(Key::StagingBuffers), 3u) << "a bad value changes nothing";

  ASSERT_EQ(s.set(Key::Tmpdir, "/override", &why), Error::Ok);
  EXPECT_EQ(s.path(Key::Tmpdir), "/override");
  ASSERT_EQ(s.set(Key::Tmpdir, "", &why), Error::Ok);
  EXPECT_EQ(s.path(Key::Tmpdir), "/tmp");
  ASSERT_EQ(s.set(Key::Tmpdir, nullptr, &why), Error::Ok);
  EXPECT_EQ(s.path(Key::Tmpdir), "/env-tmp");
}

TEST(ConfigStore, ReadOnceSettingsAreFixedByTheirFirstUse) {
  g_env = {};
  Store s(&fake_env);
  std::string why;
  ASSERT_EQ(s.set(Key::CachingAllocator, "no", &why), Error::Ok) << "not used yet: " << why;
  EXPECT_FALSE(s.used(Key::CachingAllocator));
  EXPECT_EQ(s.text(Key::CachingAllocator), "0");
  EXPECT_FALSE(s.used(Key::CachingAllocator)) << "text() is not a use";
  EXPECT_EQ(s.value(Key::CachingAllocator), 0u);
  EXPECT_TRUE(s.used(Key::CachingAllocator));
  EXPECT_EQ(s.set(Key::CachingAllocator, "1", &why), Error::InvalidState);
  EXPECT_EQ(why, "SLIMCUDA_CACHING_ALLOCATOR is read once, at its first use, and has been used: it stays 0");
  EXPECT_EQ(s.set(Key::CachingAllocator, nullptr, &why), Error::InvalidState) << "the default would change it";
  EXPECT_EQ(s.set(Key::CachingAllocator, "off", &why), Error::Ok) << "the value in force: no change";
  EXPECT_EQ(s.value(Key::CachingAllocator), 0u);

  ASSERT_EQ(s.path(Key::CudnnLibrary), "");
  EXPECT_EQ(s.set(Key::CudnnLibrary, "/opt/libcudnn.so.9", &why), Error::InvalidState);
  EXPECT_EQ(why, "SLIMCUDA_CUDNN_LIBRARY is read once, at its first use, and has been used: it stays unset");
  EXPECT_EQ(s.set(Key::CudnnLibrary, "", &why), Error::Ok);
  // Settings read at each use take overrides whenever.
  (void)s.value(Key::StagingChunk);
  EXPECT_EQ(s.set(Key::StagingChunk, "65536", &why), Error::Ok);
}

TEST(ConfigStore, ConcurrentReadersSeeWholeValues) {
  g_env = {};
  Store s(&fake_env);
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  std::atomic<int> odd{0};
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const uint64_t v = s.value(Key::StagingThreshold);
        if (v != 1048576u && v != 7u) odd.fetch_add(1);
        (void)s.path(Key::Tmpdir);
      }
    });
  }
  std::string why;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(s.set(Key::StagingThreshold, i % 2 ? "7" : nullptr, &why), Error::Ok);
    ASSERT_EQ(s.set(Key::Tmpdir, i % 2 ? "/a" : nullptr, &why), Error::Ok);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(odd.load(), 0);
}

// The process's store read the environment kStartup set, once, and logged each bad value once.
TEST(ConfigProcess, BadEnvironmentValuesWereLoggedOnce) {
  EXPECT_EQ(config::get_integer(Key::StagingBuffers), 6u);
  EXPECT_FALSE(config::get_bool(Key::GemmPlain));
  EXPECT_EQ(config::get_integer(Key::StagingChunk), 65536u) << "a good value is used";
  std::lock_guard<std::mutex> lock(g_startup_mu);
  ASSERT_EQ(g_startup_messages.size(), 2u);
  EXPECT_EQ(g_startup_messages[0].level, static_cast<int32_t>(config::LogLevel::Warning));
  EXPECT_EQ(g_startup_messages[0].text,
            "SLIMCUDA_STAGING_BUFFERS=lots is not a non-negative decimal integer; using the default, 6");
  EXPECT_EQ(g_startup_messages[1].text,
            "SLIMCUDA_GEMM_PLAIN=maybe is not 1/true/yes/on or 0/false/no/off; using the default, 0");
}

TEST(ConfigProcess, SetAndGetByName) {
  std::string why, value;
  ASSERT_EQ(config::set("SLIMCUDA_ATTENTION", "KERNEL", &why), Error::Ok) << why;
  ASSERT_EQ(config::get_text("SLIMCUDA_ATTENTION", &value, &why), Error::Ok);
  EXPECT_EQ(value, "kernel") << "the canonical word";
  EXPECT_EQ(config::get_enum(Key::Attention), 1u);
  ASSERT_EQ(config::set("SLIMCUDA_ATTENTION", nullptr, &why), Error::Ok);
  EXPECT_EQ(config::get_enum(Key::Attention), 0u);

  EXPECT_EQ(config::set("SLIMCUDA_NO_SUCH_SETTING", "1", &why), Error::InvalidArgument);
  EXPECT_NE(why.find("no setting is called \"SLIMCUDA_NO_SUCH_SETTING\""), std::string::npos) << why;
  EXPECT_NE(why.find("SLIMCUDA_CACHING_ALLOCATOR"), std::string::npos) << "lists the names: " << why;
  why.clear();
  EXPECT_EQ(config::get_text("", &value, &why), Error::InvalidArgument);
  EXPECT_NE(why, "");
  EXPECT_EQ(config::set("SLIMCUDA_ATTENTION", "fastest", &why), Error::InvalidArgument);
  EXPECT_EQ(why, "SLIMCUDA_ATTENTION=fastest is not one of auto, kernel, cudnn");
}

std::mutex g_log_mu;
std::vector<Message> g_log;
void capture(int32_t level, const char* message, void* user) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.push_back({level, message + std::string(user != nullptr ? static_cast<const char*>(user) : "")});
}

class ConfigLog : public ::testing::Test {
 protected:
  void SetUp() override {
    std::lock_guard<std::mutex> lock(g_log_mu);
    g_log.clear();
  }
  void TearDown() override {
    config::set_log_callback(nullptr, nullptr);
    std::string why;
    ASSERT_EQ(config::set("SLIMCUDA_LOG_LEVEL", nullptr, &why), Error::Ok);
  }
  static std::vector<Message> logged() {
    std::lock_guard<std::mutex> lock(g_log_mu);
    return g_log;
  }
};

TEST_F(ConfigLog, CallbackGetsLevelMessageAndUser) {
  static const char kUser[] = " [user]";
  config::set_log_callback(&capture, const_cast<char*>(kUser));
  config::log(config::LogLevel::Warning, "a %s of %d", "message", 7);
  config::log(config::LogLevel::Error, "worse");
  const auto got = logged();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].level, 30);
  EXPECT_EQ(got[0].text, "a message of 7 [user]");
  EXPECT_EQ(got[1].level, 40);
}

TEST_F(ConfigLog, LevelFiltersMessages) {
  config::set_log_callback(&capture, nullptr);
  config::log(config::LogLevel::Info, "dropped by default");
  std::string why;
  ASSERT_EQ(config::set("SLIMCUDA_LOG_LEVEL", "debug", &why), Error::Ok);
  config::log(config::LogLevel::Debug, "passed");
  ASSERT_EQ(config::set("SLIMCUDA_LOG_LEVEL", "error", &why), Error::Ok);
  EXPECT_FALSE(config::log_enabled(config::LogLevel::Warning));
  config::log(config::LogLevel::Warning, "dropped");
  config::log(config::LogLevel::Error, "kept");
  const auto got = logged();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, "passed");
  EXPECT_EQ(got[1].text, "kept");
}

TEST_F(ConfigLog, DefaultSinkIsStderr) {
  config::set_log_callback(&capture, nullptr);
  config::set_log_callback(nullptr, nullptr);
  ::testing::internal::CaptureStderr();
  config::log(config::LogLevel::Warning, "to stderr");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "slimcuda: to stderr\n");
  EXPECT_TRUE(logged().empty());
}

TEST_F(ConfigLog, LongMessagesAreCut) {
  config::set_log_callback(&capture, nullptr);
  const std::string long_text(5000, 'x');
  config::log(config::LogLevel::Warning, "%s", long_text.c_str());
  const auto got = logged();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text.size(), 2047u);
  EXPECT_EQ(got[0].text.substr(2044), "...");
}

// Callbacks change while other threads log (ThreadSanitizer sees the sink's lock).
TEST_F(ConfigLog, CallbackChangesWhileOthersLog) {
  static const char kA[] = "a", kB[] = "b";
  config::set_log_callback(&capture, const_cast<char*>(kA));
  std::atomic<bool> stop{false};
  std::vector<std::thread> loggers;
  for (int i = 0; i < 3; ++i) {
    loggers.emplace_back([&] {
      while (!stop.load()) config::log(config::LogLevel::Warning, "busy");
    });
  }
  for (int i = 0; i < 500; ++i) config::set_log_callback(&capture, const_cast<char*>(i % 2 ? kA : kB));
  stop = true;
  for (auto& t : loggers) t.join();
  config::set_log_callback(nullptr, nullptr);
  for (const Message& m : logged()) EXPECT_TRUE(m.text == "busya" || m.text == "busyb") << m.text;
}

}  // namespace
}  // namespace slimcuda::testing
