// SPDX-License-Identifier: Apache-2.0
#pragma once

// slimcuda's proxy executor: what a model library calls, through
// aoti_torch_proxy_executor_call_function, for the ops AOTInductor has no C shim for (custom
// ops such as torchvision::nms, ATen ops outside the shims). At load, every extern-kernel
// node is bound to the op slimcuda implements for its target, and its serialized arguments
// are checked against the op's schema; a call then only places the tensors and ints the
// generated code passes, runs the op and hands its results to the output handles.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "csrc/model/extern_kernels.h"
#include "csrc/proxy/binding.h"
#include "csrc/proxy/call_sites.h"
#include "csrc/proxy/extern_nodes.h"
#include "csrc/proxy/proxy_op.h"
#include "csrc/proxy/registry.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"

namespace slimcuda::proxy {

/// Caller-stream resolution for a CUDA device (the entry layer's caller_context).
using ResolveStreamFn = Error (*)(int device_index, StreamContext* out) noexcept;

class ProxyExecutor final : public ExternKernels {
 public:
  /// Parses and binds a node file. Targets slimcuda does not implement -> NotSupported
  /// naming every one; a node that disagrees with its op's schema (an unknown argument, a
  /// missing one, a form the type cannot take) -> InvalidProgram naming the node, the
  /// argument and what was expected; parse_extern_nodes' errors. `wrapper_source` (may be
  /// empty): the library's generated source, whose calls must name existing nodes with the
  /// counts their binding takes (else InvalidProgram). May throw std::bad_alloc.
  [[nodiscard]] static Error create(std::string_view nodes_json, std::string_view wrapper_source,
                                    ResolveStreamFn resolve, std::shared_ptr<const ProxyExecutor>* out);

  [[nodiscard]] void* handle() const noexcept override { return const_cast<ProxyExecutor*>(this); }
  [[nodiscard]] size_t size() const noexcept { return nodes_.size(); }

  /// One call from generated code: node `index`, the flattened ints and tensors (inputs,
  /// then the output handles). A count that disagrees with the node's binding, a null
  /// handle or array, or an index out of range -> InvalidArgument; the op's own errors.
  /// May throw std::bad_alloc.
  [[nodiscard]] Error call(int index, int num_ints, const int64_t* ints, int num_tensors,
                           AtenTensorHandle* tensors) const;

 private:
  std::vector<BoundNode> nodes_;
  ResolveStreamFn resolve_ = nullptr;
};

}  // namespace slimcuda::proxy
