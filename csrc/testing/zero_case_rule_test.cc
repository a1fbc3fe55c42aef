// SPDX-License-Identifier: Apache-2.0
// The fixture reader's rule: a fixture-driven test that ran none of its cases is SKIPPED
// with the reasons (SLIMCUDA_SKIP_IF_NO_CASE_RAN), and one that PASSED with zero cases run
// fails the binary. The failing binary is this one, run again as a child with one test.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"

namespace slimcuda::testing {
namespace {

// A case this machine can never run: "no_gpu" where there is a GPU, else "gpu2" (fewer
// than two GPUs; never a GPU case, which SLIMCUDA_REQUIRE_GPU=1 turns into a failure).
Case unrunnable(const std::string& name) {
  return Case{"synthetic.json", name, "synthetic", has_gpu() ? "no_gpu" : "gpu2", nlohmann::json::object()};
}

// The child: one test that visits only unrunnable cases, and either passes ("pass": the
// binary must fail) or ends with the macro ("skip": the test is SKIPPED, the binary passes).
class ChildTest : public ::testing::Test {
 public:
  explicit ChildTest(std::string mode) : mode_(std::move(mode)) {}
  void TestBody() override {
    for (const char* name : {"a", "b"}) {
      EXPECT_FALSE(begin_case(unrunnable(name)));
    }
    if (mode_ == "skip") SLIMCUDA_SKIP_IF_NO_CASE_RAN();
  }

 private:
  std::string mode_;
};
[[maybe_unused]] const bool kChild = [] {
  const char* v = std::getenv("SLIMCUDA_ZERO_CASE_CHILD");
  if (v == nullptr) return false;
  const std::string mode = v;
  ::testing::RegisterTest("ZeroCaseChild", "Run", nullptr, nullptr, __FILE__, __LINE__,
                          [mode]() -> ::testing::Test* { return new ChildTest(mode); });
  return true;
}();

// Runs this binary as the child in `mode`; its output, and its exit status in *status.
std::string run_child(const char* mode, int* status) {
  std::array<char, 4096> exe{};
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) return "readlink failed";
  // Not the parent's result files: the child's report is its output and exit status.
  const std::string cmd = std::string("env -u XML_OUTPUT_FILE -u GTEST_OUTPUT -u TEST_PREMATURE_EXIT_FILE ") +
                          "SLIMCUDA_ZERO_CASE_CHILD=" + mode + " '" + std::string(exe.data(), n) +
                          "' --gtest_filter=ZeroCaseChild.* 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  std::array<char, 4096> buf{};
  for (size_t got; (got = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), got);
  const int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

TEST(ZeroCaseRule, PassingWithNoCaseRunFailsTheBinary) {
  int status = 0;
  const std::string out = run_child("pass", &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("ZeroCaseChild.Run ran none of its fixture cases"), std::string::npos) << out;
}

TEST(ZeroCaseRule, TheMacroSkipsWithTheReasons) {
  int status = 0;
  const std::string out = run_child("skip", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  SKIPPED ] ZeroCaseChild.Run"), std::string::npos) << out;
  EXPECT_NE(out.find(std::string(has_gpu() ? kWithoutGpuOnly : kNeedsTwoGpus) + ": 2 cases"), std::string::npos) << out;
}

// A test that ran one of its cases is not "none ran", whatever it skipped besides.
TEST(ZeroCaseRule, OneCaseRunIsEnough) {
  std::string why;
  EXPECT_FALSE(no_case_ran(&why)) << "no case visited yet";
  EXPECT_FALSE(begin_case(unrunnable("c")));
  EXPECT_TRUE(no_case_ran(&why));
  EXPECT_NE(why.find(": 1 case"), std::string::npos) << why;
  EXPECT_TRUE(begin_case(Case{"synthetic.json", "d", "synthetic", "none", nlohmann::json::object()}));
  EXPECT_FALSE(no_case_ran(&why));
}

}  // namespace
}  // namespace slimcuda::testing
