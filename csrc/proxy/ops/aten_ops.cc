// SPDX-License-Identifier: Apache-2.0
// ATen ops without a C shim that AOTInductor reaches through the proxy executor.
#include <memory>
#include <utility>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/gemm/grouped_mm.h"
#include "csrc/ops/select/select_ops.h"
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

// torch.unique (sorted or not: the values come back sorted, which ATen allows for
// sorted=False) and torch.unique_consecutive, with or without a dim: data-dependent sizes,
// one synchronization on CUDA, refused under graph capture.
Error unique_into(ProxyCall* c, const char* op, bool consecutive, bool return_inverse, bool return_counts) {
  std::unique_ptr<SlimTensor> out[3];
  SLIMCUDA_RETURN_IF_ERROR(ops::unique(op, *c->tensor(0), consecutive, return_inverse, return_counts, c->ctx, out));
  c->results.resize(3);
  for (int i = 0; i < 3; ++i) c->results[static_cast<size_t>(i)] = std::move(out[i]);
  return Error::Ok;
}

Error unique2(ProxyCall* c) { return unique_into(c, "aten::_unique2", false, c->args[2].b, c->args[3].b); }

Error unique_dim_into(ProxyCall* c, const char* op, int64_t dim, bool consecutive, bool return_inverse,
                      bool return_counts) {
  std::unique_ptr<SlimTensor> out[3];
  SLIMCUDA_RETURN_IF_ERROR(
      ops::unique_dim(op, *c->tensor(0), dim, consecutive, return_inverse, return_counts, c->ctx, out));
  c->results.resize(3);
  for (int i = 0; i < 3; ++i) c->results[static_cast<size_t>(i)] = std::move(out[i]);
  return Error::Ok;
}

// torch.unique_consecutive: runs of equal values (dim None) or of equal slices (a dim).
Error unique_consecutive(ProxyCall* c) {
  if (!c->args[3].none) {
    return unique_dim_into(c, "aten::unique_consecutive", c->args[3].i, true, c->args[1].b, c->args[2].b);
  }
  return unique_into(c, "aten::unique_consecutive", true, c->args[1].b, c->args[2].b);
}

// torch.unique with a dim: distinct slices, sorted.
Error unique_dim(ProxyCall* c) {
  return unique_dim_into(c, "aten::unique_dim", c->args[1].i, false, c->args[3].b, c->args[4].b);
}

}  // namespace

std::vector<ProxyOp> aten_ops() {
  return {
      {"aten::_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) "
       "-> Tensor",
       grouped_mm},
      {"aten::_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> "
       "(Tensor, Tensor, Tensor)",
       unique2},
      {"aten::unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> "
       "(Tensor, Tensor, Tensor)",
       unique_consecutive},
      {"aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
       "-> (Tensor, Tensor, Tensor)",
       unique_dim},
  };
}

}  // namespace slimcuda::proxy
