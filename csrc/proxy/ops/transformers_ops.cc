// SPDX-License-Identifier: Apache-2.0
// Custom ops of Hugging Face transformers that AOTInductor reaches through the proxy
// executor: the mixture-of-experts grouped GEMM its MoE layers call when
// torch._grouped_mm cannot serve (any dtype but bfloat16 under export).
#include "csrc/ops/gemm/grouped_mm.h"
#include "csrc/proxy/registry.h"

namespace slimcuda::proxy {
namespace {

Error grouped_mm_fallback(ProxyCall* c) {
  c->results.resize(1);
  return ops::grouped_mm(*c->tensor(0), *c->tensor(1), *c->tensor(2), c->ctx, &c->results[0]);
}

}  // namespace

std::vector<ProxyOp> transformers_ops() {
  return {
      {"transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor", grouped_mm_fallback},
  };
}

}  // namespace slimcuda::proxy
