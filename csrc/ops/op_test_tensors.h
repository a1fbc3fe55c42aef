// SPDX-License-Identifier: Apache-2.0
#pragma once

// Strided tensors for the op tests that go through the public shims (gemv_cuda_test,
// attention_decode_test): made on the host from a value per row-major index, copied to the
// device with their strides, viewed at an offset, and read back as doubles in row-major
// order, so a test's float64 reference sees exactly the rounded inputs the op saw.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/tensor/convert.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

constexpr int32_t kCPU = 0, kCUDA = 1;
constexpr int32_t kF32 = 6, kF16 = 5, kBF16 = 15, kBool = 11;

struct Deleter {
  void operator()(AtenTensorOpaque* t) const { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }
};
using Tensor = std::unique_ptr<AtenTensorOpaque, Deleter>;

size_t element_size(int32_t dtype) { return dtype == kF32 ? 4 : dtype == kBool ? 1 : 2; }

void store(char* p, int32_t dtype, double v) {
  const float f = static_cast<float>(v);
  if (dtype == kF32) {
    std::memcpy(p, &f, 4);
  } else if (dtype == kBool) {
    *p = v != 0.0 ? 1 : 0;
  } else {
    const uint16_t h = dtype == kF16 ? convert::float_to_half(f) : convert::float_to_bfloat16(f);
    std::memcpy(p, &h, 2);
  }
}

double load(const char* p, int32_t dtype) {
  if (dtype == kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (dtype == kBool) return *p != 0 ? 1.0 : 0.0;
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == kF16 ? convert::half_to_float(h) : convert::bfloat16_to_float(h);
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform value in [-1, 1) for (seed, element).
double uniform(uint64_t seed, int64_t j) {
  return static_cast<double>(mix(seed * 1000003ull + static_cast<uint64_t>(j)) >> 11) * 0x1p-52 - 1.0;
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(sizes[d], 1);
  return s;
}

int64_t numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Calls f(j, offset) for every element in row-major order (offset in elements).
void for_each_element(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                      const std::function<void(int64_t, int64_t)>& f) {
  const size_t nd = sizes.size();
  const int64_t n = numel(sizes);
  std::vector<int64_t> idx(nd, 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (size_t d = 0; d < nd; ++d) off += idx[d] * strides[d];
    f(j, off);
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// A host tensor with these sizes/strides, element (row-major index j) = value(j).
Tensor host_tensor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
                   const std::function<double(int64_t)>& value) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                                    dtype, kCPU, 0, &h),
            0)
      << last_error_message();
  Tensor t(h);
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(h, &data), 0);
  for_each_element(sizes, strides, [&](int64_t j, int64_t off) {
    store(static_cast<char*>(data) + off * element_size(dtype), dtype, value(j));
  });
  return t;
}

// An uninitialized CUDA tensor.
Tensor device_empty(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                                    dtype, kCUDA, 0, &h),
            0)
      << last_error_message();
  return Tensor(h);
}

// A view of t's storage with these sizes, strides and storage offset (elements).
Tensor view(AtenTensorHandle t, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
            int64_t offset) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(t, static_cast<int64_t>(sizes.size()), sizes.data(),
                                                          strides.data(), offset, &h),
            0)
      << last_error_message();
  return Tensor(h);
}

// dst (CUDA, any strides) = src (CPU, same sizes).
void copy_into(AtenTensorHandle dst, AtenTensorHandle src) {
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(dst, src, 0), 0) << last_error_message();
}

Tensor to_device(AtenTensorHandle host) {
  int64_t nd = 0;
  int64_t *sz = nullptr, *st = nullptr;
  int32_t dtype = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(host, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(host, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(host, &st), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(host, &dtype), 0);
  Tensor t = device_empty(std::vector<int64_t>(sz, sz + nd), std::vector<int64_t>(st, st + nd), dtype);
  copy_into(t.get(), host);
  return t;
}

std::vector<int64_t> sizes_of(AtenTensorHandle t) {
  int64_t nd = 0;
  int64_t* sz = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz), 0);
  return std::vector<int64_t>(sz, sz + nd);
}

// The elements of t (CPU or CUDA) in row-major order.
std::vector<double> values(AtenTensorHandle t) {
  int64_t nd = 0;
  int64_t* st = nullptr;
  int32_t dtype = 0, type = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &dtype), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &type), 0);
  const std::vector<int64_t> sizes = sizes_of(t), strides(st, st + nd);
  Tensor host;
  AtenTensorHandle src = t;
  if (type == kCUDA) {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype, kCPU, 0, &h), 0);
    host.reset(h);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << last_error_message();
    src = h;
  }
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(src, &data), 0);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(numel(sizes)));
  for_each_element(sizes, strides, [&](int64_t, int64_t off) {
    out.push_back(load(static_cast<const char*>(data) + off * element_size(dtype), dtype));
  });
  return out;
}

}  // namespace
}  // namespace slimcuda::testing
