// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/histc_cpu.h"

#include <algorithm>
#include <vector>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/sort/histc_edges.h"

namespace slimcuda::ops {

Error histc_cpu(const HistcProblem& p, SlimTensor& hist) {
  const int dtype = static_cast<int>(p.dtype);
  const int es = static_cast<int>(p.self->element_size());
  const char* in = static_cast<const char*>(p.self->data_ptr());
  const int64_t n = p.self->numel();
  double lo = p.lo, hi = p.hi;
  if (p.from_data) {  // aminmax: a NaN anywhere makes both NaN
    lo = hi = convert::load(in + walk_offset(p.walk, 0) * es, dtype).f;
    for (int64_t i = 1; i < n; ++i) {
      const double v = convert::load(in + walk_offset(p.walk, i) * es, dtype).f;
      if (v != v || lo != lo) {
        lo = hi = v != v ? v : lo;
        continue;
      }
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  const bool finite = histc_range(&lo, &hi);
  SLIMCUDA_OP_CHECK(finite, Error::InvalidArgument, "histc: range of [%g, %g] is not finite", lo, hi);
  std::vector<double> edges(static_cast<size_t>(p.bins + 1));
  for (int64_t i = 0; i <= p.bins; ++i) edges[i] = histc_edge(lo, hi, p.bins, i, dtype);
  std::vector<int64_t> counts(static_cast<size_t>(p.bins), 0);
  for (int64_t i = 0; i < n; ++i) {
    const double v = convert::load(in + walk_offset(p.walk, i) * es, dtype).f;
    if (!(v >= edges.front() && v <= edges.back())) continue;  // outside, or NaN
    int64_t b = std::upper_bound(edges.begin(), edges.end(), v) - edges.begin() - 1;
    if (b >= p.bins) b = p.bins - 1;  // max itself: the last bin
    ++counts[b];
  }
  char* out = static_cast<char*>(hist.data_ptr());
  for (int64_t b = 0; b < p.bins; ++b) {
    convert::store(out + b * es, dtype, convert::Wide{static_cast<double>(counts[b]), counts[b], true});
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
