// SPDX-License-Identifier: Apache-2.0
// aoti_torch_check inside an OpenMP parallel region, as a CPU export's kernels call it: an
// exception there would end the process, so the failure is recorded for the run instead.
#include <omp.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "csrc/core/model_checks.h"
#include "slimcuda/aoti_torch.h"

namespace slimcuda::testing {
namespace {

TEST(CheckShimInOpenMP, AFailingCheckIsRecordedNotThrown) {
#if defined(__SANITIZE_THREAD__)
  // libgomp is not instrumented: TSan cannot see its barriers and would report them as races.
  GTEST_SKIP() << "OpenMP under ThreadSanitizer";
#endif
  const uint64_t before = check_failure_count();
  std::atomic<int> returned{0};
#pragma omp parallel num_threads(2)
  {
    SLIMCUDA_SHIM(aoti_torch_check)(omp_get_thread_num() != 0, "kernel", "k.cpp", 7, "index out of bounds: 0 <= i < 4");
    returned.fetch_add(1);
  }
  EXPECT_EQ(returned.load(), 2);  // every thread finished the region
  EXPECT_EQ(check_failure_count(), before + 1);
  EXPECT_NE(last_check_failure().find("index out of bounds: 0 <= i < 4 (kernel, k.cpp:7)"), std::string::npos)
      << last_check_failure();
}

TEST(CheckShimInOpenMP, OutsideTheRegionItStillThrows) {
  const uint64_t before = check_failure_count();
  EXPECT_THROW(SLIMCUDA_SHIM(aoti_torch_check)(false, "f", "w.cpp", 1, "bad"), std::runtime_error);
  EXPECT_EQ(check_failure_count(), before);
}

}  // namespace
}  // namespace slimcuda::testing
