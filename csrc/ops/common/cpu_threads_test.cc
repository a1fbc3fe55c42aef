// SPDX-License-Identifier: Apache-2.0
// SLIMCUDA_CPU_THREADS sets the CPU ops' OpenMP count for an op's duration only; 0 leaves
// OpenMP's own.
#include <omp.h>

#include <string>

#include <gtest/gtest.h>

#include "csrc/config/config.h"
#include "csrc/ops/common/cpu_threads.h"

namespace slimcuda::ops {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int kScoped3 = 1, kScoped5 = 1;  // serial under ThreadSanitizer
#else
constexpr int kScoped3 = 3, kScoped5 = 5;
#endif

TEST(CpuThreads, TheSettingHoldsForTheScopeThenTheCallersCountIsBack) {
  std::string why;
  omp_set_num_threads(5);
  ASSERT_EQ(config::set(config::Key::CpuThreads, "3", &why), Error::Ok) << why;
  EXPECT_EQ(cpu_threads(), 3);
  {
    const CpuThreadScope scope;
    EXPECT_EQ(omp_get_max_threads(), kScoped3);
#if !defined(__SANITIZE_THREAD__)  // libgomp's barriers are invisible to ThreadSanitizer
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
    EXPECT_EQ(team, 3);
#endif
  }
  EXPECT_EQ(omp_get_max_threads(), 5);
  ASSERT_EQ(config::set(config::Key::CpuThreads, "0", &why), Error::Ok) << why;
  EXPECT_EQ(cpu_threads(), 5);  // OpenMP's own
  {
    const CpuThreadScope scope;
    EXPECT_EQ(omp_get_max_threads(), kScoped5);
  }
  ASSERT_EQ(config::set(config::Key::CpuThreads, "100000", &why), Error::Ok) << why;
  EXPECT_EQ(cpu_threads(), 1024);  // clamped
  EXPECT_NE(config::set(config::Key::CpuThreads, "-2", &why), Error::Ok);
  ASSERT_EQ(config::set(config::Key::CpuThreads, nullptr, &why), Error::Ok) << why;  // back to the default
}

}  // namespace
}  // namespace slimcuda::ops
