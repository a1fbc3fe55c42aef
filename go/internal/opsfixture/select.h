// SPDX-License-Identifier: Apache-2.0
// select.h: the cgo side of the data-dependent selection shims (nonzero, nonzero_static,
// masked_select, index_Tensor) for package opsfixture.
#ifndef SLIMCUDA_GO_OPSFIXTURE_SELECT_H_
#define SLIMCUDA_GO_OPSFIXTURE_SELECT_H_

#include "ops.h"

enum { OF_NONZERO = 0, OF_NONZERO_STATIC = 1, OF_MASKED_SELECT = 2, OF_INDEX = 3 };

/* One selection shim call. index: `handles` holds n entries, NULL for None, each passed as a
 * pointer to its entry (NULL for None), as generated code passes a list of optional tensors;
 * null_list passes the list itself as NULL. null_ret passes ret0 as NULL. */
static inline of_result of_select(int fn, int cuda, AtenTensorHandle self, AtenTensorHandle mask, int64_t size,
                                  int64_t fill, const AtenTensorHandle* handles, int64_t n, int null_list, int null_ret,
                                  AtenTensorHandle* ret0) {
  AtenTensorHandle* r = null_ret ? NULL : ret0;
  const AtenTensorHandle* list[16];
  int32_t c = -1;
  switch (fn) {
    case OF_NONZERO:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(self, r) : SLIMCUDA_SHIM(aoti_torch_cpu_nonzero)(self, r);
      break;
    case OF_NONZERO_STATIC:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(self, size, fill, r)
               : SLIMCUDA_SHIM(aoti_torch_cpu_nonzero_static)(self, size, fill, r);
      break;
    case OF_MASKED_SELECT:
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_masked_select)(self, mask, r)
               : SLIMCUDA_SHIM(aoti_torch_cpu_masked_select)(self, mask, r);
      break;
    case OF_INDEX:
      if (n > 16) return of_wrap(-1);
      for (int64_t i = 0; i < n; ++i) list[i] = handles[i] != NULL ? &handles[i] : NULL;
      c = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(self, null_list ? NULL : list, n, r)
               : SLIMCUDA_SHIM(aoti_torch_cpu_index_Tensor)(self, null_list ? NULL : list, n, r);
      break;
  }
  return of_wrap(c);
}

#endif
