// SPDX-License-Identifier: Apache-2.0
#include <cstring>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/scatter/scatter_cpu.h"
#include "csrc/tensor/copy.h"

namespace slimcuda::ops {

Error index_put_cpu(const IndexPutProblem& p, SlimTensor& out) {
  const IndexPutLayout& l = p.layout;
  // Every index value in range before anything is written (ATen checks them all too, unless
  // the result is empty).
  if (l.numel > 0) {
    for (const IndexOperand& o : p.indices) {
      const int64_t size = p.self->sizes()[static_cast<size_t>(o.self_dim)];
      int64_t n = 1;
      for (int64_t s : o.sizes) n *= s;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = strided_offset(static_cast<int>(o.sizes.size()), o.sizes.data(), o.strides.data(), j);
        const int64_t v = read_index(o.data, o.is64, at);
        SLIMCUDA_OP_CHECK(v >= -size && v < size, Error::InvalidArgument,
                          "index_put: index %lld is out of bounds for dimension %d with size %lld",
                          static_cast<long long>(v), o.self_dim, static_cast<long long>(size));
      }
    }
  }
  SLIMCUDA_OP_TRY(copy_tensor(out, *p.self, StreamContext::unselected(-1)));
  const int dt = static_cast<int>(p.dtype);
  const int64_t es = static_cast<int64_t>(out.element_size());
  char* to = static_cast<char*>(out.data_ptr());
  const char* values = static_cast<const char*>(p.values->data_ptr());
  for (int64_t e = 0; e < l.numel; ++e) {
    int64_t o = 0, v = 0;
    if (!index_put_target(l, e, &o, &v)) continue;
    if (p.accumulate) {
      convert::store(to + o * es, dt,
                     combine(ScatterReduce::Sum, convert::load(to + o * es, dt), convert::load(values + v * es, dt)));
    } else {
      std::memcpy(to + o * es, values + v * es, static_cast<size_t>(es));
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
