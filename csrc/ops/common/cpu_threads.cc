// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/common/cpu_threads.h"

#include <omp.h>

#include <cstdint>

#include "csrc/config/config.h"

namespace slimcuda::ops {

int cpu_threads() noexcept {
  const uint64_t asked = config::get_integer(config::Key::CpuThreads);
  const int n = asked == 0 ? omp_get_max_threads() : static_cast<int>(asked < 1024 ? asked : 1024);
  return n < 1 ? 1 : n;
}

namespace {

#if defined(__SANITIZE_THREAD__)
// libgomp's barriers are invisible to ThreadSanitizer: OpenBLAS's worker threads' memsets
// and the ops' parallel loops would all be reported as races with the caller's reads.
constexpr bool kSerial = true;
#else
constexpr bool kSerial = false;
#endif

}  // namespace

CpuThreadScope::CpuThreadScope() noexcept : saved_(omp_get_max_threads()) {
  const int n = kSerial ? 1 : cpu_threads();
  changed_ = n != saved_;
  if (changed_) omp_set_num_threads(n);
}

CpuThreadScope::~CpuThreadScope() {
  if (changed_) omp_set_num_threads(saved_);
}

}  // namespace slimcuda::ops
