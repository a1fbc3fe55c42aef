// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/attention/attention_cuda.h"

#include "csrc/ops/attention/attention_cudnn.h"
#include "csrc/ops/attention/attention_kernel.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

AttnType attn_type(ScalarType t) noexcept {
  switch (t) {
    case ScalarType::Half:
      return AttnType::F16;
    case ScalarType::BFloat16:
      return AttnType::BF16;
    case ScalarType::Bool:
      return AttnType::Bool;
    default:
      return AttnType::F32;
  }
}

}  // namespace

Error attention_cuda(const AttentionProblem& p, const StreamContext& ctx) {
  // cuDNN's fused SDPA first (float16/bfloat16; it declines float32 and what it cannot
  // serve, quietly), unless SLIMCUDA_ATTENTION says otherwise (attention_cudnn.h).
  const AttentionPath path = attention_path_override();
  if (path != AttentionPath::Kernel) {
    const Error e = attention_cudnn(p, ctx);
    if (e != Error::NotSupported) return e;  // served, or a real failure
    if (path == AttentionPath::Cudnn) {
      return set_last_error(Error::NotSupported, "cuDNN cannot serve this attention: %s",
                            attention_cudnn_unsupported_reason());
    }
  }
  // Everything that falls through runs on slimcuda's kernel.
  return attention_kernel_cuda(p, ctx);
}

Error attention_kernel_cuda(const AttentionProblem& p, const StreamContext& ctx) {
  AttentionKernelArgs a;
  a.batch = p.batch, a.heads_q = p.heads_q, a.heads_kv = p.heads_kv;
  a.seq_q = p.seq_q, a.seq_kv = p.seq_kv, a.head_dim = p.head_dim, a.head_dim_v = p.head_dim_v;
  a.dtype = attn_type(p.dtype);
  a.q = p.q->data_ptr(), a.k = p.k->data_ptr(), a.v = p.v->data_ptr();
  for (int i = 0; i < 4; ++i) {
    a.q_strides[i] = p.q_strides[i], a.k_strides[i] = p.k_strides[i], a.v_strides[i] = p.v_strides[i];
    a.bias_strides[i] = p.bias_strides[i], a.out_strides[i] = p.out_strides[i];
  }
  if (p.bias != nullptr) {
    a.bias = p.bias->data_ptr();
    a.bias_dtype = attn_type(p.bias_dtype);
  }
  a.causal = p.causal;
  a.scale = static_cast<float>(p.scale);
  a.out = p.out->data_ptr();
  if (p.logsumexp != nullptr) {
    a.lse = static_cast<float*>(p.logsumexp->data_ptr());
    for (int i = 0; i < 3; ++i) a.lse_strides[i] = p.lse_strides[i];
  }
  return launch_attention(a, ctx.stream());
}

}  // namespace slimcuda::ops
