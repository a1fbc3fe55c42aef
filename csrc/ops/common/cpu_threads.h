// SPDX-License-Identifier: Apache-2.0
#pragma once

// How many threads slimcuda's CPU ops use: SLIMCUDA_CPU_THREADS, else OpenMP's own count.
// OpenBLAS's OpenMP build and the ops' parallel regions both take the calling thread's
// OpenMP count, so an op sets that count for its duration and gives the caller's back.

namespace slimcuda::ops {

/// The setting, or omp_get_max_threads() when it is 0; at least 1, at most 1024.
[[nodiscard]] int cpu_threads() noexcept;

/// For one CPU op on this thread: OpenMP's thread count is cpu_threads() until it ends,
/// then the caller's again. Under ThreadSanitizer: 1 (it cannot see libgomp's barriers).
class CpuThreadScope {
 public:
  CpuThreadScope() noexcept;
  ~CpuThreadScope();
  CpuThreadScope(const CpuThreadScope&) = delete;
  CpuThreadScope& operator=(const CpuThreadScope&) = delete;

 private:
  int saved_;
  bool changed_;
};

}  // namespace slimcuda::ops
