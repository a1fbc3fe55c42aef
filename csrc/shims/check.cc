// SPDX-License-Identifier: Apache-2.0
// aoti_torch_check: the checks generated code makes at run time (AOTI_TORCH_CHECK).
#include <stdexcept>
#include <string>

#include "csrc/shims/shim_util.h"
#include "slimcuda/last_error.h"

extern "C" {

// Generated code relies on a failed check not returning: the code after it indexes with the
// value it checked (an embedding's token id, a gather's index). PyTorch's shim throws, and
// the container's Run turns any std::exception into its failure code; this one does the
// same, after recording the message for the Run's error (Model::run_failure reads it).
// Not noexcept, and never inside c_entry, which would swallow the exception.
void SLIMCUDA_SHIM(aoti_torch_check)(bool cond, const char* func, const char* file, uint32_t line, const char* msg) {
  if (cond) return;
  const std::string what = std::string("check failed in the model: ") + (msg != nullptr ? msg : "") + " (" +
                           (func != nullptr ? func : "?") + ", " + (file != nullptr ? file : "?") + ":" +
                           std::to_string(line) + ")";
  (void)slimcuda::set_last_error(slimcuda::Error::InvalidArgument, "%s", what.c_str());
  throw std::runtime_error(what);
}

}  // extern "C"
