// SPDX-License-Identifier: Apache-2.0
// testdata/ops.json through the aoti_torch_cpu_* and aoti_torch_cuda_* fallback ops
// (go/internal/opsfixture runs the same cases from Go). Inputs are generated from each
// case's seed exactly as tools/ops/make_op_fixtures.py describes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("ops.json");

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double input_value(int64_t seed, int64_t t, int64_t j) {
  const uint64_t r = splitmix64(static_cast<uint64_t>(seed) * 1000003ull + static_cast<uint64_t>(t) * 7919ull +
                                static_cast<uint64_t>(j));
  return (static_cast<double>(r % 17) - 8.0) / 8.0;
}

int32_t dtype_code(const std::string& name) {
  if (name == "float32") return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
  if (name == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (name == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  if (name == "float64") return SLIMCUDA_SHIM(aoti_torch_dtype_float64)();
  ADD_FAILURE() << "unknown dtype " << name;
  return -1;
}

size_t dtype_size(int32_t code) { return SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(code); }

void store(char* p, int32_t dtype, double v) {
  const float f = static_cast<float>(v);
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float32)()) {
    std::memcpy(p, &f, 4);
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float64)()) {
    std::memcpy(p, &v, 8);
  } else {
    const uint16_t h =
        dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float16)() ? convert::float_to_half(f) : convert::float_to_bfloat16(f);
    std::memcpy(p, &h, 2);
  }
}

double load(const char* p, int32_t dtype) {
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float32)()) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float64)()) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == SLIMCUDA_SHIM(aoti_torch_dtype_float16)() ? convert::half_to_float(h) : convert::bfloat16_to_float(h);
}

struct Deleter {
  void operator()(AtenTensorOpaque* t) const { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }
};
using Tensor = std::unique_ptr<AtenTensorOpaque, Deleter>;

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(sizes[d], 1);
  return s;
}

// Calls f(linear row-major index, element offset) for every element.
template <typename F>
void for_each(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, F f) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    f(j, off);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// A tensor on `device` ("cpu"/"cuda") with these sizes/strides, storage zero-filled, then
// element j = values(j) (or `fill` everywhere the view reaches).
Tensor make(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
            const std::string& device, const std::function<double(int64_t)>& value) {
  AtenTensorHandle h = nullptr;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
            0)
      << slimcuda_last_error_message();
  Tensor host(h);
  int64_t storage = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(h, &storage), 0);
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(h, &data), 0);
  if (data != nullptr) std::memset(data, 0, static_cast<size_t>(storage));
  const size_t es = dtype_size(dtype);
  for_each(sizes, strides,
           [&](int64_t j, int64_t off) { store(static_cast<char*>(data) + off * es, dtype, value(j)); });
  if (device == "cpu") return host;
  AtenTensorHandle d = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0, &d),
            0)
      << slimcuda_last_error_message();
  Tensor dev(d);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(d, host.get(), 0), 0) << slimcuda_last_error_message();
  return dev;
}

// The tensor's elements in row-major order, read back through its own strides.
std::vector<double> read(AtenTensorHandle t, int32_t dtype, std::vector<int64_t>* sizes_out) {
  int64_t nd = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  int64_t *sz = nullptr, *st = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  std::vector<int64_t> sizes(sz, sz + nd), strides(st, st + nd);
  *sizes_out = sizes;
  int32_t type = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &type), 0);
  Tensor host;
  AtenTensorHandle src = t;
  if (type == SLIMCUDA_SHIM(aoti_torch_device_type_cuda)()) {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype,
                                                      SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
              0);
    host.reset(h);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << slimcuda_last_error_message();
    src = h;
  }
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(src, &data), 0);
  std::vector<double> out;
  const size_t es = dtype_size(dtype);
  for_each(sizes, strides,
           [&](int64_t, int64_t off) { out.push_back(load(static_cast<char*>(data) + off * es, dtype)); });
  return out;
}

std::vector<int64_t> ints(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? j[key].get<std::vector<int64_t>>() : std::vector<int64_t>{};
}

