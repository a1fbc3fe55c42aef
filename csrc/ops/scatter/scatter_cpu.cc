// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/scatter/scatter_cpu.h"

#include <cstring>
#include <vector>

#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/copy.h"

namespace slimcuda::ops {

Error scatter_cpu(const ScatterProblem& p) {
  const ScatterLayout& l = p.layout;
  const void* index = p.index->data_ptr();
  for (int64_t e = 0; e < l.numel; ++e) {
    int64_t ix = 0, s = 0, o = 0, c = 0;
    scatter_offsets(l, e, &ix, &s, &o, &c);
    const int64_t v = read_index(index, l.index_64, ix);
    SLIMCUDA_OP_CHECK(v >= 0 && v < l.dim_size, Error::InvalidArgument,
                      "%s: index %lld is out of bounds for dimension %d with size %lld",
                      p.reduce == ScatterReduce::None ? "scatter" : "scatter_reduce", static_cast<long long>(v), l.dim,
                      static_cast<long long>(l.dim_size));
  }
  if (p.copy_self) SLIMCUDA_OP_TRY(copy_tensor(*p.out, *p.self, StreamContext::unselected(-1)));
  if (l.numel == 0) return Error::Ok;

  const int dt = static_cast<int>(p.dtype);
  const int64_t es = static_cast<int64_t>(p.out->element_size());
  char* out = static_cast<char*>(p.out->data_ptr());
  const char* src = p.src != nullptr ? static_cast<const char*>(p.src->data_ptr()) : nullptr;
  const char* value = reinterpret_cast<const char*>(p.value);
  const bool reduce = p.reduce != ScatterReduce::None;
  const bool mean = p.reduce == ScatterReduce::Mean;
  std::vector<int64_t> counts(mean ? static_cast<size_t>(p.out->numel()) : 0, 0);
  if (reduce && !p.include_self) {
    for (int64_t e = 0; e < l.numel; ++e) {
      int64_t ix = 0, s = 0, o = 0, c = 0;
      scatter_offsets(l, e, &ix, &s, &o, &c);
      const int64_t v = read_index(index, l.index_64, ix);
      std::memcpy(out + (o + v * l.dim_stride) * es, p.identity, static_cast<size_t>(es));
    }
  }
  for (int64_t e = 0; e < l.numel; ++e) {
    int64_t ix = 0, s = 0, o = 0, c = 0;
    scatter_offsets(l, e, &ix, &s, &o, &c);
    const int64_t v = read_index(index, l.index_64, ix);
    char* to = out + (o + v * l.dim_stride) * es;
    const char* from = src != nullptr ? src + s * es : value;
    if (!reduce) {
      std::memcpy(to, from, static_cast<size_t>(es));
      continue;
    }
    convert::store(to, dt, combine(p.reduce, convert::load(to, dt), convert::load(from, dt)));
    if (mean) ++counts[static_cast<size_t>(c + v * l.count_step)];
  }
  if (mean) {
    const SlimTensor& t = *p.out;
    const int rank = static_cast<int>(t.dim());
    for (int64_t j = 0; j < t.numel(); ++j) {
      const int64_t n = counts[static_cast<size_t>(j)];
      if (n == 0) continue;
      char* at = out + strided_offset(rank, t.sizes().data(), t.strides().data(), j) * es;
      convert::store(at, dt, mean_of(convert::load(at, dt), n + (p.include_self ? 1 : 0)));
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
