// SPDX-License-Identifier: Apache-2.0
#pragma once

// Opening a vendor library (cuBLASLt, cuDNN) at run time, never at link time: libslimcuda.so
// has no DT_NEEDED on them, so a model that calls no fallback op never loads them.

#include <string>

#include "slimcuda/error.h"

namespace slimcuda::cuda_libs {

/// What to open and how to explain a failure.
struct LibrarySpec {
  const char* display_name;  ///< "cuBLASLt"
  const char* setting;       ///< its full-path setting (csrc/config), e.g. "SLIMCUDA_CUBLASLT_LIBRARY"
  const char* soname;        ///< "libcublasLt.so.13"
  const char* install_hint;  ///< "pip install nvidia-cublas"
  int dlopen_flags;          ///< RTLD_NOW | RTLD_LOCAL, usually
};

/// An opened library: its dlopen handle and the path or name it was opened by.
struct OpenedLibrary {
  void* handle = nullptr;
  std::string where;
};

/// Opens `spec`, searching in this order, first success wins:
///   1. `chosen`, the value of spec.setting (the caller reads it), a full path: when
///      non-empty, a failure there is final (an explicit choice is never silently replaced
///      by another copy);
///   2. the folder of libslimcuda.so itself (dladdr on this function) + soname;
///   3. the dynamic loader's own search (soname: LD_LIBRARY_PATH, the cache, RUNPATH).
/// On failure returns NotSupported and sets *failure to one message naming the library,
/// every place tried with dlerror()'s text, and what to install. Not cached: callers keep
/// the result (see cublaslt.h, cudnn.h). Thread-safe (dlopen is).
[[nodiscard]] Error open_library(const LibrarySpec& spec, const std::string& chosen, OpenedLibrary* out,
                                 std::string* failure);

/// Resolves `symbol` in `lib`; on failure appends "<symbol>: <dlerror>" to *failure.
[[nodiscard]] bool resolve_symbol(const OpenedLibrary& lib, const char* symbol, void** out, std::string* failure);

/// The folder holding libslimcuda.so (the object this code is linked into); "" if unknown.
[[nodiscard]] std::string own_library_dir();

}  // namespace slimcuda::cuda_libs