// Inputs of a value case, in order.
std::vector<Tensor> inputs(const Case& c, int32_t dtype, const std::string& device) {
  std::vector<Tensor> out;
  const int64_t seed = c.data["seed"].get<int64_t>();
  int64_t t = 0;
  for (const auto& spec : c.data["inputs"]) {
    const std::vector<int64_t> sizes = ints(spec, "sizes");
    const std::vector<int64_t> strides = spec.contains("strides") ? ints(spec, "strides") : contiguous(sizes);
    const bool nan = spec.value("fill", "") == "nan";
    const int64_t index = t++;
    out.push_back(make(sizes, strides, dtype, device,
                       [&](int64_t j) { return nan ? std::nan("") : input_value(seed, index, j); }));
  }
  return out;
}

int32_t call_gemm(const std::string& fn, bool cuda, AtenTensorHandle out, const std::vector<AtenTensorHandle>& in,
                  double beta, double alpha, int32_t use_gelu, AtenTensorHandle* ret0) {
  if (fn == "mm")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_mm_out)(out, in[0], in[1])
                : SLIMCUDA_SHIM(aoti_torch_cpu_mm_out)(out, in[0], in[1]);
  if (fn == "bmm")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_bmm_out)(out, in[0], in[1])
                : SLIMCUDA_SHIM(aoti_torch_cpu_bmm_out)(out, in[0], in[1]);
  if (fn == "addmm")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_addmm_out)(out, in[0], in[1], in[2], beta, alpha)
                : SLIMCUDA_SHIM(aoti_torch_cpu_addmm_out)(out, in[0], in[1], in[2], beta, alpha);
  if (fn == "baddbmm")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_baddbmm_out)(out, in[0], in[1], in[2], beta, alpha)
                : SLIMCUDA_SHIM(aoti_torch_cpu_baddbmm_out)(out, in[0], in[1], in[2], beta, alpha);
  if (fn == "addmm_activation")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda__addmm_activation)(in[0], in[1], in[2], beta, alpha, use_gelu, ret0)
                : SLIMCUDA_SHIM(aoti_torch_cpu__addmm_activation)(in[0], in[1], in[2], beta, alpha, use_gelu, ret0);
  ADD_FAILURE() << "unknown gemm fn " << fn;
  return -1;
}

int32_t call_conv(bool cuda, AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                  const nlohmann::json& d, int64_t spatial, AtenTensorHandle* ret0) {
  auto list = [&](const char* key, int64_t dflt) {
    return d.contains(key) ? d[key].get<std::vector<int64_t>>() : std::vector<int64_t>(spatial, dflt);
  };
  const std::vector<int64_t> stride = list("stride", 1), padding = list("padding", 0), dilation = list("dilation", 1),
                             output_padding = list("output_padding", 0);
  const int32_t transposed = d.value("transposed", 0);
  const int64_t groups = d.value("groups", 1);
  auto* fn = cuda ? &SLIMCUDA_SHIM(aoti_torch_cuda_convolution) : &SLIMCUDA_SHIM(aoti_torch_cpu_convolution);
  return fn(input, weight, bias, stride.data(), static_cast<int64_t>(stride.size()), padding.data(),
            static_cast<int64_t>(padding.size()), dilation.data(), static_cast<int64_t>(dilation.size()), transposed,
            output_padding.data(), static_cast<int64_t>(output_padding.size()), groups, ret0);
}

