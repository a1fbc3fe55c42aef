// SPDX-License-Identifier: Apache-2.0
#pragma once

// Fused scaled-dot-product attention on cuDNN (the cuDNN frontend's graph API, SDPA node),
// for float16 and bfloat16: the fast path under the attention shims, which fall back to
// slimcuda's own kernel wherever this returns NotSupported.
//
// Threading: graphs (built plans) are cached per thread, keyed by everything that shapes
// them (sizes, strides, dtype, causal, scale, bias layout, logsumexp layout, device); the
// cuDNN handle is this thread's for the device (library_handles.h), bound to the call's
// stream at every call. Nothing here is shared between threads except libcudnn itself.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/attention/attention_problem.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Which attention implementation the shims use: SLIMCUDA_ATTENTION=kernel|cudnn|auto
/// (csrc/config; read at each call). Auto (the default): cuDNN where it serves the problem,
/// else slimcuda's kernel. Kernel: never cuDNN. Cudnn: cuDNN or an error (the shims turn
/// NotSupported into a failure carrying attention_cudnn_unsupported_reason()), for
/// comparison runs that must measure cuDNN and nothing else. A bad value in the environment
/// is Auto, logged once.
enum class AttentionPath : int8_t { Auto, Kernel, Cudnn };
[[nodiscard]] AttentionPath attention_path_override() noexcept;

/// Enqueues a checked problem on ctx's stream (no synchronization, no cudaMalloc: the
/// workspace and any temporary come from the caching device allocator on that stream). The
/// caller has made p.device current (the shims' device guard) and checked p (shapes,
/// devices, dtypes: attention_problem.h); ctx works on p.device.
///
/// Returns:
///  - Ok: out (and logsumexp, natural log, when requested) is being written.
///  - NotSupported when cuDNN cannot serve this problem: float32; libcudnn missing or too
///    old; the frontend's or cuDNN's support checks reject it (head dims, strides, masks,
///    architecture); no engine builds; operand pointers not 16-byte aligned. The last-error
///    message is then left exactly as it was before the call (the caller falls back
///    silently); the reason is attention_cudnn_unsupported_reason(). A rejected problem's
///    key is remembered, so asking again costs a hash lookup.
///  - Any other code (with the last-error message set): a real failure, e.g. Internal when
///    cuDNN's execution fails (its message included), MemoryAllocationFailed for the
///    workspace.
/// A boolean mask (true = attend) is turned into an additive bias (0 / -inf) in a
/// temporary first, as is a bias broadcast along the query dimension (cuDNN reads the bias
/// with full [seq_q, seq_kv] rows).
[[nodiscard]] Error attention_cudnn(const AttentionProblem& p, const StreamContext& ctx) noexcept;

/// Why this thread's last attention_cudnn call returned NotSupported ("" after any other
/// result). Valid until this thread's next attention_cudnn call.
[[nodiscard]] const char* attention_cudnn_unsupported_reason() noexcept;

/// This thread's counters, for tests and benchmarks.
struct AttentionCudnnStats {
  uint64_t graphs_built = 0;   ///< graphs built and cached (a cache miss that succeeded)
  uint64_t rejected = 0;       ///< keys found unsupported (built or checked once each)
  uint64_t executions = 0;     ///< calls that enqueued work
  uint64_t cached_graphs = 0;  ///< graphs in this thread's cache now
};
[[nodiscard]] AttentionCudnnStats attention_cudnn_stats() noexcept;

}  // namespace slimcuda::ops
