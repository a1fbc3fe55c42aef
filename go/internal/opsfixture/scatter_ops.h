// SPDX-License-Identifier: Apache-2.0
// scatter_ops.h: the cgo side of the scatter family (scatter.go), on top of ops.h.
#ifndef SLIMCUDA_GO_OPSFIXTURE_SCATTER_OPS_H_
#define SLIMCUDA_GO_OPSFIXTURE_SCATTER_OPS_H_

#include "ops.h"

enum { OF_SCATTER_SRC = 0, OF_SCATTER_VALUE = 1, OF_SCATTER_REDUCE = 2 };

/* aoti_torch_<cpu|cuda>_scatter_src_out / _scatter_value_out / _scatter_reduce_two_out. */
static inline of_result of_scatter(int fn, int cuda, AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                   AtenTensorHandle index, AtenTensorHandle src, double value, const char* reduce,
                                   int32_t include_self) {
  int32_t c;
  if (fn == OF_SCATTER_SRC) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_src_out)(out, self, dim, index, src)
             : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(out, self, dim, index, src);
  } else if (fn == OF_SCATTER_VALUE) {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_value_out)(out, self, dim, index, value)
             : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(out, self, dim, index, value);
  } else {
    c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_reduce_two_out)(out, self, dim, index, src, reduce, include_self)
             : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_reduce_two_out)(out, self, dim, index, src, reduce, include_self);
  }
  return of_wrap(c);
}

enum { OF_MAX_INDICES = 16 };

/* aoti_torch_<cpu|cuda>_index_put; handles[i] NULL is None (its pointer passed as NULL, as
 * AOTInductor's code does); the pointers point at a copy here, not at Go memory. */
static inline of_result of_index_put(int cuda, AtenTensorHandle self, const AtenTensorHandle* handles, int64_t n,
                                     AtenTensorHandle values, int32_t accumulate, int no_ret, AtenTensorHandle* ret0) {
  AtenTensorHandle local[OF_MAX_INDICES];
  const AtenTensorHandle* ptrs[OF_MAX_INDICES];
  if (n > OF_MAX_INDICES) n = OF_MAX_INDICES;
  for (int64_t i = 0; i < n; ++i) {
    local[i] = handles[i];
    ptrs[i] = local[i] != NULL ? &local[i] : NULL;
  }
  AtenTensorHandle* r = no_ret ? NULL : ret0;
  return of_wrap(cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_index_put)(self, ptrs, n, values, accumulate, r)
                      : SLIMCUDA_SHIM(aoti_torch_cpu_index_put)(self, ptrs, n, values, accumulate, r));
}

static inline of_result of_masked_scatter(int cuda, AtenTensorHandle self, AtenTensorHandle mask,
                                          AtenTensorHandle source, int no_ret, AtenTensorHandle* ret0) {
  AtenTensorHandle* r = no_ret ? NULL : ret0;
  return of_wrap(cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_masked_scatter)(self, mask, source, r)
                      : SLIMCUDA_SHIM(aoti_torch_cpu_masked_scatter)(self, mask, source, r));
}

#endif
