// SPDX-License-Identifier: Apache-2.0
#include "csrc/cuda_libs/cudnn.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "csrc/config/config.h"
#include "csrc/cuda_libs/library_loader.h"
#include "slimcuda/last_error.h"

namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace slimcuda::cuda_libs {
namespace {

constexpr LibrarySpec kSpec{"cuDNN", "SLIMCUDA_CUDNN_LIBRARY", "libcudnn.so.9",
                            "pip install nvidia-cudnn-cu13 (cuDNN 9 for CUDA 13)", RTLD_NOW | RTLD_LOCAL};

struct State {
  CudnnApi api;
  bool ok = false;
  std::string failure;
};

void load(State* s) {
  OpenedLibrary lib;
  // Its path setting is read here, once: the library is opened once per process.
  if (open_library(kSpec, config::get_path(config::Key::CudnnLibrary), &lib, &s->failure) != Error::Ok) return;
  std::string missing;
  bool all = true;
#define SLIMCUDA_RESOLVE_FN(name)                          \
  {                                                        \
    void* p = nullptr;                                     \
    all = resolve_symbol(lib, #name, &p, &missing) && all; \
    s->api.name = reinterpret_cast<decltype(&::name)>(p);  \
  }
  SLIMCUDA_CUDNN_FUNCTIONS(SLIMCUDA_RESOLVE_FN)
#undef SLIMCUDA_RESOLVE_FN
  if (!all) {
    s->failure = "cuDNN at " + lib.where + " lacks functions slimcuda needs:" + missing +
                 "\n  install cuDNN 9 (pip install nvidia-cudnn-cu13) or set SLIMCUDA_CUDNN_LIBRARY";
    return;
  }
  s->api.version = s->api.cudnnGetVersion();
  if (s->api.version < kMinCudnnVersion) {
    s->failure = "cuDNN at " + lib.where + " is version " + std::to_string(s->api.version) +
                 "; slimcuda needs >= " + std::to_string(kMinCudnnVersion) +
                 " (pip install nvidia-cudnn-cu13, or set SLIMCUDA_CUDNN_LIBRARY)";
    return;
  }
  s->api.handle = lib.handle;
  cudnn_frontend::cudnn_dlhandle = lib.handle;
  s->ok = true;
}

}  // namespace

Result<const CudnnApi*> cudnn() noexcept {
  static State* state = nullptr;
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      auto* s = new State();  // never freed: function pointers outlive static destructors
      load(s);
      state = s;
    });
  } catch (...) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory loading cuDNN");
  }
  if (state == nullptr || !state->ok) {
    return set_last_error(Error::NotSupported, "%s", state != nullptr ? state->failure.c_str() : "cuDNN loader failed");
  }
  return &state->api;
}

}  // namespace slimcuda::cuda_libs
