// SPDX-License-Identifier: Apache-2.0
#include "csrc/testing/fixtures.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace slimcuda::testing {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::string> paths;         // basename -> path
  std::map<std::string, std::vector<Case>> loaded;  // basename -> cases
  std::set<std::string> owned;
  std::map<std::string, std::set<std::string>> visited;  // basename -> case names
  std::map<std::string, int> ran, skipped;
  // Per test ("Suite.Name"): cases run, and cases skipped by reason.
  std::map<std::string, int> test_ran;
  std::map<std::string, std::map<std::string, int>> test_skipped;
  bool listed = false;
};

// "Suite.Name" of the test running now ("" outside one).
std::string current_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : std::string(info->test_suite_name()) + "." + info->name();
}

std::string reasons(const std::map<std::string, int>& skipped) {
  std::string out;
  for (const auto& [reason, n] : skipped) {
    out += (out.empty() ? "" : "; ") + reason + ": " + std::to_string(n) + (n == 1 ? " case" : " cases");
  }
  return out;
}

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: used from the exit-time check
  return *r;
}

// $SLIMCUDA_FIXTURES: space-separated paths ($(rootpaths //testdata:fixtures) under Bazel,
// absolute in the GPU bundle). Relative paths are relative to the runfiles root.
void list_fixture_files(Registry& r) {
  if (r.listed) return;
  r.listed = true;
  const char* env = std::getenv("SLIMCUDA_FIXTURES");
  if (env == nullptr) return;
  std::string root;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    const char* ws = std::getenv("TEST_WORKSPACE");
    root = std::string(srcdir) + "/" + (ws ? ws : "slimcuda") + "/";
  }
  std::istringstream in(env);
  std::string path;
  while (in >> path) {
    const std::string base = path.substr(path.find_last_of('/') + 1);
    r.paths[base] = (path[0] == '/' || root.empty()) ? path : root + path;
  }
}

const std::vector<Case>* load(Registry& r, const std::string& file, std::string* why) {
  list_fixture_files(r);
  auto it = r.loaded.find(file);
  if (it != r.loaded.end()) return &it->second;
  auto p = r.paths.find(file);
  if (p == r.paths.end()) {
    *why = "fixture " + file + " not listed in $SLIMCUDA_FIXTURES";
    return nullptr;
  }
  std::ifstream in(p->second);
  if (!in) {
    *why = "cannot open " + p->second;
    return nullptr;
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("cases") || !doc["cases"].is_array()) {
    *why = p->second + ": not a fixture file (want {\"cases\": [...]})";
    return nullptr;
  }
  std::vector<Case> out;
  std::set<std::string> names;
  for (const auto& c : doc["cases"]) {
    Case k{file, c.value("name", ""), c.value("op", ""), c.value("requires", "none"), c};
    if (k.name.empty() || k.op.empty() || !names.insert(k.name).second ||
        (k.needs != "none" && k.needs != "gpu" && k.needs != "gpu2" && k.needs != "no_gpu")) {
      *why = p->second + ": bad case " + c.dump() + " (needs a unique name, an op and a valid requires)";
      return nullptr;
    }
    out.push_back(std::move(k));
  }
  return &(r.loaded[file] = std::move(out));
}

