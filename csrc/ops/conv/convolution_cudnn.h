// SPDX-License-Identifier: Apache-2.0
#pragma once

// Convolution on the cuDNN frontend's graph API (conv_fprop, or conv_dgrad for a transposed
// convolution), with the bias fused where cuDNN offers an engine for it: the per-call cost
// is a cache lookup, the variant pack, the workspace and one cudnnBackendExecute, where the
// legacy API (convolution_cuda.cc's cudnnConvolutionForward) re-derives its engine in
// cuDNN 9 on every call.
//
// Threading: graphs (built plans) are cached per thread, keyed by everything that shapes
// them (sizes and strides of input, weight and output, stride, padding, dilation, groups,
// transposed, dtype, bias, device); the cuDNN handle is this thread's for the device
// (vendor_handles.h), bound to the call's stream at every call.

#include <cstdint>

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/common/op_args.h"
#include "slimcuda/error.h"

namespace slimcuda::ops {

/// Which convolution implementation aoti_torch_cuda_convolution uses:
/// SLIMCUDA_CONV=legacy|frontend|auto (csrc/config; read at each call).
///  - Auto (the default): the graph API first, the
///    legacy API where it declines (NotSupported). On the H200 (2026-12-01,
///    bench/conv_benchmark) the graph API costs 3–19 × less host time per call than the
///    legacy API for the same kernels, and serves every fixture case.
///  - Frontend: the graph API or an error: a convolution it declines fails with the reason
///    (NotSupported), for runs that must measure or test the frontend and nothing else.
///  - Legacy: cuDNN's legacy API only (SLIMCUDA_CUDNN_BENCHMARK applies to it).
/// A bad value in the environment is Auto, logged once.
enum class ConvPath : int8_t { Legacy, Frontend, Auto };
[[nodiscard]] ConvPath convolution_path() noexcept;

/// Overrides SLIMCUDA_CONV for the whole process from now on, as
/// slimcuda_config_set("SLIMCUDA_CONV", ...) does (tests and benchmarks that compare the
/// paths in one process; a convolution already running keeps its path).
void set_convolution_path(ConvPath path) noexcept;

/// Enqueues a checked convolution into `out` (p.out_sizes / p.out_strides) on ctx's stream,
/// with `weight` (packed NCHW or channels-last, possibly a copy of p.weight) and `bias`
/// (null, or 1-D with stride 1 where c_out > 1, possibly a copy of p.bias) standing for p's;
/// the caller has made p.device current and checked out.numel() > 0.
///
/// Returns:
///  - Ok: out is being written (conv, then + bias).
///  - NotSupported when the frontend cannot serve this convolution: libcudnn missing; an
///    operand pointer not 16-byte aligned; the frontend's or cuDNN's checks reject the graph
///    or no engine builds. The last-error message is then left exactly as it was before the
///    call (the caller falls back silently); the reason is
///    convolution_cudnn_unsupported_reason(). A rejected key is remembered.
///  - Any other code (with the last-error message set): a real failure (cuDNN's execution,
///    the workspace allocation, the bias kernel's launch).
[[nodiscard]] Error convolution_cudnn(const ConvProblem& p, const SlimTensor& weight, const SlimTensor* bias,
                                      const SlimTensor& out, const StreamContext& ctx) noexcept;

/// Why this thread's last convolution_cudnn call returned NotSupported ("" after any other
/// result). Valid until this thread's next convolution_cudnn call.
[[nodiscard]] const char* convolution_cudnn_unsupported_reason() noexcept;

/// This thread's counters, for tests and benchmarks.
struct ConvolutionCudnnStats {
  uint64_t graphs_built = 0;   ///< graphs built and cached (a cache miss that succeeded)
  uint64_t unfused_bias = 0;   ///< of those, graphs whose bias is added by slimcuda's kernel
  uint64_t rejected = 0;       ///< keys found unsupported (built once each)
  uint64_t executions = 0;     ///< calls that enqueued work
  uint64_t cached_graphs = 0;  ///< graphs in this thread's cache now
};
[[nodiscard]] ConvolutionCudnnStats convolution_cudnn_stats() noexcept;

}  // namespace slimcuda::ops
