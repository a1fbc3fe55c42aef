// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/sort_cuda.h"

#include "csrc/memory/device_memory.h"
#include "csrc/ops/sort/sort_kernels.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {

Error sort_cuda(const SortProblem& p, SlimTensor& values, SlimTensor& indices, const StreamContext& ctx) {
  SortLaunch s;
  s.in = p.self->data_ptr();
  s.values = values.data_ptr();
  s.indices = static_cast<int64_t*>(indices.data_ptr());
  s.dtype = static_cast<int>(p.dtype);
  s.es = static_cast<int>(p.self->element_size());
  s.rows = p.rows, s.len = p.len, s.k = p.k;
  s.descending = p.descending;
  s.layout = p.layout;
  size_t bytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(sort_scratch_bytes(s, &bytes));
  void* scratch = nullptr;
  if (bytes > 0) {
    auto m = device_memory::allocate(bytes, 0, ctx);
    if (!m.ok()) return set_last_error(m.error(), "sort: no %zu bytes of scratch: %s", bytes, last_error_message());
    scratch = m.value();
  }
  const Error e = launch_sort(s, scratch, bytes, ctx.stream());
  // Stream-ordered: the block is reused only by work queued after the sort.
  if (scratch != nullptr) (void)device_memory::free(scratch, ctx.device());
  return e;
}

}  // namespace slimcuda::ops
