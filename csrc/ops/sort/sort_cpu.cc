// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/sort_cpu.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/sort/order_key.h"

namespace slimcuda::ops {

Error sort_cpu(const SortProblem& p, SlimTensor& values, SlimTensor& indices) {
  if (p.rows == 0 || p.k == 0) return Error::Ok;
  const int es = static_cast<int>(p.self->element_size());
  const int dtype = static_cast<int>(p.dtype);
  const char* in = static_cast<const char*>(p.self->data_ptr());
  char* out = static_cast<char*>(values.data_ptr());
  auto* idx = static_cast<int64_t*>(indices.data_ptr());
  std::vector<std::pair<uint64_t, int64_t>> row(static_cast<size_t>(p.len));
  for (int64_t r = 0; r < p.rows; ++r) {
    int64_t in_at = 0, out_at = 0;
    row_start(p.layout, r, &in_at, &out_at);
    for (int64_t i = 0; i < p.len; ++i) {
      row[i] = {directed_key(in + (in_at + i * p.layout.in_step) * es, dtype, es, p.descending), i};
    }
    // Stable by key: ties keep their input order.
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int64_t j = 0; j < p.k; ++j) {
      const int64_t src = row[j].second;
      std::memcpy(out + (out_at + j * p.layout.out_step) * es, in + (in_at + src * p.layout.in_step) * es, es);
      idx[out_at + j * p.layout.out_step] = src;
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
