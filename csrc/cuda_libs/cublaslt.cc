// SPDX-License-Identifier: Apache-2.0
#include "csrc/cuda_libs/cublaslt.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "csrc/config/config.h"
#include "csrc/cuda_libs/library_loader.h"
#include "slimcuda/last_error.h"

namespace slimcuda::cuda_libs {
namespace {

constexpr LibrarySpec kSpec{"cuBLASLt", "SLIMCUDA_CUBLASLT_LIBRARY", "libcublasLt.so.13",
                            "pip install nvidia-cublas (CUDA 13), or the CUDA 13 toolkit's cuBLAS",
                            RTLD_NOW | RTLD_LOCAL};

struct State {
  CublasLtApi api;
  bool ok = false;
  std::string failure;
};

void load(State* s) {
  OpenedLibrary lib;
  // Its path setting is read here, once: the library is opened once per process.
  if (open_library(kSpec, config::get_path(config::Key::CublasLtLibrary), &lib, &s->failure) != Error::Ok) return;
  std::string missing;
  bool all = true;
#define SLIMCUDA_RESOLVE_FN(name)                          \
  {                                                        \
    void* p = nullptr;                                     \
    all = resolve_symbol(lib, #name, &p, &missing) && all; \
    s->api.name = reinterpret_cast<decltype(&::name)>(p);  \
  }
  SLIMCUDA_CUBLASLT_FUNCTIONS(SLIMCUDA_RESOLVE_FN)
#undef SLIMCUDA_RESOLVE_FN
  if (!all) {
    s->failure = "cuBLASLt at " + lib.where + " lacks functions slimcuda needs:" + missing +
                 "\n  install cuBLAS 13 (pip install nvidia-cublas) or set SLIMCUDA_CUBLASLT_LIBRARY";
    return;
  }
  s->api.version = s->api.cublasLtGetVersion();
  if (s->api.version < kMinCublasLtVersion) {
    s->failure = "cuBLASLt at " + lib.where + " is version " + std::to_string(s->api.version) +
                 "; slimcuda needs >= " + std::to_string(kMinCublasLtVersion) +
                 " (pip install nvidia-cublas, or set SLIMCUDA_CUBLASLT_LIBRARY)";
    return;
  }
  s->ok = true;  // the handle stays open for the life of the process
}

}  // namespace

Result<const CublasLtApi*> cublaslt() noexcept {
  static State* state = nullptr;
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      auto* s = new State();  // never freed: function pointers outlive static destructors
      load(s);
      state = s;
    });
  } catch (...) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory loading cuBLASLt");
  }
  if (state == nullptr || !state->ok) {
    return set_last_error(Error::NotSupported, "%s",
                          state != nullptr ? state->failure.c_str() : "cuBLASLt loader failed");
  }
  return &state->api;
}

}  // namespace slimcuda::cuda_libs
