// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/embedding/embedding_bag_cpu.h"

#include <cstring>
#include <vector>

#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

// Element i of a 1-D int32/int64 tensor, through its stride.
int64_t index_at(const SlimTensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.data_ptr()) + i * t.strides()[0] * static_cast<int64_t>(t.element_size());
  if (t.dtype() == ScalarType::Long) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

double weight_at(const SlimTensor& w, int64_t row, int64_t col) {
  const int64_t at = row * w.strides()[0] + col * (w.dim() > 1 ? w.strides()[1] : 0);
  const char* base = static_cast<const char*>(w.data_ptr());
  if (w.dtype() == ScalarType::Double) {
    double v;
    std::memcpy(&v, base + at * 8, 8);
    return v;
  }
  return load_element(base, w.dtype(), at);
}

void store_weight(SlimTensor* t, int64_t i, double v) {
  char* base = static_cast<char*>(t->data_ptr());
  if (t->dtype() == ScalarType::Double) {
    std::memcpy(base + i * 8, &v, 8);
  } else {
    store_element(base, t->dtype(), i, v);
  }
}

void store_index(SlimTensor* t, int64_t i, int64_t v) {
  char* base = static_cast<char*>(t->data_ptr());
  if (t->dtype() == ScalarType::Long) {
    std::memcpy(base + i * 8, &v, 8);
  } else {
    const auto v32 = static_cast<int32_t>(v);
    std::memcpy(base + i * 4, &v32, 4);
  }
}

// The data checks ATen's CPU kernel makes before it reads a weight row.
Error check_data(const EmbeddingBagProblem& p) {
  const SlimTensor& offsets = *p.offsets;
  if (p.offsets_len > 0) {
    const int64_t first = index_at(offsets, 0), last = index_at(offsets, p.offsets_len - 1);
    SLIMCUDA_OP_CHECK(first == 0, Error::InvalidArgument,
                      "_embedding_bag: offsets[0] has to be 0 (the first bag starts at index 0), got %lld",
                      static_cast<long long>(first));
    SLIMCUDA_OP_CHECK(last <= p.n, Error::InvalidArgument,
                      "_embedding_bag: offsets[-1] (%lld) can not be greater than the number of indices (%lld)",
                      static_cast<long long>(last), static_cast<long long>(p.n));
    for (int64_t b = 1; b < p.offsets_len; ++b) {
      const int64_t prev = index_at(offsets, b - 1), cur = index_at(offsets, b);
      SLIMCUDA_OP_CHECK(cur >= prev, Error::InvalidArgument,
                        "_embedding_bag: offsets must be non-decreasing; offsets[%lld] = %lld < offsets[%lld] = %lld",
                        static_cast<long long>(b), static_cast<long long>(cur), static_cast<long long>(b - 1),
                        static_cast<long long>(prev));
    }
  }
  for (int64_t i = 0; i < p.n; ++i) {
    const int64_t idx = index_at(*p.indices, i);
    SLIMCUDA_OP_CHECK(idx >= 0 && idx < p.num_weights, Error::InvalidArgument,
                      "_embedding_bag: index %lld of input takes value %lld which is not in the valid range [0, %lld)",
                      static_cast<long long>(i), static_cast<long long>(idx), static_cast<long long>(p.num_weights));
  }
  return Error::Ok;
}

// ATen's CPU fast index path (index_select_add / index_select_scale_add on contiguous rows):
// sum and mean over float32/float16/bfloat16 rows without padding_idx. With
// include_last_offset it sums the last bag up to the last offset, while the bag sizes (and
// mean's divisor) count up to n; in sum mode it also leaves offset2bag empty.
bool is_fast_select(const EmbeddingBagProblem& p) {
  const ScalarType t = p.dtype;
  const bool type_ok = t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16;
  const bool rows_ok = p.dim <= 1 || p.weight->strides()[1] == 1;
  const bool psw_ok = p.per_sample_weights == nullptr || p.n <= 1 || p.per_sample_weights->strides()[0] == 1;
  return p.mode != BagMode::Max && type_ok && rows_ok && psw_ok && p.padding_idx < 0;
}

