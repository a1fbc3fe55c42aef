// SPDX-License-Identifier: Apache-2.0
#pragma once

// cuBLASLt, opened on first use (library_loader.h): a table of the few functions slimcuda's
// GEMMs call, typed from cublasLt.h. Search: $SLIMCUDA_CUBLASLT_LIBRARY, beside
// libslimcuda.so, then the loader's path (soname libcublasLt.so.13). Needs cuBLASLt >= 13.0.

#include <cublasLt.h>

#include "slimcuda/error.h"
#include "slimcuda/result.h"

namespace slimcuda::cuda_libs {

#define SLIMCUDA_CUBLASLT_FUNCTIONS(X)    \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulAlgoConfigGetAttribute) \
  X(cublasLtMatmul)

/// The resolved functions; immutable once loaded, shared by every thread.
struct CublasLtApi {
#define SLIMCUDA_DECLARE_FN(name) decltype(&::name) name = nullptr;
  SLIMCUDA_CUBLASLT_FUNCTIONS(SLIMCUDA_DECLARE_FN)
#undef SLIMCUDA_DECLARE_FN
  size_t version = 0;  ///< cublasLtGetVersion(), e.g. 130100
};

/// The minimum run-time version (the headers slimcuda builds against are 13.0).
inline constexpr size_t kMinCublasLtVersion = 130000;

/// The table, loading the library on the first call (once per process, thread-safe). A
/// failure (missing library, missing symbol, too old) is NotSupported with the reason in
/// the last-error message; it is remembered: later calls fail at once
/// with the same message, never retrying the search.
[[nodiscard]] Result<const CublasLtApi*> cublaslt() noexcept;

}  // namespace slimcuda::cuda_libs
