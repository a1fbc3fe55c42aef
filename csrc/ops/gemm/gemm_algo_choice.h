// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which of cuBLASLt's heuristic candidates a GEMM runs (ops/gemm_cuda.cc, and
// bench/gemm_algos_benchmark, which times every candidate against this choice).
//
// The first candidate that does not reduce split-K partial sums in place. In-place
// reduction (CUBLASLT_REDUCTION_SCHEME_INPLACE: the splits add their partial sums into D
// in turn after a kernel that scales D by beta) is cuBLASLt's first pick for many small-M float32 GEMMs and there
// 1.6-2 x slower than the next candidate without it (H200, 2026-12-01, docs/benchmarks.md
// "cuBLASLt's candidates"); split-K into the workspace is kept. The candidates are
// filtered rather than the heuristic asked to exclude the scheme
// (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK): with that preference set it also dropped
// single-pass kernels that were its best picks (m 8, k 256: 9.7 against 5.3 µs).

#include <cublasLt.h>

#include <cstdint>

#include "csrc/cuda_libs/cublaslt.h"

namespace slimcuda::ops {

/// How many candidates to ask the heuristic for.
inline constexpr int kGemmCandidates = 8;

/// The index in found[0, count) of the candidate to run (0 when all reduce in place;
/// count must be > 0).
inline int choose_gemm_algo(const cuda_libs::CublasLtApi& api, const cublasLtMatmulHeuristicResult_t* found,
                            int count) noexcept {
  for (int i = 0; i < count; ++i) {
    uint32_t scheme = 0;
    size_t written = 0;
    if (api.cublasLtMatmulAlgoConfigGetAttribute(&found[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                                 sizeof(scheme), &written) != CUBLAS_STATUS_SUCCESS) {
      continue;
    }
    if (scheme != CUBLASLT_REDUCTION_SCHEME_INPLACE) return i;
  }
  return 0;
}

}  // namespace slimcuda::ops
