// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/bind.h"

#include <new>

#include "csrc/entry/caller_context.h"
#include "csrc/proxy/proxy_executor.h"
#include "slimcuda/last_error.h"

namespace slimcuda::proxy {

Error bind_extern_kernels(std::string_view nodes_json, std::string_view wrapper_source,
                          std::shared_ptr<const ExternKernels>* out) noexcept {
  try {
    std::shared_ptr<const ProxyExecutor> e;
    SLIMCUDA_RETURN_IF_ERROR(ProxyExecutor::create(nodes_json, wrapper_source, caller_context, &e));
    *out = std::move(e);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory binding the extern-kernel nodes");
  }
}

}  // namespace slimcuda::proxy
