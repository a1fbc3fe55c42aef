// SPDX-License-Identifier: Apache-2.0
// A model whose own kernel faults: the decode step of
// tools/aoti/decoder.py given a position past its KV cache. The default export
// ("so") checks its indirect index on the device (a device-side assert); the "oob" export
// is compiled without that check (assert_indirect_indexing=False), so its cache write lands
// far out of bounds. Either fault leaves the CUDA context lost for the process: slimcuda
// must not hang or crash, the call that sees the fault returns Internal naming the CUDA
// error and saying the context is lost, and every later call on that device fails the same
// way at once. A lost context cannot be undone in-process, so each case runs in a child
// process: this binary again, with SLIMCUDA_STICKY_CHILD naming the variant, which
// registers the child's one test (StickyChild.Run) and runs only that. SLIMCUDA_DECODER_DIR names decoder.py's output
// (made with --oob).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

extern char** environ;

namespace slimcuda::testing {
namespace {

// ---- the child: one fault, then every call after it --------------------------------------

int failures = 0;
void expect(bool ok, const char* what) {
  std::printf("child: %s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}
bool says(const char* part) { return std::strstr(slimcuda_last_error_message(), part) != nullptr; }

int child(const char* variant) {
  const char* dir = std::getenv("SLIMCUDA_DECODER_DIR");
  if (dir == nullptr) return 2;
  std::ifstream in(std::string(dir) + "/reference.json");
  const nlohmann::json ref = nlohmann::json::parse(in, nullptr, false);
  if (!ref.is_object()) return 2;
  const int64_t max_pos = ref.at("max_pos");
  // Past the cache: just past it (the assert's case), or a long way past (a wild write).
  const int64_t bad = std::strcmp(variant, "oob") == 0 ? int64_t{1} << 26 : max_pos + 5;
  slimcuda_model* m = nullptr;
  const std::string path = std::string(dir) + "/" + variant + "/model.pt2";
  if (slimcuda_model_load_file(path.c_str(), -1, -1, &m) != SLIMCUDA_OK) {
    std::printf("child: load: %s\n", slimcuda_last_error_message());
    return 2;
  }
  void* stream = nullptr;
  slimcuda_tensor *ids = nullptr, *pos = nullptr;
  const int64_t one[2] = {1, 1};
  if (slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream) != SLIMCUDA_OK ||
      slimcuda_tensor_empty(2, one, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &ids) != SLIMCUDA_OK ||
      slimcuda_tensor_empty(1, one, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &pos) != SLIMCUDA_OK) {
    return 2;
  }
  std::vector<float> logits(ref.at("vocab").get<size_t>());
  auto step = [&](int64_t p) {
    const int64_t token = 7;
    int32_t rc = slimcuda_tensor_copy_from_host_on(ids, &token, 8, SLIMCUDA_INT64, stream);
    if (rc == SLIMCUDA_OK) rc = slimcuda_tensor_copy_from_host_on(pos, &p, 8, SLIMCUDA_INT64, stream);
    slimcuda_tensor* args[2] = {ids, pos};
    slimcuda_tensor* out = nullptr;
    if (rc == SLIMCUDA_OK) rc = slimcuda_model_run_on(m, args, 2, &out, 1, stream);
    if (rc == SLIMCUDA_OK) {
      rc = slimcuda_tensor_copy_to_host_on(out, logits.data(), logits.size() * 4, SLIMCUDA_FLOAT32, stream);
    }
    slimcuda_tensor_delete(out);
    return rc;
  };
  expect(step(0) == SLIMCUDA_OK, "a step inside the cache runs");
  // The fault: the run is enqueued on the stream and may return first; the copy after it
  // (or the run itself) meets the error.
  const int32_t rc = step(bad);
  std::printf("child: the step past the cache: %s: %s\n", slimcuda_error_name(rc), slimcuda_last_error_message());
  expect(rc == SLIMCUDA_ERROR_INTERNAL, "the step past the cache fails with INTERNAL");
  expect(says("context is lost") || says("is lost"), "... saying the context is lost");
  expect(says("cudaError"), "... naming the CUDA error");
  // Every later call on the device: at once, the same way.
  const int32_t again = step(0);
  std::printf("child: a later step: %s: %s\n", slimcuda_error_name(again), slimcuda_last_error_message());
  expect(again == SLIMCUDA_ERROR_INTERNAL && says("CUDA device 0 is lost"), "a later step fails: device 0 is lost");
  slimcuda_tensor* t = nullptr;
  expect(slimcuda_tensor_empty(2, one, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA, 0, 0, &t) ==
                 SLIMCUDA_ERROR_INTERNAL &&
             says("is lost"),
         "a new CUDA tensor fails the same way");
  slimcuda_model* m2 = nullptr;
  expect(slimcuda_model_load_file(path.c_str(), -1, -1, &m2) == SLIMCUDA_ERROR_INTERNAL && says("is lost"),
         "a new load fails the same way");
  // CPU work still works; freeing everything neither hangs nor crashes.
  slimcuda_tensor* host = nullptr;
  expect(slimcuda_tensor_empty(2, one, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &host) == SLIMCUDA_OK,
         "a CPU tensor still works");
  slimcuda_tensor_delete(host);
  slimcuda_tensor_delete(ids);
  slimcuda_tensor_delete(pos);
  slimcuda_model_free(m);
  slimcuda_stream_destroy(stream);
  std::printf("child: done, %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}

// In a child, its one test exists; elsewhere it is not registered at all.
class ChildTest : public ::testing::Test {
 public:
  explicit ChildTest(std::string variant) : variant_(std::move(variant)) {}
  void TestBody() override { EXPECT_EQ(child(variant_.c_str()), 0); }

 private:
  std::string variant_;
};
const bool kChild = [] {
  const char* v = std::getenv("SLIMCUDA_STICKY_CHILD");
  if (v == nullptr) return false;
  const std::string variant = v;
  ::testing::RegisterTest("StickyChild", "Run", nullptr, nullptr, __FILE__, __LINE__,
                          [variant]() -> ::testing::Test* { return new ChildTest(variant); });
  return true;
}();

// ---- the parent --------------------------------------------------------------------------

// Runs this binary as the child for `variant`, its output into `log`; the exit status, or
// -1 if it did not end within `limit` (then it is killed: a hang is a failure).
int run_child(const char* variant, const std::string& log, std::chrono::seconds limit) {
  std::vector<std::string> env_strings = {std::string("SLIMCUDA_STICKY_CHILD=") + variant};
  // Not the parent's result files: the child's report is its output and exit status.
  for (char** e = environ; *e != nullptr; ++e) {
    bool keep = true;
    for (const char* drop : {"SLIMCUDA_STICKY_CHILD=", "XML_OUTPUT_FILE=", "GTEST_OUTPUT=", "TEST_PREMATURE_EXIT_FILE=",
                             "TEST_SHARD_STATUS_FILE="}) {
      keep = keep && std::strncmp(*e, drop, std::strlen(drop)) != 0;
    }
    if (keep) env_strings.emplace_back(*e);
  }
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  char self[] = "/proc/self/exe";
  char filter[] = "--gtest_filter=StickyChild.Run";
  char* argv[] = {self, filter, nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &files, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0) return -2;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
  const std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

class StickyError : public ::testing::TestWithParam<const char*> {};

TEST_P(StickyError, APositionPastTheCacheLosesTheContextCleanly) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const char* dir = std::getenv("SLIMCUDA_DECODER_DIR");
  if (dir == nullptr || *dir == '\0') {
    if (gpu_required()) FAIL() << "SLIMCUDA_DECODER_DIR is not set (python3 tools/aoti/decoder.py DIR --oob)";
    GTEST_SKIP() << "SLIMCUDA_DECODER_DIR is not set";
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = std::string(tmp != nullptr ? tmp : "/tmp") + "/sticky_" + GetParam() + ".log";
  // Generous: it only catches a hang (a load and two steps take about a second).
  const int status = run_child(GetParam(), log, std::chrono::seconds(120));
  const std::string out = slurp(log);
  EXPECT_NE(status, -1) << "the child hung (killed after 120 s):\n" << out;
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("child: done, 0 failed"), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  std::printf("%s", out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Exports, StickyError, ::testing::Values("so", "oob"));

}  // namespace
}  // namespace slimcuda::testing
