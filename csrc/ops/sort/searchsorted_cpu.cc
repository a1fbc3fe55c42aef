// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/sort/searchsorted_cpu.h"

#include <type_traits>

#include "csrc/ops/sort/bounds.h"
#include "csrc/ops/sort/histc_edges.h"

namespace slimcuda::ops {
namespace {

// The value of element i (or the scalar) in the comparison's type T.
template <typename T>
T value_at(const SearchProblem& p, int64_t i) {
  const SearchArgs& a = p.args;
  if (p.self == nullptr) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(p.scalar);  // not reached: a scalar compares as floating
    } else {
      return round_as(p.scalar, a.common);
    }
  }
  const char* base = static_cast<const char*>(p.self->data_ptr());
  const char* at = base + walk_offset(p.in_walk, i) * static_cast<int64_t>(p.self->element_size());
  const int dtype = static_cast<int>(p.self->dtype());
  if constexpr (std::is_integral_v<T>) {
    return convert::load(at, dtype).i;
  } else {
    return as_common_float(at, dtype, a.common);
  }
}

template <typename T>
void search_all(const SearchProblem& p, SlimTensor& out) {
  for (int64_t i = 0; i < p.numel; ++i) {
    const int64_t row = p.args.seq_one_row ? 0 : i / p.args.in_row_len;
    const int64_t pos = search_row<T>(p.args, row, value_at<T>(p, i));
    if (p.out_int32) {
      static_cast<int32_t*>(out.data_ptr())[i] = static_cast<int32_t>(pos);
    } else {
      static_cast<int64_t*>(out.data_ptr())[i] = pos;
    }
  }
}

}  // namespace

Error searchsorted_cpu(const SearchProblem& p, SlimTensor& out) {
  SearchProblem q = p;
  q.args.seq = static_cast<const char*>(p.seq->data_ptr());
  if (p.sorter != nullptr) q.args.sorter = static_cast<const int64_t*>(p.sorter->data_ptr());
  if (q.args.common_floating) {
    search_all<double>(q, out);
  } else {
    search_all<int64_t>(q, out);
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
