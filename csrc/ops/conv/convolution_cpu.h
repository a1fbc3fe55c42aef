// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CPU convolution (forward and transposed, 1-D/2-D/3-D, groups, bias) on OpenBLAS's
// sgemm (forward: im2col; transposed: col2im), and the reference loops it is tested against.

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {

/// Computes a checked ConvProblem into `out` (shaped p.out_sizes, any strides). A forward
/// convolution: per image and group, the input's patches unfolded into columns (float; in
/// blocks of output positions, so the buffer stays bounded) and multiplied by the group's
/// weights with cblas_sgemm, bias added, one rounding at the store (float16/bfloat16
/// accumulate in float, as ATen's CPU path). A transposed convolution: per image and group,
/// every input position times every (output channel, kernel offset) by one sgemm, each
/// product added where its offset lands in the output. Sizes past BLAS's 32-bit ones run
/// the reference. May throw std::bad_alloc.
[[nodiscard]] Error convolution_cpu(const ConvProblem& p, const SlimTensor& out);

/// The reference: a direct loop accumulating in double, bias added, one rounding at the
/// store. Slow; the tests compare convolution_cpu with it.
[[nodiscard]] Error convolution_cpu_reference(const ConvProblem& p, const SlimTensor& out);

/// Strides of a [N, C, *spatial] tensor as [N, C, D, H, W] (missing leading spatial
/// dimensions get stride 0: their only index is 0).
void conv_strides_5d(const SlimTensor& t, int spatial, int64_t s[5]);

}  // namespace slimcuda::ops
