// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/searchsorted_cuda.h"

#include "csrc/ops/sort/searchsorted_kernel.h"

namespace slimcuda::ops {

Error searchsorted_cuda(const SearchProblem& p, SlimTensor& out, const StreamContext& ctx) {
  SearchLaunch s;
  s.args = p.args;
  s.args.seq = static_cast<const char*>(p.seq->data_ptr());
  if (p.sorter != nullptr) s.args.sorter = static_cast<const int64_t*>(p.sorter->data_ptr());
  if (p.self != nullptr) {
    s.in = p.self->data_ptr();
    s.in_dtype = static_cast<int>(p.self->dtype());
    s.in_es = static_cast<int>(p.self->element_size());
    s.in_walk = p.in_walk;
  }
  s.scalar = p.scalar;
  s.n = p.numel;
  s.out = out.data_ptr();
  s.out_int32 = p.out_int32;
  return launch_searchsorted(s, ctx.stream());
}

}  // namespace slimcuda::ops