// After all tests: every case of every owned file must have been visited. Skipped when a
// filter or sharding ran only part of the binary.
class MirrorCheck : public ::testing::Environment {
 public:
  void TearDown() override {
    zero_case_check();
    const std::string filter = ::testing::GTEST_FLAG(filter);
    const char* shards = std::getenv("GTEST_TOTAL_SHARDS");
    if (filter != "*" || (shards != nullptr && std::string(shards) != "1")) return;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const std::string& file : r.owned) {
      std::string why;
      const std::vector<Case>* all = load(r, file, &why);
      if (all == nullptr) {
        ADD_FAILURE() << why;
        continue;
      }
      std::string missing;
      for (const Case& c : *all) {
        if (!r.visited[file].count(c.name)) missing += " " + c.name + " (op " + c.op + ")";
      }
      if (!missing.empty()) ADD_FAILURE() << file << ": cases this suite never ran:" << missing;
      std::printf("fixtures: %s: %zu cases, %d ran, %d skipped\n", file.c_str(), all->size(), r.ran[file],
                  r.skipped[file]);
    }
  }

 private:
  // A fixture-driven test that ran none of its cases must say so by skipping
  // (SLIMCUDA_SKIP_IF_NO_CASE_RAN); one that PASSED with zero cases proved nothing.
  static void zero_case_check() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
      for (int j = 0; j < suite.total_test_count(); ++j) {
        const ::testing::TestInfo& info = *suite.GetTestInfo(j);
        const std::string name = std::string(suite.name()) + "." + info.name();
        auto skipped = r.test_skipped.find(name);
        if (skipped == r.test_skipped.end() || r.test_ran[name] > 0 || !info.result()->Passed()) continue;
        ADD_FAILURE() << name << " ran none of its fixture cases (" << reasons(skipped->second)
                      << ") yet PASSED: end its case loop with SLIMCUDA_SKIP_IF_NO_CASE_RAN()";
      }
    }
  }
};

const bool kMirrorCheckInstalled = (::testing::AddGlobalTestEnvironment(new MirrorCheck), true);

}  // namespace

bool own_fixture(const std::string& file) {
  (void)kMirrorCheckInstalled;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.owned.insert(file);
  return true;
}

std::vector<Case> cases(const std::string& file, const std::string& op) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string why;
  const std::vector<Case>* all = load(r, file, &why);
  if (all == nullptr) {
    ADD_FAILURE() << why;
    return {};
  }
  std::vector<Case> out;
  for (const Case& c : *all) {
    if (c.op == op) out.push_back(c);
  }
  if (out.empty()) ADD_FAILURE() << file << " has no case with op " << op;
  return out;
}

bool begin_case(const Case& c) {
  const char* skip = nullptr;
  if (c.needs == "gpu" && !has_gpu()) {
    if (gpu_required()) ADD_FAILURE() << c.name << ": SLIMCUDA_REQUIRE_GPU=1 but no CUDA device is usable";
    skip = kNeedsGpu;
  } else if (c.needs == "gpu2" && gpu_count() < 2) {
    if (gpus_required() >= 2)
      ADD_FAILURE() << c.name << ": SLIMCUDA_REQUIRE_GPUS asks for two GPUs, found " << gpu_count();
    skip = kNeedsTwoGpus;
  } else if (c.needs == "no_gpu" && has_gpu()) {
    skip = kWithoutGpuOnly;
  }
  const std::string test = current_test();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.visited[c.file].insert(c.name);
  ++(skip == nullptr ? r.ran : r.skipped)[c.file];
  if (skip == nullptr) {
    ++r.test_ran[test];
  } else {
    ++r.test_skipped[test][skip];
  }
  return skip == nullptr;
}

bool no_case_ran(std::string* why) {
  const std::string test = current_test();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto skipped = r.test_skipped.find(test);
  if (skipped == r.test_skipped.end() || r.test_ran[test] > 0) return false;
  *why = reasons(skipped->second);
  return true;
}

namespace {

const std::map<std::string, Error>& errors_by_name() {
  static const std::map<std::string, Error> kByName = {
      {"Ok", Error::Ok},
      {"Internal", Error::Internal},
      {"InvalidState", Error::InvalidState},
      {"NotSupported", Error::NotSupported},
      {"NotImplemented", Error::NotImplemented},
      {"InvalidArgument", Error::InvalidArgument},
      {"InvalidType", Error::InvalidType},
      {"NotFound", Error::NotFound},
      {"MemoryAllocationFailed", Error::MemoryAllocationFailed},
      {"AccessFailed", Error::AccessFailed},
      {"InvalidProgram", Error::InvalidProgram},
      {"OutOfResources", Error::OutOfResources},
  };
  return kByName;
}

// The fixtures' name for a code (the names are the library's), or the number.
std::string name_of(int32_t code) {
  for (const auto& [name, error] : errors_by_name()) {
    if (static_cast<int32_t>(error) == code) return name;
  }
  return "code " + std::to_string(code);
}

}  // namespace