// One bag's output row, bag size and (max mode) arg-max rows: rows [begin, end) counted,
// those before sum_end reduced.
void reduce_bag(const EmbeddingBagProblem& p, int64_t begin, int64_t end, int64_t sum_end, std::vector<double>* acc,
                std::vector<int64_t>* arg, int64_t* count) {
  acc->assign(static_cast<size_t>(p.dim), 0.0);
  arg->assign(static_cast<size_t>(p.dim), 0);
  int64_t c = 0;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t idx = index_at(*p.indices, i);
    if (idx == p.padding_idx) continue;
    ++c;
    if (i >= sum_end) continue;
    const double scale = p.per_sample_weights != nullptr ? weight_at(*p.per_sample_weights, i, 0) : 1.0;
    for (int64_t d = 0; d < p.dim; ++d) {
      const double v = weight_at(*p.weight, idx, d);
      auto& a = (*acc)[static_cast<size_t>(d)];
      if (p.mode != BagMode::Max) {
        // float accumulation for the 16-bit and 32-bit types, as ATen's CPU kernels.
        a = p.dtype == ScalarType::Double
                ? a + scale * v
                : static_cast<float>(static_cast<float>(a) + static_cast<float>(scale) * static_cast<float>(v));
      } else if (c == 1 || v > a) {  // the first non-padding row, then strictly greater: ties keep the first
        a = v;
        (*arg)[static_cast<size_t>(d)] = idx;
      }
    }
  }
  if (p.mode == BagMode::Mean && c > 0) {
    for (auto& a : *acc) a = p.dtype == ScalarType::Double ? a / c : static_cast<float>(a / c);
  }
  *count = c;
}

}  // namespace

Error embedding_bag_cpu(const EmbeddingBagProblem& p, std::unique_ptr<SlimTensor> out[4]) {
  SLIMCUDA_RETURN_IF_ERROR(check_data(p));
  const bool fast = is_fast_select(p);
  const bool no_offset2bag = fast && p.mode == BagMode::Sum;
  const int64_t b_count = p.num_bags, d = p.dim;
  const auto cpu = StreamContext::unselected(-1);
  const std::vector<int64_t> bag_sizes{b_count};
  const std::vector<int64_t> o2b_sizes{no_offset2bag ? 0 : p.n};
  const std::vector<int64_t> max_sizes =
      p.mode == BagMode::Max ? std::vector<int64_t>{b_count, d} : std::vector<int64_t>{b_count};
  SLIMCUDA_RETURN_IF_ERROR(
      new_tensor(p.dtype, DeviceType::CPU, 0, {b_count, d}, contiguous_strides({b_count, d}), cpu, &out[0]));
  SLIMCUDA_RETURN_IF_ERROR(
      new_tensor(p.index_dtype, DeviceType::CPU, 0, o2b_sizes, contiguous_strides(o2b_sizes), cpu, &out[1]));
  SLIMCUDA_RETURN_IF_ERROR(
      new_tensor(p.index_dtype, DeviceType::CPU, 0, bag_sizes, contiguous_strides(bag_sizes), cpu, &out[2]));
  SLIMCUDA_RETURN_IF_ERROR(
      new_tensor(p.index_dtype, DeviceType::CPU, 0, max_sizes, contiguous_strides(max_sizes), cpu, &out[3]));
  if (!no_offset2bag) {
    for (int64_t i = 0; i < p.n; ++i) store_index(out[1].get(), i, b_count == 0 ? -1 : 0);
  }
  std::vector<double> acc;
  std::vector<int64_t> arg;
  for (int64_t b = 0; b < b_count; ++b) {
    const int64_t begin = index_at(*p.offsets, b);
    const bool last = b + 1 == b_count;
    const int64_t end = last ? p.n : index_at(*p.offsets, b + 1);
    const int64_t sum_end = last && fast && p.include_last_offset ? index_at(*p.offsets, b + 1) : end;
    int64_t count = 0;
    reduce_bag(p, begin, end, sum_end, &acc, &arg, &count);
    for (int64_t k = 0; k < d; ++k) store_weight(out[0].get(), b * d + k, acc[static_cast<size_t>(k)]);
    if (!no_offset2bag) {
      for (int64_t i = begin; i < end; ++i) store_index(out[1].get(), i, b);
    }
    const int64_t size = p.mode == BagMode::Sum ? 0 : count;
    store_index(out[2].get(), b, size);
    if (p.mode == BagMode::Max) {
      for (int64_t k = 0; k < d; ++k) store_index(out[3].get(), b * d + k, arg[static_cast<size_t>(k)]);
    } else {
      store_index(out[3].get(), b, size);
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
