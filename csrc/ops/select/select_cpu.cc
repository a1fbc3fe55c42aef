// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/select/select_cpu.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "csrc/core/scalar_type.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/sort/order_key.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

Error new_cpu(ScalarType dtype, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
              std::unique_ptr<SlimTensor>* out) {
  return new_tensor(dtype, DeviceType::CPU, 0, sizes, strides, StreamContext::unselected(-1), out);
}

// The linear indices (row-major over the scan's shape) of its nonzero elements.
std::vector<int64_t> selected(const NonzeroScan& s) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < s.n; ++i) {
    if (element_nonzero(s.data + walk_offset(s.walk, i) * s.es, s.es, s.floating)) out.push_back(i);
  }
  return out;
}

}  // namespace

Error nonzero_cpu(const NonzeroProblem& p, std::unique_ptr<SlimTensor>* out) {
  const std::vector<int64_t> picked = selected(p.scan);
  const int64_t count = static_cast<int64_t>(picked.size());
  const int64_t rows = p.size >= 0 ? p.size : count;
  std::vector<int64_t> sizes, strides;
  nonzero_layout(DeviceType::CPU, p, rows, &sizes, &strides);
  SLIMCUDA_OP_TRY(new_cpu(ScalarType::Long, sizes, strides, out));
  const CoordsWrite w = coords_write(p, rows, strides, static_cast<int64_t*>((*out)->data_ptr()));
  for (int64_t k = 0; k < rows; ++k) {
    if (k < count) {
      write_coords(w, k, picked[static_cast<size_t>(k)]);
    } else {
      write_fill(w, k);
    }
  }
  return Error::Ok;
}

Error masked_select_cpu(const MaskedSelectProblem& p, std::unique_ptr<SlimTensor>* out) {
  const std::vector<int64_t> picked = selected(p.mask);
  const int64_t count = static_cast<int64_t>(picked.size());
  SLIMCUDA_OP_TRY(new_cpu(p.self->dtype(), {count}, {1}, out));
  const char* in = static_cast<const char*>(p.self->data_ptr());
  char* o = static_cast<char*>((*out)->data_ptr());
  for (int64_t k = 0; k < count; ++k) {
    copy_element(o + k * p.es, in + walk_offset(p.self_walk, picked[static_cast<size_t>(k)]) * p.es, p.es);
  }
  return Error::Ok;
}

Error index_cpu(const IndexProblem& p, std::unique_ptr<SlimTensor>* out) {
  // The masks' nonzero coordinates, column-major [count, ndim] as nonzero gives them.
  std::vector<std::vector<int64_t>> coords(p.masks.size());
  std::vector<int64_t> counts;
  std::vector<const int64_t*> at;
  for (size_t m = 0; m < p.masks.size(); ++m) {
    const std::vector<int64_t> picked = selected(p.masks[m]);
    const int64_t count = static_cast<int64_t>(picked.size());
    CoordsWrite w;
    w.ndim = p.masks[m].walk.ndim;
    for (int d = 0; d < w.ndim; ++d) w.sizes[d] = p.masks[m].walk.sizes[d];
    coords[m].assign(static_cast<size_t>(std::max<int64_t>(count * w.ndim, 1)), 0);
    w.rows = count, w.row_stride = 1, w.col_stride = count, w.out = coords[m].data();
    for (int64_t k = 0; k < count; ++k) write_coords(w, k, picked[static_cast<size_t>(k)]);
    counts.push_back(count);
    at.push_back(coords[m].data());
  }
  IndexGather g;
  std::vector<int64_t> sizes, strides;
  SLIMCUDA_RETURN_IF_ERROR(index_layout(p, counts, at, &g, &sizes, &strides));
  SLIMCUDA_OP_TRY(new_cpu(p.self->dtype(), sizes, strides, out));
  g.out = static_cast<char*>((*out)->data_ptr());
  for (int64_t e = 0; e < g.numel; ++e) {
    int64_t src = 0, dst = 0, bad_value = 0;
    int bad_dim = 0;
    if (!index_gather_at(g, e, &src, &dst, &bad_dim, &bad_value)) {
      out->reset();
      int ordinal = 0;  // ATen numbers the indexed dimensions only
      for (int d = 0; d < bad_dim; ++d) ordinal += g.index[d] != nullptr ? 1 : 0;
      SLIMCUDA_OP_CHECK(false, Error::InvalidArgument,
                        "index: index %lld is out of bounds for dimension %d with size %lld",
                        static_cast<long long>(bad_value), ordinal, static_cast<long long>(g.self_sizes[bad_dim]));
    }
    copy_element(g.out + dst * g.es, g.self + src * g.es, g.es);
  }
  return Error::Ok;
}

