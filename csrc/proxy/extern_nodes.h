// SPDX-License-Identifier: Apache-2.0
#pragma once

// The extern-kernel nodes AOTInductor serializes beside a model's library (`<so stem>.json`
// in the .pt2: {"nodes": [{"name", "node": {"target", "inputs", "outputs"}}]}, torch.export's
// Node schema): one per call of an op the library makes through
// aoti_torch_proxy_executor_call_function. Untrusted input: read with bounds, every field
// checked for its type, nothing assumed.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "csrc/archive/pt2_model.h"  // kMaxExternNodesBytes
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda::proxy {

/// How a node serializes one argument (torch.export's Argument union: "as_tensor", ...).
enum class ArgForm : int8_t {
  Tensor,
  Tensors,
  OptionalTensors,
  OptionalTensor,  ///< outputs only: {"as_optional_tensor": {"as_tensor"|"as_none"}}
  Int,
  Ints,
  SymInt,
  SymInts,
  Float,
  Floats,
  Bool,
  Bools,
  String,
  Strings,
  ScalarType,
  MemoryFormat,
  Layout,
  Device,
  None,
};

/// The name torch.export gives a form ("as_tensor"), for messages.
[[nodiscard]] const char* arg_form_name(ArgForm form) noexcept;

/// One serialized argument. Values the node states (floats, bools, strings, enums) are
/// kept; tensors and ints the generated code passes at run time are only counted.
struct NodeArg {
  std::string name;  ///< the schema argument's name (inputs); "" for outputs
  ArgForm form = ArgForm::None;
  size_t length = 1;           ///< items of a list form; 1 otherwise
  std::vector<bool> present;   ///< OptionalTensors: which items are tensors (the rest None)
  int64_t int_value = 0;       ///< Int, ScalarType, MemoryFormat, Layout; Device's index (-1: none)
  double float_value = 0.0;    ///< Float
  bool bool_value = false;     ///< Bool; OptionalTensor: it is a tensor
  std::string string_value;    ///< String; Device's type
  std::vector<int64_t> ints;   ///< Ints (as serialized; run-time values come from the call)
  std::vector<double> floats;  ///< Floats
  std::vector<bool> bools;     ///< Bools
  std::vector<std::string> strings;
};

struct ExternNode {
  std::string name;    ///< the buffer it produces ("buf3"), for messages
  std::string target;  ///< "torchvision::nms", "aten::sort.stable"
  std::vector<NodeArg> inputs;
  std::vector<NodeArg> outputs;
};

/// torch.export's serialized ScalarType (as_scalar_type: BYTE 1 ... BFLOAT16 13, its own
/// numbering, not c10's) as slimcuda's; false for a type slimcuda has no tensors of.
[[nodiscard]] bool serialized_scalar_type(int64_t code, ScalarType* out) noexcept;

/// Bounds on what a node file may declare (real exports: a few nodes of a few arguments).
inline constexpr size_t kMaxExternNodes = 4096;
inline constexpr size_t kMaxNodeArgs = 256;
inline constexpr size_t kMaxListItems = 1 << 16;
inline constexpr size_t kMaxNodeText = 1024;  // a target, a name, a string value

/// Parses a node file. Not JSON, over kMaxExternNodesBytes, nested deeper than a node can be,
/// a field of the wrong type, an argument form this reader does not know, or over a bound
/// -> InvalidProgram naming the node (its index and target) and the field.
[[nodiscard]] Error parse_extern_nodes(std::string_view json, std::vector<ExternNode>* out);

}  // namespace slimcuda::proxy
