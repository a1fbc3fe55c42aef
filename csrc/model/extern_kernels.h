// SPDX-License-Identifier: Apache-2.0
#pragma once

// A model's extern kernels: the ops its library runs through AOTInductor's proxy executor
// (aoti_torch_proxy_executor_call_function), described by the extern-kernel nodes beside
// the library in a .pt2. The model component only carries them; binding the nodes to
// slimcuda's ops is the proxy component's (csrc/proxy/), above it, passed down as a
// function like the caller-stream resolution.

#include <memory>
#include <string_view>

#include "slimcuda/error.h"

namespace slimcuda {

class ExternKernels {
 public:
  virtual ~ExternKernels() = default;
  /// What a run passes to the library as its AOTIProxyExecutorHandle.
  [[nodiscard]] virtual void* handle() const noexcept = 0;
};

/// Parses and binds a node file (the text of `<so stem>.json`), checking the calls the
/// generated wrapper source makes ("" when the archive has none) against the nodes.
using BindExternKernelsFn = Error (*)(std::string_view nodes_json, std::string_view wrapper_source,
                                      std::shared_ptr<const ExternKernels>* out) noexcept;

}  // namespace slimcuda
