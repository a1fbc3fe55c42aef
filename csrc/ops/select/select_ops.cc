// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/select/select_ops.h"

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/select/select_args.h"
#include "csrc/ops/select/select_cpu.h"
#include "csrc/ops/select/select_cuda.h"

namespace slimcuda::ops {

Error unique(const char* op, const SlimTensor& self, bool consecutive, bool return_inverse, bool return_counts,
             const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "%s: null output pointer", op);
  UniqueProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_unique(op, self, consecutive, return_inverse, return_counts, &p));
  if (!self.device().is_cuda()) return unique_cpu(p, out);
  StreamContext on = ctx;
  SLIMCUDA_OP_TRY(ctx.on_device(p.device, &on));
  return unique_cuda(p, on, out);
}

Error unique_dim(const char* op, const SlimTensor& self, int64_t dim, bool consecutive, bool return_inverse,
                 bool return_counts, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]) {
  SLIMCUDA_OP_CHECK(out != nullptr, Error::InvalidArgument, "%s: null output pointer", op);
  UniqueDimProblem p;
  SLIMCUDA_RETURN_IF_ERROR(check_unique_dim(op, self, dim, consecutive, return_inverse, return_counts, &p));
  if (!self.device().is_cuda()) return unique_dim_cpu(p, out);
  StreamContext on = ctx;
  SLIMCUDA_OP_TRY(ctx.on_device(p.device, &on));
  return unique_dim_cuda(p, on, out);
}

}  // namespace slimcuda::ops
