// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/scan/cumulative_cpu.h"

#include <cstring>
#include <vector>

#include "csrc/core/scalar_type.h"
#include "csrc/ops/common/cpu_elements.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda::ops {
namespace {

template <typename T>
T load_as(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element `index` of `base` (type t) as double; integers exactly up to 2^53.
double load_double(const char* base, ScalarType t, int64_t index) {
  const char* p = base + index * static_cast<int64_t>(element_size(t));
  switch (t) {
    case ScalarType::Double:
      return load_as<double>(p);
    case ScalarType::Byte:
      return load_as<uint8_t>(p);
    case ScalarType::Bool:
      return load_as<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case ScalarType::Char:
      return load_as<int8_t>(p);
    case ScalarType::Short:
      return load_as<int16_t>(p);
    case ScalarType::Int:
      return load_as<int32_t>(p);
    case ScalarType::Long:
      return static_cast<double>(load_as<int64_t>(p));
    default:
      return load_element(base, t, index);  // float32, float16, bfloat16
  }
}

// Element `index` as int64: a floating value truncated toward zero, as a cast in ATen.
int64_t load_integer(const char* base, ScalarType t, int64_t index) {
  if (t == ScalarType::Long) return load_as<int64_t>(base + index * 8);
  return static_cast<int64_t>(load_double(base, t, index));
}

void store(char* base, ScalarType t, int64_t index, double f, int64_t i) {
  char* p = base + index * static_cast<int64_t>(element_size(t));
  switch (t) {
    case ScalarType::Double:
      std::memcpy(p, &f, 8);
      break;
    case ScalarType::Float:
    case ScalarType::Half:
    case ScalarType::BFloat16:
      store_element(base, t, index, f);
      break;
    case ScalarType::Bool:
      *reinterpret_cast<uint8_t*>(p) = i != 0 ? 1 : 0;
      break;
    default: {  // integers: the low bytes, as a narrowing cast
      std::memcpy(p, &i, element_size(t));
      break;
    }
  }
}

}  // namespace

Error cumulative_cpu(ScanOp op, AtenTensorHandle self_h, int64_t dim, const int32_t* dtype,
                     std::unique_ptr<SlimTensor>* out) {
  const char* name = op == ScanOp::Sum ? "cumsum" : "cumprod";
  SLIMCUDA_OP_CHECK(self_h != nullptr, Error::InvalidArgument, "%s: null self", name);
  const SlimTensor& self = *tensor_of(self_h);
  SLIMCUDA_OP_CHECK(self.device().type == DeviceType::CPU, Error::InvalidArgument,
                    "%s: self is not a CPU tensor (a CPU op)", name);
  SLIMCUDA_OP_CHECK(dtype == nullptr || is_supported_scalar_type(*dtype), Error::InvalidArgument,
                    "%s: unknown dtype %d", name, dtype == nullptr ? 0 : *dtype);
  const int64_t rank = self.dim();
  const int64_t wrap = rank == 0 ? 1 : rank;
  SLIMCUDA_OP_CHECK(dim >= -wrap && dim < wrap, Error::InvalidArgument,
                    "%s: dim %lld is out of range for a %lld-d tensor", name, static_cast<long long>(dim),
                    static_cast<long long>(rank));
  if (dim < 0) dim += wrap;
  const ScalarType in_t = self.dtype();
  const ScalarType out_t = dtype != nullptr    ? static_cast<ScalarType>(*dtype)
                           : is_floating(in_t) ? in_t
                                               : ScalarType::Long;
  SLIMCUDA_RETURN_IF_ERROR(new_tensor(out_t, DeviceType::CPU, 0, self.sizes(), contiguous_strides(self.sizes()),
                                      StreamContext::unselected(-1), out));
  const int64_t n = self.numel();
  if (n == 0) return Error::Ok;
  // Rows along dim: `len` elements, outer x inner of them; the input read through its strides.
  const int64_t len = rank == 0 ? 1 : self.sizes()[dim];
  const int64_t in_step = rank == 0 ? 0 : self.strides()[dim];
  const int64_t out_step = rank == 0 ? 1 : (*out)->strides()[dim];
  const char* in = static_cast<const char*>(self.data_ptr());
  char* o = static_cast<char*>((*out)->data_ptr());
  const bool floating = is_floating(out_t);
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);  // the row's start, dim's entry kept 0
  for (int64_t row = 0; row < n / len; ++row) {
    int64_t in_at = 0, out_at = 0;
    for (int64_t d = 0; d < rank; ++d) {
      in_at += idx[d] * self.strides()[d];
      out_at += idx[d] * (*out)->strides()[d];
    }
    double f = op == ScanOp::Sum ? 0.0 : 1.0;
    uint64_t i = op == ScanOp::Sum ? 0 : 1;  // unsigned: wraps as ATen's int64 does
    for (int64_t k = 0; k < len; ++k) {
      if (floating) {
        // Converted to the result's type first, as ATen casts self to dtype.
        const double raw = load_double(in, in_t, in_at + k * in_step);
        const double x = out_t == ScalarType::Double ? raw : round_to(out_t, raw);
        f = op == ScanOp::Sum ? f + x : f * x;
      } else {
        const auto x = static_cast<uint64_t>(load_integer(in, in_t, in_at + k * in_step));
        i = op == ScanOp::Sum ? i + x : i * x;
      }
      store(o, out_t, out_at + k * out_step, f, static_cast<int64_t>(i));
    }
    for (int64_t d = rank - 1; d >= 0; --d) {  // the next row: odometer over all dims but dim
      if (d == dim) continue;
      if (++idx[d] < self.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
