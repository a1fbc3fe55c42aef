// SPDX-License-Identifier: Apache-2.0
// testdata/tensor.json through the aoti_torch_* shims (go/slimcuda/tensor_test.go runs the
// same cases through slimcuda_tensor_*). Works against both the plain and the prefixed
// build: every call goes through SLIMCUDA_SHIM(name).
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/tensor/slim_tensor.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("tensor.json");

// Whether a tensor's memory came from the pinned pool (a shim handle is a SlimTensor).
bool is_pinned(AtenTensorHandle t) {
  return reinterpret_cast<const SlimTensor*>(t)->storage()->kind() == Storage::Kind::Pinned;
}

int32_t dtype_code(const nlohmann::json& j) {
  if (j.is_number()) return j.get<int32_t>();
  static const std::map<std::string, int32_t> kCodes = {{"uint8", 0}, {"int8", 1},     {"int16", 2},   {"int32", 3},
                                                        {"int64", 4}, {"float16", 5},  {"float32", 6}, {"float64", 7},
                                                        {"bool", 11}, {"bfloat16", 15}};
  auto it = kCodes.find(j.get<std::string>());
  if (it == kCodes.end()) ADD_FAILURE() << "unknown dtype name " << j;
  return it == kCodes.end() ? -1 : it->second;
}

bool is_floating(int32_t dtype) { return dtype == 5 || dtype == 6 || dtype == 7 || dtype == 15; }

// device spec -> (device_type, device_index, pinned)
struct Where {
  int32_t type = 0, index = 0;
  bool pinned = false;
};
Where where(const nlohmann::json& device, int32_t index) {
  if (device.is_number()) return {device.get<int32_t>(), index, false};
  const std::string d = device.get<std::string>();
  if (d == "cpu") return {0, index, false};
  if (d == "cuda") return {1, index, false};
  if (d == "pinned") return {0, index, true};
  if (d == "pinned_cuda") return {1, index, true};
  ADD_FAILURE() << "unknown device " << d;
  return {};
}

// Owns handles for one case.
struct Handles {
  std::vector<AtenTensorHandle> all;
  ~Handles() {
    for (AtenTensorHandle h : all) EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h), 0);
  }
  AtenTensorHandle keep(AtenTensorHandle h) {
    all.push_back(h);
    return h;
  }
};

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Host data for a CPU tensor of `sizes`: int64 for integral/bool dtypes (exact), float64
// otherwise, wrapped by a borrowed tensor.
struct HostValues {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool floating = false;
};

AtenTensorHandle host_tensor(HostValues& v, const std::vector<int64_t>& sizes, Handles& hs) {
  AtenTensorHandle h = nullptr;
  void* data = v.floating ? static_cast<void*>(v.floats.data()) : static_cast<void*>(v.ints.data());
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                                              nullptr, 0, v.floating ? 7 : 4, 0, 0, &h),
            0)
      << last_error_message();
  return hs.keep(h);
}

// Builds a spec {device, dtype, sizes, values, view}: returns the view (or the base).
AtenTensorHandle build(const nlohmann::json& spec, Handles& hs) {
  const std::vector<int64_t> sizes = spec.at("sizes").get<std::vector<int64_t>>();
  const int32_t dtype = dtype_code(spec.at("dtype"));
  const Where w = where(spec.at("device"), 0);
  AtenTensorHandle base = nullptr;
  const int32_t rc = w.pinned
                         ? SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(
                               static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, dtype, w.type, w.index, &base)
                         : SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(),
                                                                   nullptr, dtype, w.type, w.index, &base);
  EXPECT_EQ(rc, 0) << last_error_message();
  if (rc != 0) return nullptr;
  hs.keep(base);
  if (spec.contains("values")) {
    HostValues v;
    v.floating = is_floating(dtype);
    const int64_t n = numel_of(sizes);
    for (int64_t i = 0; i < n; ++i) {
      const nlohmann::json x = spec["values"].is_string() ? nlohmann::json(i) : spec["values"].at(i);
      if (v.floating) {
        v.floats.push_back(x.get<double>());
      } else {
        v.ints.push_back(x.get<int64_t>());
      }
    }
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(base, host_tensor(v, sizes, hs), 0), 0) << last_error_message();
  }
  if (!spec.contains("view") || spec["view"].is_null()) return base;
  const auto& view = spec["view"];
  const std::vector<int64_t> vs = view.at("sizes").get<std::vector<int64_t>>();
  const std::vector<int64_t> vt = view.at("strides").get<std::vector<int64_t>>();
  AtenTensorHandle v = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(base, static_cast<int64_t>(vs.size()), vs.data(), vt.data(),
                                                          view.value("offset", 0), &v),
            0)
      << last_error_message();
  return v == nullptr ? nullptr : hs.keep(v);
}

