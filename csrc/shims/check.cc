// SPDX-License-Identifier: Apache-2.0
// aoti_torch_check: the checks generated code makes at run time (AOTI_TORCH_CHECK).
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "csrc/core/model_checks.h"

#include "csrc/shims/shim_util.h"
#include "slimcuda/last_error.h"

namespace {

// Whether this thread runs inside an OpenMP parallel region, asked of the OpenMP runtime the
// model loaded (GCC's libgomp for PyTorch's CPU exports, LLVM's otherwise), if any.
bool in_openmp_region() {
  for (const char* lib : {"libgomp.so.1", "libomp.so", "libiomp5.so"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    auto* fn = reinterpret_cast<int (*)()>(dlsym(h, "omp_in_parallel"));
    const bool inside = fn != nullptr && fn() != 0;
    dlclose(h);  // NOLOAD took a reference; the library stays loaded for its other users
    if (inside) return true;
  }
  return false;
}

}  // namespace

extern "C" {

// Generated code relies on a failed check not returning: the code after it indexes with the
// value it checked (an embedding's token id, a gather's index). PyTorch's shim throws, and
// the container's Run turns any std::exception into its failure code; this one does the
// same, after recording the message for the Run's error (Model::run_failure reads it);
// inside an OpenMP parallel region it cannot (see csrc/core/model_checks.h).
// Not noexcept, and never inside c_entry, which would swallow the exception.
void SLIMCUDA_SHIM(aoti_torch_check)(bool cond, const char* func, const char* file, uint32_t line, const char* msg) {
  if (cond) return;
  const std::string what = std::string("check failed in the model: ") + (msg != nullptr ? msg : "") + " (" +
                           (func != nullptr ? func : "?") + ", " + (file != nullptr ? file : "?") + ":" +
                           std::to_string(line) + ")";
  (void)slimcuda::set_last_error(slimcuda::Error::InvalidArgument, "%s", what.c_str());
  // An exception must not leave an OpenMP region (std::terminate): record it for the run,
  // which fails afterwards, and let the region finish.
  if (in_openmp_region()) {
    slimcuda::note_check_failure(what);
    return;
  }
  throw std::runtime_error(what);
}

}  // extern "C"
