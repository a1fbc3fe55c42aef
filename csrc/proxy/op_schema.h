// SPDX-License-Identifier: Apache-2.0
#pragma once

// An operator schema as PyTorch writes it ("torchvision::nms(Tensor dets, Tensor scores,
// float iou_threshold) -> Tensor"): what the proxy executor needs to know of an op to place
// an extern-kernel node's serialized arguments and the generated code's flattened ones.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slimcuda/error.h"

namespace slimcuda::proxy {

/// The schema types an extern-kernel node can carry. SymInt reads as Int and SymInt[] as
/// IntList: the generated code passes both as int64 values.
enum class SchemaType : int8_t {
  Tensor,
  TensorList,          ///< Tensor[]
  OptionalTensorList,  ///< Tensor?[]
  Int,
  IntList,
  Float,
  FloatList,
  Bool,
  BoolList,
  String,
  Scalar,  ///< an int Scalar is passed as an int, a float or bool one is in the node
  ScalarType,
  Layout,
  Device,
  MemoryFormat,
  None,  ///< only as a return: "-> ()" has none, "-> None" one
};

/// A default value as the schema states it: None, a number, a bool, a string or a list of
/// numbers. Only what binding an absent argument needs.
struct SchemaDefault {
  bool present = false;
  bool none = false;
  double number = 0.0;
  bool boolean = false;
  std::string text;
  std::vector<double> numbers;
};

struct SchemaArg {
  std::string name;
  SchemaType type = SchemaType::Tensor;
  bool optional = false;  ///< T? (may be None)
  bool mutated = false;   ///< Tensor(a!): written in place
  bool keyword = false;   ///< after `*`
  SchemaDefault def;
};

struct OpSchema {
  std::string name;      ///< "torchvision::nms", "aten::sort"
  std::string overload;  ///< "stable", or "" for the default overload
  std::vector<SchemaArg> args;
  std::vector<SchemaArg> returns;  ///< names may be empty

  /// The target an extern-kernel node names: "ns::op" or "ns::op.overload".
  [[nodiscard]] std::string target() const { return overload.empty() ? name : name + "." + overload; }
};

/// Parses `text` into *out. Anything this reader does not know (a type, a default, an
/// alias set other than "(a!)"-style) -> InvalidArgument naming where. Schemas come from
/// slimcuda's own registry, so a failure is a registry bug its test catches.
[[nodiscard]] Error parse_op_schema(std::string_view text, OpSchema* out);

}  // namespace slimcuda::proxy
