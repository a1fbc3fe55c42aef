// SPDX-License-Identifier: Apache-2.0
#pragma once

// The proxy component's entry for loading: what the C ABI passes down to the model
// component (LoadOptions::bind_extern_kernels) to bind a .pt2's extern-kernel nodes.

#include <memory>
#include <string_view>

#include "csrc/model/extern_kernels.h"
#include "slimcuda/error.h"

namespace slimcuda::proxy {

/// ProxyExecutor::create with the entry layer's caller-stream resolution (BindExternKernelsFn).
[[nodiscard]] Error bind_extern_kernels(std::string_view nodes_json, std::string_view wrapper_source,
                                        std::shared_ptr<const ExternKernels>* out) noexcept;

}  // namespace slimcuda::proxy
