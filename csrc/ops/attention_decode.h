// SPDX-License-Identifier: Apache-2.0
#pragma once

// Decode attention (attention_decode.cu): a few query rows (seq_q <= 4) against a long KV
// cache, split along the keys over many blocks (flash-decoding). cuDNN's SDPA runs such a
// call as one block per head (16 blocks on 132 SMs for a batch-1 decode step); here every
// block reads one chunk of one KV head's keys and values for all the query rows that share
// that head (grouped-query attention), writes a partial max, sum and output per row, and a
// second kernel combines the chunks. The arguments are the own kernel's (attention_kernel.h).

#include <cstddef>
#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention_kernel.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// The most query rows (seq_q) the decode kernel takes.
inline constexpr int64_t kDecodeMaxSeqQ = 4;

/// Whether the decode kernel takes `a`: float16/bfloat16; head_dim == head_dim_v, 64 or
/// 128; 1 <= seq_q <= kDecodeMaxSeqQ; seq_kv >= 1; batch, heads >= 1 (and within the grid's
/// limits); k and v with unit stride along head_dim, 16-byte aligned pointers and the other
/// strides multiples of 8 elements (they are read 16 bytes at a time). q, out, the bias and
/// the logsumexp may have any strides; the bias any dtype the shims accept (T, float32, bool).
[[nodiscard]] bool decode_attention_takes(const AttentionKernelArgs& a) noexcept;

/// How a call is split: `splits` chunks of `chunk` keys per KV head, and the float32
/// workspace the partial results need (0 when splits == 1: the blocks write out directly).
struct DecodeAttentionPlan {
  int64_t splits = 1, chunk = 0;
  size_t workspace_bytes = 0;
};

/// The split for `a` on `device` (sized by its multiprocessor count).
[[nodiscard]] DecodeAttentionPlan plan_decode_attention(const AttentionKernelArgs& a, int device) noexcept;

/// Enqueues the decode attention on `stream` (the current device's): the partial kernel and,
/// when plan.splits > 1, the combining kernel, which reads `workspace` (plan.workspace_bytes,
/// 16-byte aligned, stream-ordered: it may be freed once both are enqueued). No
/// synchronization, no allocation. `a` must satisfy decode_attention_takes (else
/// InvalidArgument). Writes out and, when a.lse is set, the natural-log logsumexp; a row that
/// no key may attend to gets 0 and logsumexp 0, as the own kernel and the CPU reference.
/// Launch failures are Internal with the CUDA error in the message.
[[nodiscard]] Error launch_decode_attention(const AttentionKernelArgs& a, const DecodeAttentionPlan& plan,
                                            void* workspace, cudaStream_t stream, const char* function) noexcept;

/// Whether attention_cuda may take the decode path: SLIMCUDA_DECODE_ATTENTION, read once per
/// process ("0" turns it off), unless set_decode_attention_enabled overrode it.
[[nodiscard]] bool decode_attention_enabled() noexcept;

/// Overrides SLIMCUDA_DECODE_ATTENTION for the rest of the process (tests and benchmarks).
void set_decode_attention_enabled(bool enabled) noexcept;

}  // namespace slimcuda::ops
