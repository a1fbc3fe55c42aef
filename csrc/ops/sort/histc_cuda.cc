// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/histc_cuda.h"

#include <climits>

#include "csrc/memory/device_memory.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/sort/histc_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {

Error histc_cuda(const HistcProblem& p, SlimTensor& hist, const StreamContext& ctx) {
  const int64_t n = p.self->numel();
  SLIMCUDA_OP_CHECK(n <= INT_MAX && p.bins < INT_MAX, Error::NotSupported,
                    "histc: %lld elements into %lld bins on CUDA (at most %d of each)", static_cast<long long>(n),
                    static_cast<long long>(p.bins), INT_MAX - 1);
  HistcLaunch h;
  h.in = p.self->data_ptr();
  h.dtype = static_cast<int>(p.dtype);
  h.es = static_cast<int>(p.self->element_size());
  h.n = n;
  h.walk = p.walk;
  h.bins = p.bins;
  h.lo = p.lo, h.hi = p.hi;
  h.integral = !is_floating(p.dtype);
  // ATen converts the bounds to the input's type (Scalar::to<int>: toward zero).
  h.int_lo = static_cast<int64_t>(p.lo), h.int_hi = static_cast<int64_t>(p.hi);
  h.from_data = p.from_data;
  h.hist = hist.data_ptr();
  size_t bytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(histc_scratch_bytes(h, &bytes));
  auto m = device_memory::allocate(bytes, 0, ctx);
  if (!m.ok()) return set_last_error(m.error(), "histc: no %zu bytes of scratch: %s", bytes, last_error_message());
  const Error e = launch_histc(h, m.value(), bytes, ctx.stream());
  (void)device_memory::free(m.value(), ctx.device());  // stream-ordered, as sort_cuda's
  return e;
}

}  // namespace slimcuda::ops
