// SPDX-License-Identifier: Apache-2.0
#pragma once

// What an op reached through the proxy executor sees: its arguments placed in schema order
// (the node's static values, the defaults, and the tensors and ints the generated code
// passed), the stream context of the call, and where its returns go.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/proxy/op_schema.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::proxy {

/// One argument's value. Which member holds it follows the schema's type; `none` is an
/// optional argument given as None (or left out, defaulting to None).
struct ProxyValue {
  bool none = false;
  SlimTensor* tensor = nullptr;      ///< Tensor
  std::vector<SlimTensor*> tensors;  ///< TensorList; OptionalTensorList (nullptr: a None item)
  int64_t i = 0;                     ///< Int, ScalarType, Layout, MemoryFormat; Scalar when !is_float
  std::vector<int64_t> ints;         ///< IntList
  double f = 0.0;                    ///< Float; Scalar when is_float
  bool is_float = false;             ///< Scalar: given as a float (or bool: 0/1)
  std::vector<double> floats;        ///< FloatList
  bool b = false;                    ///< Bool
  std::vector<bool> bools;           ///< BoolList
  std::string s;                     ///< String; Device's type
};

/// One call of an op: `args` in the schema's order, `results` one slot per returned tensor
/// (the op fills every slot; a None return has none). `ctx` is the caller stream of the
/// call's CUDA device (made current for the call), or StreamContext::unselected(-1) when no
/// argument is a CUDA tensor.
struct ProxyCall {
  const OpSchema* schema = nullptr;
  std::vector<ProxyValue> args;
  StreamContext ctx = StreamContext::unselected(-1);
  std::vector<std::unique_ptr<SlimTensor>> results;

  /// The tensor of argument `i` (null for None), for ops that take one.
  [[nodiscard]] const SlimTensor* tensor(size_t i) const noexcept { return args[i].none ? nullptr : args[i].tensor; }
};

/// An op's implementation: reads call->args, fills call->results (or returns an error with
/// its message recorded). May throw std::bad_alloc.
using ProxyKernel = Error (*)(ProxyCall* call);

/// A registry entry: the op's schema exactly as PyTorch states it, and its implementation.
struct ProxyOp {
  const char* schema;
  ProxyKernel kernel;
};

}  // namespace slimcuda::proxy
