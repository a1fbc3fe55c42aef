// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ops slimcuda runs for the proxy executor, by the target an extern-kernel node names.
// One file per op family under ops/ lists its entries; this file joins them.

#include <string_view>
#include <vector>

#include "csrc/proxy/op_schema.h"
#include "csrc/proxy/proxy_op.h"

namespace slimcuda::proxy {

/// A registry entry with its schema parsed.
struct RegisteredOp {
  OpSchema schema;
  ProxyKernel kernel = nullptr;
};

/// The entry for `target` ("torchvision::nms", "aten::sort.stable"), or nullptr.
[[nodiscard]] const RegisteredOp* find_proxy_op(std::string_view target);

/// Every entry (sorted by target), for messages and the registry's test. A schema the
/// parser refuses is a registry bug: the first call aborts the process's use of the
/// registry by returning an empty list and recording why in registry_error().
[[nodiscard]] const std::vector<RegisteredOp>& proxy_ops();
[[nodiscard]] const std::string& registry_error();

// The families (ops/*.cc).
[[nodiscard]] std::vector<ProxyOp> transformers_ops();
[[nodiscard]] std::vector<ProxyOp> torchvision_ops();
[[nodiscard]] std::vector<ProxyOp> aten_ops();

}  // namespace slimcuda::proxy