Error unique_cpu(const UniqueProblem& p, std::unique_ptr<SlimTensor> out[3]) {
  const char* in = static_cast<const char*>(p.self->data_ptr());
  const size_t n = static_cast<size_t>(p.n);
  std::vector<uint64_t> keys(n);
  std::vector<int64_t> offsets(n);
  for (size_t i = 0; i < n; ++i) {
    offsets[i] = walk_offset(p.walk, static_cast<int64_t>(i));
    keys[i] = order_key(in + offsets[i] * p.es, p.dtype);
  }
  // Positions in value order (stable: equal values keep input order; NaNs last, each its own).
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!p.consecutive) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)]; });
  }
  std::vector<int64_t> heads;  // positions in `order` where a new value starts
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = keys[static_cast<size_t>(order[i])];
    if (i == 0 || k != keys[static_cast<size_t>(order[i - 1])] || key_is_nan(k, p.es, p.floating)) {
      heads.push_back(static_cast<int64_t>(i));
    }
  }
  const int64_t u = static_cast<int64_t>(heads.size());
  SLIMCUDA_OP_TRY(new_cpu(p.self->dtype(), {u}, {1}, &out[0]));
  const std::vector<int64_t> inv_sizes = p.return_inverse ? p.self->sizes() : std::vector<int64_t>{0};
  SLIMCUDA_OP_TRY(new_cpu(ScalarType::Long, inv_sizes, contiguous_strides(inv_sizes), &out[1]));
  SLIMCUDA_OP_TRY(new_cpu(ScalarType::Long, {p.return_counts ? u : 0}, {1}, &out[2]));
  char* values = static_cast<char*>(out[0]->data_ptr());
  int64_t* inverse = static_cast<int64_t*>(out[1]->data_ptr());
  int64_t* counts = static_cast<int64_t*>(out[2]->data_ptr());
  for (int64_t g = 0; g < u; ++g) {
    const int64_t first = heads[static_cast<size_t>(g)];
    const int64_t end = g + 1 < u ? heads[static_cast<size_t>(g + 1)] : p.n;
    copy_element(values + g * p.es, in + offsets[static_cast<size_t>(order[static_cast<size_t>(first)])] * p.es, p.es);
    if (p.return_counts) counts[g] = end - first;
    if (p.return_inverse) {
      for (int64_t i = first; i < end; ++i) inverse[order[static_cast<size_t>(i)]] = g;
    }
  }
  return Error::Ok;
}

Error unique_dim_cpu(const UniqueDimProblem& p, std::unique_ptr<SlimTensor> out[3]) {
  const SliceScan& s = p.scan;
  std::vector<int64_t> order(static_cast<size_t>(s.slices));
  std::iota(order.begin(), order.end(), 0);
  if (!s.consecutive) {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slice_less(s, a, b); });
  }
  std::vector<int64_t> heads;  // positions in `order` where a new slice starts
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || !slice_equal(s, order[i - 1], order[i])) heads.push_back(static_cast<int64_t>(i));
  }
  const int64_t u = static_cast<int64_t>(heads.size());
  std::vector<int64_t> sizes, strides;
  Walk rest;
  unique_dim_layout(p, u, &sizes, &strides, &rest);
  SLIMCUDA_OP_TRY(new_cpu(p.self->dtype(), sizes, strides, &out[0]));
  SLIMCUDA_OP_TRY(new_cpu(ScalarType::Long, {s.slices}, {1}, &out[1]));
  SLIMCUDA_OP_TRY(new_cpu(ScalarType::Long, {u}, {1}, &out[2]));
  char* values = static_cast<char*>(out[0]->data_ptr());
  auto* inverse = static_cast<int64_t*>(out[1]->data_ptr());
  auto* counts = static_cast<int64_t*>(out[2]->data_ptr());
  const int64_t out_step = strides[static_cast<size_t>(p.dim)];
  for (int64_t g = 0; g < u; ++g) {
    const int64_t first = heads[static_cast<size_t>(g)];
    const int64_t end = g + 1 < u ? heads[static_cast<size_t>(g + 1)] : s.slices;
    const int64_t from = order[static_cast<size_t>(first)];
    for (int64_t k = 0; k < s.slice_len; ++k) {
      copy_element(values + (g * out_step + walk_offset(rest, k)) * s.es,
                   s.in + (from * s.slice_stride + walk_offset(s.rest, k)) * s.es, s.es);
    }
    counts[g] = end - first;
    for (int64_t i = first; i < end; ++i) inverse[order[static_cast<size_t>(i)]] = g;
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
