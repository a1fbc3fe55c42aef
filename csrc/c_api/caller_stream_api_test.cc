// SPDX-License-Identifier: Apache-2.0
// Caller-stream semantics from testdata/caller_stream.json, run through CallerStreamGuard
// and through the C push/pop ABI (go/slimcuda/stream_test.go runs the same cases); the
// guard's own properties are csrc/caller_stream/caller_stream_test.cc's.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("caller_stream.json");

// Stream tokens: stand-in handles that are stored and compared, never dereferenced.
cudaStream_t token(const std::string& name) {
  if (name == "default") return nullptr;
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x1000 * (name[0] - 'A' + 1)));
}

std::string describe(std::optional<cudaStream_t> s) {
  if (!s.has_value()) return "none";
  if (*s == nullptr) return "default";
  return std::string(1, static_cast<char>('A' + reinterpret_cast<uintptr_t>(*s) / 0x1000 - 1));
}

enum class Mode { Guard, Abi };

// Runs steps on this thread; guards live in `guards` (pop destroys the innermost).
void run_steps(const nlohmann::json& steps, Mode mode, const std::string& where) {
  std::vector<std::unique_ptr<CallerStreamGuard>> guards;
  for (const auto& step : steps) {
    SCOPED_TRACE(where + " step " + step.dump());
    if (step.contains("push")) {
      const cudaStream_t s = token(step["push"].get<std::string>());
      if (mode == Mode::Guard) {
        guards.push_back(std::make_unique<CallerStreamGuard>(s));
        EXPECT_EQ(guards.back()->stream(), s);
      } else {
        EXPECT_EQ(slimcuda_caller_stream_push(s), SLIMCUDA_OK);
      }
    } else if (step.contains("pop")) {
      const Error want = error_from_name(step["pop"].get<std::string>());
      if (mode == Mode::Guard) {
        ASSERT_EQ(want, Error::Ok) << "guard mode cannot express a failing pop";
        ASSERT_FALSE(guards.empty());
        guards.pop_back();
      } else {
        EXPECT_EQ(slimcuda_caller_stream_pop(), static_cast<int32_t>(want)) << slimcuda_last_error_message();
      }
    } else if (step.contains("expect")) {
      const std::string want = step["expect"].get<std::string>();
      EXPECT_EQ(describe(getCallerStream()), want);
      void* s = reinterpret_cast<void*>(0xdead);
      int32_t is_set = -1;
      ASSERT_EQ(slimcuda_caller_stream_get(&s, &is_set), SLIMCUDA_OK);
      EXPECT_EQ(is_set, want == "none" ? 0 : 1);
      EXPECT_EQ(s, want == "none" ? nullptr : static_cast<void*>(token(want)));
    } else if (step.contains("thread")) {
      std::thread child([&] { run_steps(step["thread"], mode, where + " (child thread)"); });
      child.join();
    } else {
      ADD_FAILURE() << "unknown step";
    }
  }
  EXPECT_TRUE(guards.empty()) << "case leaves guards alive";
}

TEST(CallerStream, Sequences) {
  for (const Case& c : cases("caller_stream.json", "sequence")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    if (!c.data.value("abi_only", false)) run_steps(c.data.at("steps"), Mode::Guard, "guard");
    run_steps(c.data.at("steps"), Mode::Abi, "abi");
    EXPECT_FALSE(getCallerStream().has_value()) << "case left a selection behind";
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(CallerStream, GetRejectsNullOutputs) {
  int32_t is_set = 0;
  void* s = nullptr;
  EXPECT_EQ(slimcuda_caller_stream_get(nullptr, &is_set), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_caller_stream_get(&s, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("slimcuda_caller_stream_get"), std::string::npos);
}

TEST(CallerStream, GuardAndAbiShareOneSelection) {
  CallerStreamGuard guard(token("A"));
  ASSERT_EQ(slimcuda_caller_stream_push(token("B")), SLIMCUDA_OK);
  EXPECT_EQ(describe(getCallerStream()), "B");
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  EXPECT_EQ(describe(getCallerStream()), "A");
}

TEST(CallerStream, PushDepthIsBounded) {
  int pushed = 0;
  int32_t rc = SLIMCUDA_OK;
  while (pushed < 1000 && (rc = slimcuda_caller_stream_push(token("A"))) == SLIMCUDA_OK) ++pushed;
  EXPECT_EQ(rc, SLIMCUDA_ERROR_OUT_OF_RESOURCES);
  EXPECT_GT(pushed, 8);
  for (int i = 0; i < pushed; ++i) ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  EXPECT_FALSE(getCallerStream().has_value());
}

}  // namespace
}  // namespace slimcuda::testing
