// SPDX-License-Identifier: Apache-2.0
// ATen ops without a C shim that AOTInductor reaches through the proxy executor.
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/gemm/grouped_mm.h"
#include "csrc/proxy/extern_nodes.h"
#include "csrc/proxy/registry.h"

namespace slimcuda::proxy {
namespace {

// torch._grouped_mm, the bfloat16 MoE path: the 2-d x 3-d form with offsets is the one
// mixture-of-experts layers use; the others are refused by name.
Error grouped_mm(ProxyCall* c) {
  SLIMCUDA_OP_CHECK(c->tensor(2) != nullptr && c->tensor(0)->dim() == 2 && c->tensor(1)->dim() == 3,
                    Error::NotSupported, "aten::_grouped_mm: only a 2-d input, 3-d weights and offsets are supported");
  SLIMCUDA_OP_CHECK(c->tensor(3) == nullptr, Error::NotSupported, "aten::_grouped_mm: a bias is not supported");
  ScalarType out_dtype = c->tensor(0)->dtype();
  SLIMCUDA_OP_CHECK(
      c->args[4].none || (serialized_scalar_type(c->args[4].i, &out_dtype) && out_dtype == c->tensor(0)->dtype()),
      Error::NotSupported, "aten::_grouped_mm: out_dtype must be the input's");
  c->results.resize(1);
  return ops::grouped_mm(*c->tensor(0), *c->tensor(1), *c->tensor(2), c->ctx, &c->results[0]);
}

}  // namespace

std::vector<ProxyOp> aten_ops() {
  return {
      {"aten::_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) "
       "-> Tensor",
       grouped_mm},
  };
}

}  // namespace slimcuda::proxy