std::vector<int64_t> sizes_of(AtenTensorHandle t) {
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &dim), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sizes), 0);
  return std::vector<int64_t>(sizes, sizes + dim);
}

std::vector<int64_t> strides_of(AtenTensorHandle t) {
  int64_t dim = 0;
  int64_t* strides = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &dim), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &strides), 0);
  return std::vector<int64_t>(strides, strides + dim);
}

// Reads t (through its view, row-major) into host values: int64 or float64, exactly.
HostValues read(AtenTensorHandle t, Handles& hs) {
  int32_t dtype = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &dtype), 0);
  const std::vector<int64_t> sizes = sizes_of(t);
  HostValues v;
  v.floating = is_floating(dtype);
  const size_t n = static_cast<size_t>(numel_of(sizes));
  v.ints.resize(v.floating ? 0 : n);
  v.floats.resize(v.floating ? n : 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(host_tensor(v, sizes, hs), t, 0), 0) << last_error_message();
  return v;
}

void expect_values(const Case& c, AtenTensorHandle t, Handles& hs) {
  // Read nothing unless asked: a case may check a view of 2^40 elements by its metadata.
  if (!c.data.contains("expect_values") && !c.data.contains("expect_at") && !c.data.contains("expect_bits")) return;
  const HostValues got = read(t, hs);
  if (c.data.contains("expect_values")) {
    const auto& want = c.data["expect_values"];
    ASSERT_EQ(want.size(), got.floating ? got.floats.size() : got.ints.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (got.floating) {
        EXPECT_EQ(got.floats[i], want[i].get<double>()) << "element " << i;
      } else {
        EXPECT_EQ(got.ints[i], want[i].get<int64_t>()) << "element " << i;
      }
    }
  }
  if (c.data.contains("expect_at")) {
    for (const auto& at : c.data["expect_at"]) {
      const size_t i = at[0].get<size_t>();
      if (got.floating) {
        EXPECT_EQ(got.floats.at(i), at[1].get<double>()) << "element " << i;
      } else {
        EXPECT_EQ(got.ints.at(i), at[1].get<int64_t>()) << "element " << i;
      }
    }
  }
  if (c.data.contains("expect_bits")) {
    // Raw element bits: read with the tensor's own dtype (a byte copy, no conversion).
    int32_t dtype = 0;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &dtype), 0);
    const std::vector<int64_t> sizes = sizes_of(t);
    const size_t es = SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(dtype);
    std::vector<uint8_t> raw(static_cast<size_t>(numel_of(sizes)) * es);
    AtenTensorHandle h = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(raw.data(), static_cast<int64_t>(sizes.size()),
                                                                sizes.data(), nullptr, 0, dtype, 0, 0, &h),
              0);
    hs.keep(h);
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << last_error_message();
    const auto& want = c.data["expect_bits"];
    ASSERT_EQ(want.size() * es, raw.size());
    for (size_t i = 0; i < want.size(); ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, raw.data() + i * es, es);
      EXPECT_EQ(bits, want[i].get<uint64_t>()) << "element " << i;
    }
  }
}

