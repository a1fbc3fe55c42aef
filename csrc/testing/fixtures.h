// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shared fixtures (testdata/*.json) for googletest suites. The Go suites read the same
// files (go/internal/fixture); each suite must visit every case of the files it owns, so a
// case one language forgets fails that language's build.
//
// A fixture file: {"description": "...", "cases": [{"name": ..., "op": ..., "requires":
// "none" | "gpu" | "no_gpu", ...op-specific fields...}]}.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slimcuda/error.h"

namespace slimcuda::testing {

struct Case {
  std::string file;     // basename, e.g. "kernels.json"
  std::string name;     // unique within the file
  std::string op;       // which test handles it
  std::string needs;    // "requires": "none", "gpu", "gpu2" (two GPUs) or "no_gpu"
  nlohmann::json data;  // the whole case object
};

/// Declares that this test binary owns `file`: at exit every case in it must have been
/// visited (run or skipped), or the binary fails. Use at namespace scope:
///   const bool kOwnsKernels = slimcuda::testing::own_fixture("kernels.json");
bool own_fixture(const std::string& file);

/// The cases of `file` whose op is `op`. Fails the current test if the file is missing.
std::vector<Case> cases(const std::string& file, const std::string& op);

/// Marks `c` visited and says whether to run it: false for a GPU case without a GPU (a
/// test failure instead when SLIMCUDA_REQUIRE_GPU=1), for a gpu2 case with fewer than two
/// GPUs (a failure when SLIMCUDA_REQUIRE_GPUS >= 2) and for a no_gpu case with a GPU.
/// The current test counts its cases: one that ran none must end in
/// SLIMCUDA_SKIP_IF_NO_CASE_RAN() (a test that passed with zero cases run fails the binary).
bool begin_case(const Case& c);

/// The skip reasons, one text per cause, shared with the Go suites (go/internal/fixture)
/// and the GPU run's allow-list (tools/gpu/run.sh): what a skip says is how it is judged.
inline constexpr const char* kNeedsGpu = "needs a GPU";
inline constexpr const char* kNeedsTwoGpus = "needs two GPUs";
inline constexpr const char* kWithoutGpuOnly = "for machines without a GPU";

/// Whether the current test visited fixture cases and ran none of them; *why then gives
/// the reasons (e.g. "needs two GPUs: 3 cases").
bool no_case_ran(std::string* why);

/// Error code for a name used in fixtures ("Ok", "InvalidArgument", ...); fails the test
/// for an unknown name.
Error error_from_name(const std::string& name);

/// `e` as the int32_t code the C ABI and the shims return.
constexpr int32_t code_of(Error e) noexcept { return static_cast<int32_t>(e); }

/// Checks a result code against the case's "expect" (an error name) and, when the case
/// has one, that `message` (this thread's last-error text, read after the call: the C
/// ABI's slimcuda_last_error_message() or, in tests of internals, last_error_message())
/// contains its "message".
void expect_code(const Case& c, int32_t got, const std::string& message);

/// The path of `relative` (e.g. "packages/x.slimcuda") next to fixture file `file`.
std::string fixture_relative(const std::string& file, const std::string& relative);

/// A runfiles-relative path (as $(rootpath) gives it) made usable from the test's working
/// directory; absolute paths come back unchanged.
std::string runfile(const std::string& path);

/// The bytes of the file at `path`; one that cannot be opened fails the test (and gives none).
std::vector<uint8_t> read_bytes(const std::string& path);

/// A real shared object (a test model's library): the file $SLIMCUDA_TEST_LIBRARY names.
std::vector<uint8_t> test_library();

/// A test model package of models/testing by name ("weights_pairs", "stateful"), from the
/// list $SLIMCUDA_TEST_MODELS names; fails the test (and gives "") when it is not there.
std::string test_package_path(const std::string& name);

/// The demo model package: $SLIMCUDA_DEMO_PACKAGE (a runfiles or absolute path).
std::string demo_package_path();

/// Whether a CUDA device is usable, and whether SLIMCUDA_REQUIRE_GPU=1 demands one.
bool has_gpu();
/// Usable CUDA devices, and how many SLIMCUDA_REQUIRE_GPUS demands (0 if unset).
int gpu_count();
int gpus_required();
bool gpu_required();

}  // namespace slimcuda::testing

/// Skips the current test without a GPU; fails it instead under SLIMCUDA_REQUIRE_GPU=1.
#define SLIMCUDA_REQUIRE_GPU_OR_SKIP()                                   \
  do {                                                                   \
    if (!::slimcuda::testing::has_gpu()) {                               \
      if (::slimcuda::testing::gpu_required()) {                         \
        FAIL() << "SLIMCUDA_REQUIRE_GPU=1 but no CUDA device is usable"; \
      }                                                                  \
      GTEST_SKIP() << ::slimcuda::testing::kNeedsGpu;                    \
    }                                                                    \
  } while (0)

/// Skips the current test on a machine with a GPU (a test of the no-GPU behaviour).
#define SLIMCUDA_SKIP_WITH_A_GPU()                          \
  do {                                                      \
    if (::slimcuda::testing::has_gpu()) {                   \
      GTEST_SKIP() << ::slimcuda::testing::kWithoutGpuOnly; \
    }                                                       \
  } while (0)

/// Ends a fixture-driven test: SKIPPED, with the reasons, when none of its cases could run
/// here. Never PASSED with zero cases run.
#define SLIMCUDA_SKIP_IF_NO_CASE_RAN()                      \
  do {                                                      \
    std::string slimcuda_why_;                              \
    if (::slimcuda::testing::no_case_ran(&slimcuda_why_)) { \
      GTEST_SKIP() << slimcuda_why_;                        \
    }                                                       \
  } while (0)
