// SPDX-License-Identifier: Apache-2.0
// copy_tensor on the host: an odometer over the indices (no division per element).
#include "csrc/tensor/copy_host.h"

#include "csrc/tensor/convert.h"

namespace slimcuda {

void host_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& p,
               int64_t numel) noexcept {
  int64_t idx[kMaxDims] = {0};
  int64_t d_off = 0, s_off = 0;
  for (int64_t n = 0; n < numel; ++n) {
    convert::copy_element(dst + d_off * dst_es, dst_t, src + s_off * src_es, src_t, dst_es);
    for (int d = p.ndim - 1; d >= 0; --d) {
      if (++idx[d] < p.sizes[d]) {
        d_off += p.dst_strides[d];
        s_off += p.src_strides[d];
        break;
      }
      d_off -= (p.sizes[d] - 1) * p.dst_strides[d];
      s_off -= (p.sizes[d] - 1) * p.src_strides[d];
      idx[d] = 0;
    }
  }
}

}  // namespace slimcuda
