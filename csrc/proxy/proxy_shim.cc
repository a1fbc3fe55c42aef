// SPDX-License-Identifier: Apache-2.0
// aoti_torch_proxy_executor_call_function: where a model library's extern-kernel calls enter.
#include <stdexcept>
#include <string>

#include "csrc/entry/c_entry.h"
#include "csrc/proxy/proxy_executor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

extern "C" {

// AOTInductor's generated code does not check this call's code: it reads the outputs next
// (their sizes, for a data-dependent op). So a failure throws after recording its message,
// as aoti_torch_check does; the container's Run turns it into its failure code and
// Model::run_failure reports the message. Not noexcept, and the throw is outside c_entry,
// which would swallow it.
AOTITorchError SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(AOTIProxyExecutorHandle proxy_executor,
                                                                      int extern_node_index, int num_ints,
                                                                      int64_t* flatten_int_args, int num_tensors,
                                                                      AtenTensorHandle* flatten_tensor_args) {
  const int32_t rc = slimcuda::c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(proxy_executor != nullptr, slimcuda::Error::InvalidArgument,
                             "the model calls extern-kernel node %d, but its run was given no proxy executor "
                             "(a model loaded without its extern-kernel nodes)",
                             extern_node_index);
    const auto* e = reinterpret_cast<const slimcuda::proxy::ProxyExecutor*>(proxy_executor);
    return e->call(extern_node_index, num_ints, flatten_int_args, num_tensors, flatten_tensor_args);
  });
  if (rc != 0) throw std::runtime_error(slimcuda::last_error_message());
  return rc;
}

}  // extern "C"
