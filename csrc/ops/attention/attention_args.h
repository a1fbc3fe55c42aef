// SPDX-License-Identifier: Apache-2.0
#pragma once

// Argument checks and output layouts of the scaled-dot-product attention shims, shared by
// the CPU and CUDA ops (one place decides what a valid attention is, so both devices reject
// the same inputs with the same codes). The layouts are the ones PyTorch 2.11's meta
// functions give (torch/_meta_registrations.py, meta__scaled_dot_product_*): Inductor's
// generated code assumes exactly those strides for what the op returns.

#include <cstdint>
#include <memory>
#include <vector>

#include "csrc/ops/attention/attention_problem.h"
#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Which ATen op a shim stands for: they differ in their output layouts and options.
enum class AttentionOp : int8_t {
  Efficient,    ///< _scaled_dot_product_efficient_attention (CUDA)
  Flash,        ///< _scaled_dot_product_flash_attention (CUDA)
  Cudnn,        ///< _scaled_dot_product_cudnn_attention (CUDA)
  FlashForCpu,  ///< _scaled_dot_product_flash_attention_for_cpu (CPU)
};

/// Sizes and strides of the op's attention output and logsumexp, as PyTorch's meta
/// function gives them for these inputs.
struct AttentionLayout {
  std::vector<int64_t> out_sizes, out_strides;
  std::vector<int64_t> lse_sizes, lse_strides;
};

/// The options of one call, as the shim received them.
struct AttentionOptions {
  AtenTensorHandle* bias = nullptr;  ///< attn_bias / attn_mask: null or a pointer to a null handle = none
  bool compute_log_sumexp = true;    ///< efficient/cudnn's flag (flash ops always compute it)
  double dropout_p = 0.0;
  bool is_causal = false;
  bool return_debug_mask = false;
  const double* scale = nullptr;  ///< null: 1 / sqrt(head_dim)
};

/// Checks an attention call's handles (query, key, value non-null, and ret0: the output
/// has to go somewhere), devices (all `device_type`, one CUDA device), dtypes (float32,
/// float16, bfloat16, all alike; a bias of that dtype, float32 or bool), ranks (4-D q/k/v
/// [B, H, S, D]), shapes (equal batch, heads_q a multiple of heads_kv, key/value sequence
/// lengths equal, q/k head dims equal, flash ops: v's head dim too; the bias broadcastable
/// to [B, heads_q, seq_q, seq_kv]) and options (dropout_p > 0 and return_debug_mask are
/// NotSupported: inference only). Fills *p (out/logsumexp left null: the op allocates them
/// with *layout's shapes and calls set_attention_outputs) and *layout.
[[nodiscard]] Error check_attention(DeviceType device_type, AttentionOp op, AtenTensorHandle query,
                                    AtenTensorHandle key, AtenTensorHandle value, const AttentionOptions& options,
                                    AtenTensorHandle* ret0, AttentionProblem* p, AttentionLayout* layout);

/// Points p at the allocated output and logsumexp (lse may be null: not written). The
/// logsumexp is written only when it has room for seq_q entries per row (efficient with
/// compute_log_sumexp = false returns a [B, H, 0] one).
void set_attention_outputs(SlimTensor* out, SlimTensor* lse, AttentionProblem* p) noexcept;

/// The strides torch.empty_like gives a tensor like (sizes, strides) (preserve_format) as
/// PyTorch's meta functions compute them (torch._refs.empty_like): dense strides, ordered
/// like the given ones (contiguous or channels-last when the input is).
[[nodiscard]] std::vector<int64_t> empty_like_strides(const std::vector<int64_t>& sizes,
                                                      const std::vector<int64_t>& strides);

/// A zero-filled CPU int64 tensor of these sizes: the philox seed/offset placeholders
/// PyTorch's ops return when there is no dropout.
[[nodiscard]] Error new_rng_placeholder(const std::vector<int64_t>& sizes, std::unique_ptr<SlimTensor>* owner);

}  // namespace slimcuda::ops