void expect_values(const Case& c, const std::vector<double>& got, const std::vector<int64_t>& sizes) {
  EXPECT_EQ(sizes, ints(c.data, "expect_sizes")) << c.name;
  const std::vector<double> want = c.data["expected"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size()) << c.name;
  const double atol = c.data["atol"].get<double>(), rtol = c.data["rtol"].get<double>();
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      ADD_FAILURE() << c.name << ": element " << i << " = " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

TEST(OpsFixtures, Gemm) {
  for (const Case& c : cases("ops.json", "gemm")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const bool cuda = device == "cuda";
    const int32_t dtype = dtype_code(c.data["dtype"]);
    std::vector<Tensor> in = inputs(c, dtype, device);
    std::vector<AtenTensorHandle> raw;
    for (auto& t : in) raw.push_back(t.get());
    const std::string fn = c.data["fn"];
    const double beta = c.data.value("beta", 1.0), alpha = c.data.value("alpha", 1.0);
    const std::vector<int64_t> sizes = ints(c.data, "expect_sizes");
    Tensor out;
    AtenTensorHandle ret0 = nullptr;
    if (fn != "addmm_activation") {
      const std::vector<int64_t> strides = c.data.contains("out") ? ints(c.data["out"], "strides") : contiguous(sizes);
      out = make(sizes, strides, dtype, device, [](int64_t) { return -7.0; });
    }
    ASSERT_EQ(call_gemm(fn, cuda, out.get(), raw, beta, alpha, c.data.value("use_gelu", 0), &ret0), 0)
        << slimcuda_last_error_message();
    if (ret0 != nullptr) out.reset(ret0);
    std::vector<int64_t> got_sizes;
    const std::vector<double> got = read(out.get(), dtype, &got_sizes);
    expect_values(c, got, got_sizes);
  }
}

TEST(OpsFixtures, Convolution) {
  for (const Case& c : cases("ops.json", "convolution")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const int32_t dtype = dtype_code(c.data["dtype"]);
    std::vector<Tensor> in = inputs(c, dtype, device);
    AtenTensorHandle bias = in.size() > 2 ? in[2].get() : nullptr;
    AtenTensorHandle ret0 = nullptr;
    const int64_t spatial = static_cast<int64_t>(c.data["inputs"][0]["sizes"].size()) - 2;
    ASSERT_EQ(call_conv(device == "cuda", in[0].get(), in[1].get(), bias != nullptr ? &bias : nullptr, c.data, spatial,
                        &ret0),
              0)
        << slimcuda_last_error_message();
    Tensor out(ret0);
    std::vector<int64_t> got_sizes;
    const std::vector<double> got = read(out.get(), dtype, &got_sizes);
    expect_values(c, got, got_sizes);
  }
}

TEST(OpsFixtures, BadInput) {
  for (const Case& c : cases("ops.json", "gemm_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const std::string on = c.data.value("tensors_on", device);
    const bool cuda = device == "cuda";
    const auto dtypes = c.data["dtypes"].get<std::vector<std::string>>();
    const auto sizes = c.data["sizes"].get<std::vector<std::vector<int64_t>>>();
    const std::string fn = c.data["fn"];
    const std::string null = c.data.value("null", "");
    std::vector<Tensor> ts;
    std::vector<AtenTensorHandle> raw;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ts.push_back(make(sizes[i], contiguous(sizes[i]), dtype_code(dtypes[i]), on, [](int64_t) { return 1.0; }));
      raw.push_back(ts.back().get());
    }
    // Argument names in shim order, to null the one the case names.
    std::vector<std::string> names;
    if (fn == "convolution") {
      names = {"input", "weight"};
    } else if (fn == "addmm_activation") {
      names = {"self", "mat1", "mat2"};
    } else if (fn == "mm" || fn == "bmm") {
      names = {"out", "self", "mat2"};
    } else {
      names = {"out", "self", "mat1", "mat2"};
    }
    for (size_t i = 0; i < names.size() && i < raw.size(); ++i)
      if (names[i] == null) raw[i] = nullptr;
    AtenTensorHandle ret0 = nullptr;
    int32_t code;
    if (fn == "convolution") {
      code = call_conv(cuda, raw[0], raw[1], nullptr, c.data, static_cast<int64_t>(sizes[0].size()) - 2, &ret0);
    } else if (fn == "addmm_activation") {
      code = call_gemm(fn, cuda, nullptr, raw, 1.0, 1.0, 0, &ret0);
    } else {
      std::vector<AtenTensorHandle> rest(raw.begin() + 1, raw.end());
      code = call_gemm(fn, cuda, raw[0], rest, 1.0, 1.0, 0, &ret0);
    }
    if (ret0 != nullptr) (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(ret0);
    expect_code(c, code);
  }
}

}  // namespace
}  // namespace slimcuda::testing
