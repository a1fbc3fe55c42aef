// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA convolution on cuDNN: the legacy descriptor API (this file's .cc) or the
// frontend's graph API (convolution_cudnn.h), chosen by SLIMCUDA_CONV (convolution_path()).

#include "csrc/cuda/stream_context.h"
#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Enqueues a checked ConvProblem into `out` (shaped p.out_sizes) on ctx's stream:
/// forward, or backward-data for a transposed convolution; groups; input and output in the
/// layout their strides give (NCHW/NCDHW or channels-last), weight packed (NCHW, or NHWC
/// when its strides are channels-last; else a contiguous copy); 1-D as 2-D with H = 1;
/// bias added after (cudnnAddTensor). float32 with TF32 allowed (PyTorch's cuDNN default
/// allow_tf32 = True), float16/bfloat16 with tensor-op math. The algorithm comes from
/// cuDNN's heuristics (no benchmarking, no trial allocations), cached per thread and shape;
/// workspace from the caching allocator. SLIMCUDA_CONV=frontend|auto sends the call to
/// convolution_cudnn first (same operand preparation; auto falls back here on NotSupported,
/// frontend fails with the frontend's reason); legacy (the default) never does.
[[nodiscard]] Error convolution_cuda(const ConvProblem& p, const SlimTensor& out, const StreamContext& ctx);

}  // namespace slimcuda::ops