Error error_from_name(const std::string& name) {
  const auto& by_name = errors_by_name();
  auto it = by_name.find(name);
  if (it == by_name.end()) {
    ADD_FAILURE() << "unknown error name in fixture: " << name;
    return Error::Internal;
  }
  return it->second;
}

void expect_code(const Case& c, int32_t got, const std::string& message) {
  EXPECT_EQ(got, static_cast<int32_t>(error_from_name(c.data.at("expect").get<std::string>())))
      << c.name << ": got " << name_of(got) << ": " << message;
  if (c.data.contains("message")) {
    EXPECT_NE(message.find(c.data["message"].get<std::string>()), std::string::npos)
        << c.name << ": last error: " << message;
  }
}

std::string fixture_relative(const std::string& file, const std::string& relative) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  list_fixture_files(r);
  auto it = r.paths.find(file);
  if (it == r.paths.end()) {
    ADD_FAILURE() << "fixture " << file << " not listed in $SLIMCUDA_FIXTURES";
    return relative;
  }
  return it->second.substr(0, it->second.find_last_of('/') + 1) + relative;
}

std::string runfile(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return path;
  const char* ws = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir) + "/" + (ws ? ws : "slimcuda") + "/" + path;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> test_library() {
  const char* p = std::getenv("SLIMCUDA_TEST_LIBRARY");
  EXPECT_NE(p, nullptr) << "SLIMCUDA_TEST_LIBRARY is not set";
  return p == nullptr ? std::vector<uint8_t>{} : read_bytes(runfile(p));
}

std::string test_package_path(const std::string& want) {
  const char* list = std::getenv("SLIMCUDA_TEST_MODELS");
  EXPECT_NE(list, nullptr) << "SLIMCUDA_TEST_MODELS is not set";
  std::istringstream in(list == nullptr ? "" : list);
  for (std::string p; in >> p;) {
    const std::string name = p.substr(p.find_last_of('/') + 1);
    if (name.substr(0, name.find('.')) == want) return runfile(p);
  }
  ADD_FAILURE() << "no test package " << want;
  return "";
}

std::string demo_package_path() {
  const char* p = std::getenv("SLIMCUDA_DEMO_PACKAGE");
  if (p == nullptr) {
    ADD_FAILURE() << "SLIMCUDA_DEMO_PACKAGE is not set";
    return "";
  }
  return runfile(p);
}

int gpu_count() {
  // Asked of the CUDA runtime itself, not of slimcuda: the gating does not depend on the
  // library under test (nor on its C ABI: this reader serves every layer's tests).
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

bool has_gpu() { return gpu_count() > 0; }

int gpus_required() {
  const char* v = std::getenv("SLIMCUDA_REQUIRE_GPUS");
  return v == nullptr ? 0 : std::atoi(v);
}

bool gpu_required() {
  const char* v = std::getenv("SLIMCUDA_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace slimcuda::testing

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer reads these from every test binary (they all link this file). glibc's
// dynamic loader serialises dlopen and dlclose with its own lock, which ThreadSanitizer
// does not see: concurrent model loads and frees (DemoModel.ConcurrentLoadsNeverCollide)
// are reported as races inside ld.so. Only frames of the loader itself are suppressed.
extern "C" const char* __tsan_default_suppressions() {
  return "race:_dl_close_worker\n"
         "race:_dl_open_worker\n"
         "race:_dl_map_object\n"
         "race:_dl_check_map_versions\n"
         "race:_dl_relocate_object\n";
}
#endif
