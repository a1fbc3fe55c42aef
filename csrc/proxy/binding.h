// SPDX-License-Identifier: Apache-2.0
#pragma once
// Binding a parsed extern-kernel node to its op's schema: which schema argument each node
// argument fills, what the generated call passes for it, and how many output handles each
// return takes. Plain data; no CUDA. Its own file so the fuzzer (tools/fuzz/fuzz.sh) binds
// untrusted nodes without the executor.

#include <string>
#include <vector>

#include "csrc/proxy/extern_nodes.h"
#include "csrc/proxy/proxy_op.h"
#include "csrc/proxy/registry.h"
#include "slimcuda/error.h"

namespace slimcuda::proxy {

/// How one schema argument is filled at a call: its static value (from the node, or the
/// schema's default), plus `tensors` tensor handles and `ints` ints taken from the call's
/// flattened arrays in order. For an optional tensor list, `present` says which items come
/// from the call (the others are None).
struct ArgPlan {
  ProxyValue value;
  int tensors = 0;
  int ints = 0;
  std::vector<bool> present;
};

/// One node bound to its op.
struct BoundNode {
  const RegisteredOp* op = nullptr;
  std::string target;
  std::vector<ArgPlan> args;
  int input_tensors = 0;
  int input_ints = 0;
  std::vector<int> return_tensors;  ///< per schema return: how many output handles it fills
  int output_tensors = 0;
};

/// A node's target names an op's overload; ".default" and no suffix are the same overload:
/// the name without ".default".
[[nodiscard]] std::string normalized_target(const std::string& target);

/// Binds one parsed node to `op`. A node that disagrees with the schema (an unknown
/// argument, a missing one, a form its type cannot take, outputs the returns do not match)
/// -> InvalidProgram naming the node and the argument.
[[nodiscard]] Error bind_node(const ExternNode& node, size_t index, const RegisteredOp& op, BoundNode* out);

}  // namespace slimcuda::proxy