TEST(TensorFixtures, Empty) {
  for (const Case& c : cases("tensor.json", "empty")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::vector<int64_t> sizes = c.data.at("sizes").get<std::vector<int64_t>>();
    std::vector<int64_t> strides;
    if (c.data.contains("strides")) strides = c.data["strides"].get<std::vector<int64_t>>();
    const Where w = where(c.data.at("device"), c.data.value("device_index", 0));
    AtenTensorHandle t = nullptr;
    const int64_t ndim = static_cast<int64_t>(sizes.size());
    const int64_t* sp = strides.empty() ? nullptr : strides.data();
    const int32_t dtype = dtype_code(c.data.at("dtype"));
    const int32_t rc =
        w.pinned ? SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(ndim, sizes.data(), sp, dtype, w.type, w.index, &t)
                 : SLIMCUDA_SHIM(aoti_torch_empty_strided)(ndim, sizes.data(), sp, dtype, w.type, w.index, &t);
    expect_code(c, rc, last_error_message());
    if (rc != 0) {
      EXPECT_EQ(t, nullptr);
      continue;
    }
    Handles hs;
    hs.keep(t);
    EXPECT_EQ(sizes_of(t), sizes);
    EXPECT_EQ(strides_of(t), c.data.at("expect_strides").get<std::vector<int64_t>>());
    int64_t numel = -1, storage = -1, offset = -1;
    bool contiguous = false;
    int32_t got_dtype = -1, device_type = -1, device_index = -9;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_numel)(t, &numel), 0);
    EXPECT_EQ(numel, c.data.at("expect_numel").get<int64_t>());
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(t, &storage), 0);
    EXPECT_EQ(storage, c.data.at("expect_storage_bytes").get<int64_t>());
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_is_contiguous)(t, &contiguous), 0);
    EXPECT_EQ(contiguous, c.data.at("expect_contiguous").get<bool>());
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_offset)(t, &offset), 0);
    EXPECT_EQ(offset, 0);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &got_dtype), 0);
    EXPECT_EQ(got_dtype, dtype);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &device_type), 0);
    EXPECT_EQ(device_type, w.pinned ? 0 : w.type);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_index)(t, &device_index), 0);
    if (c.data.contains("expect_device_index")) {
      EXPECT_EQ(device_index, c.data["expect_device_index"].get<int32_t>());
    }
    void* data = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &data), 0);
    EXPECT_EQ(data == nullptr, storage == 0);
    if (w.pinned) {
      EXPECT_TRUE(is_pinned(t));
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(TensorFixtures, View) {
  for (const Case& c : cases("tensor.json", "view")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Handles hs;
    AtenTensorHandle base = build(c.data.at("base"), hs);
    ASSERT_NE(base, nullptr);
    const std::vector<int64_t> vs = c.data.at("sizes").get<std::vector<int64_t>>();
    const std::vector<int64_t> vt = c.data.at("strides").get<std::vector<int64_t>>();
    AtenTensorHandle v = nullptr;
    const int32_t rc = SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(base, static_cast<int64_t>(vs.size()), vs.data(),
                                                                     vt.data(), c.data.at("offset").get<int64_t>(), &v);
    expect_code(c, rc, last_error_message());
    if (rc != 0) continue;
    hs.keep(v);
    EXPECT_EQ(sizes_of(v), vs);
    EXPECT_EQ(strides_of(v), vt);
    expect_values(c, v, hs);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(TensorFixtures, Copy) {
  for (const Case& c : cases("tensor.json", "copy")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Handles hs;
    AtenTensorHandle src = build(c.data.at("src"), hs);
    AtenTensorHandle dst = build(c.data.at("dst"), hs);
    ASSERT_TRUE(src != nullptr && dst != nullptr);
    const int32_t rc = SLIMCUDA_SHIM(aoti_torch_copy_)(dst, src, 0);
    expect_code(c, rc, last_error_message());
    if (rc == 0) expect_values(c, dst, hs);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(TensorFixtures, Clone) {
  for (const Case& c : cases("tensor.json", "clone")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Handles hs;
    AtenTensorHandle src = build(c.data.at("src"), hs);
    ASSERT_NE(src, nullptr);
    AtenTensorHandle out = nullptr;
    const int32_t rc = c.data.at("preserve_strides").get<bool>()
                           ? SLIMCUDA_SHIM(aoti_torch_clone_preserve_strides)(src, &out)
                           : SLIMCUDA_SHIM(aoti_torch_clone)(src, &out);
    expect_code(c, rc, last_error_message());
    if (rc != 0) continue;
    hs.keep(out);
    EXPECT_EQ(strides_of(out), c.data.at("expect_strides").get<std::vector<int64_t>>());
    int64_t storage = 0;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(out, &storage), 0);
    EXPECT_EQ(storage, c.data.at("expect_storage_bytes").get<int64_t>());
    int32_t src_type = -1, out_type = -2;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(src, &src_type), 0);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(out, &out_type), 0);
    EXPECT_EQ(out_type, src_type);
    if (c.data.value("expect_pinned", false)) {
      EXPECT_TRUE(is_pinned(out));
    }
    expect_values(c, out, hs);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
