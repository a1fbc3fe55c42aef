// SPDX-License-Identifier: Apache-2.0
// testdata/ops.json through the aoti_torch_cpu_* and aoti_torch_cuda_* fallback ops
// (go/internal/opsfixture runs the same cases from Go). Inputs are generated from each
// case's seed exactly as tools/ops/make_op_fixtures.py describes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "csrc/ops/testing/fixture_inputs.h"
#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("ops.json");

#ifdef SLIMCUDA_OPS_TEST_CONV_PATH
// ops_fixtures_conv_{frontend,legacy}_test: every CUDA convolution through one cuDNN path
// (SLIMCUDA_CONV=frontend: a case the graph API declines fails; legacy: the legacy API
// only), set before the library reads its environment (once, at its first use of a
// setting), so that the binary behaves alike under bazel test and tools/gpu/run.sh.
const bool kConvPath = [] {
  setenv("SLIMCUDA_CONV", SLIMCUDA_OPS_TEST_CONV_PATH, 1);
  return true;
}();
#endif

double input_value(int64_t seed, int64_t t, int64_t j) { return fixture_input_value(seed, t, j); }

int32_t dtype_code(const std::string& name) {
  if (name == "float32") return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
  if (name == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (name == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  if (name == "float64") return SLIMCUDA_SHIM(aoti_torch_dtype_float64)();
  if (name == "bool") return SLIMCUDA_SHIM(aoti_torch_dtype_bool)();
  if (name == "int64") return SLIMCUDA_SHIM(aoti_torch_dtype_int64)();
  if (name == "int32") return SLIMCUDA_SHIM(aoti_torch_dtype_int32)();
  if (name == "int16") return SLIMCUDA_SHIM(aoti_torch_dtype_int16)();
  if (name == "int8") return SLIMCUDA_SHIM(aoti_torch_dtype_int8)();
  if (name == "uint8") return SLIMCUDA_SHIM(aoti_torch_dtype_uint8)();
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
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_bool)()) {
    *p = v != 0.0 ? 1 : 0;
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int64)()) {
    const auto i = static_cast<int64_t>(v);
    std::memcpy(p, &i, 8);
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int32)()) {
    const auto i = static_cast<int32_t>(v);
    std::memcpy(p, &i, 4);
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int16)()) {
    const auto i = static_cast<int16_t>(v);
    std::memcpy(p, &i, 2);
  } else if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int8)() || dtype == SLIMCUDA_SHIM(aoti_torch_dtype_uint8)()) {
    *p = static_cast<char>(static_cast<int64_t>(v));
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
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_bool)()) return *p != 0 ? 1.0 : 0.0;
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int64)()) {
    int64_t i;
    std::memcpy(&i, p, 8);
    return static_cast<double>(i);
  }
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int32)()) {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int16)()) {
    int16_t i;
    std::memcpy(&i, p, 2);
    return i;
  }
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_int8)()) return static_cast<int8_t>(*p);
  if (dtype == SLIMCUDA_SHIM(aoti_torch_dtype_uint8)()) return static_cast<uint8_t>(*p);
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
Tensor make_at_offset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                      int32_t dtype, const std::string& device, const std::function<double(int64_t)>& value);

Tensor make(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
            const std::string& device, const std::function<double(int64_t)>& value, int64_t offset = 0) {
  if (offset != 0) return make_at_offset(sizes, strides, offset, dtype, device, value);
  AtenTensorHandle h = nullptr;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
            0)
      << last_error_message();
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
  // The whole storage goes to the GPU as one flat copy and the view is made there: a copy
  // into the view itself would be refused when it overlaps (a stride 0, as an expanded
  // attention bias has), and the flat copy keeps every stored element where it was.
  const int64_t flat = static_cast<int64_t>(storage / static_cast<int64_t>(es)), one = 1, zero = 0;
  AtenTensorHandle hf = nullptr, d = nullptr, view = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(h, 1, &flat, &one, 0, &hf), 0) << last_error_message();
  Tensor host_flat(hf);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &flat, &one, dtype, SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(),
                                                    0, &d),
            0)
      << last_error_message();
  Tensor dev(d);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(d, hf, 0), 0) << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(d, nd, sizes.data(), strides.data(), zero, &view), 0)
      << last_error_message();
  return Tensor(view);
}

// The same as a view at storage offset `offset` (elements) of a flat storage that holds
// `offset` zeros first: operands as generated code passes them (an LSTM step's hidden state
// inside the sequence buffer, a slice of a bigger buffer).
Tensor make_at_offset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                      int32_t dtype, const std::string& device, const std::function<double(int64_t)>& value) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  int64_t span = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (sizes[d] == 0) span = 0;
  }
  if (span != 0) {
    for (int64_t d = 0; d < nd; ++d) span += (sizes[d] - 1) * strides[d];
  }
  const int64_t flat = offset + span, one = 1;
  AtenTensorHandle hf = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &flat, &one, dtype, SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(),
                                                    0, &hf),
            0)
      << last_error_message();
  Tensor host_flat(hf);
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(hf, &data), 0);
  const size_t es = dtype_size(dtype);
  if (data != nullptr) std::memset(data, 0, static_cast<size_t>(flat) * es);
  for_each(sizes, strides,
           [&](int64_t j, int64_t off) { store(static_cast<char*>(data) + (offset + off) * es, dtype, value(j)); });
  AtenTensorHandle base = hf;
  Tensor dev;
  if (device != "cpu") {
    AtenTensorHandle d = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &flat, &one, dtype,
                                                      SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0, &d),
              0)
        << last_error_message();
    dev.reset(d);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(d, hf, 0), 0) << last_error_message();
    base = d;
  }
  AtenTensorHandle view = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(base, nd, sizes.data(), strides.data(), offset, &view), 0)
      << last_error_message();
  return Tensor(view);
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
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << last_error_message();
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
    out.push_back(make(
        sizes, strides, dtype, device, [&](int64_t j) { return nan ? std::nan("") : input_value(seed, index, j); },
        spec.value("offset", int64_t{0})));
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
    const std::string fn = c.data["fn"];
    const double beta = c.data.value("beta", 1.0), alpha = c.data.value("alpha", 1.0);
    const std::vector<int64_t> sizes = ints(c.data, "expect_sizes");
    // Twice, the first round's tensors still alive: the second call has the same shapes at
    // other addresses, so it reuses the op's cached plan (cuBLASLt descriptors, the bias
    // pointer updated) as a model's repeated layers and an LSTM's steps do.
    std::vector<Tensor> keep;
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(round == 0 ? "first call" : "second call (cached plan, other addresses)");
      std::vector<Tensor> in = inputs(c, dtype, device);
      std::vector<AtenTensorHandle> raw;
      for (auto& t : in) raw.push_back(t.get());
      Tensor out;
      AtenTensorHandle ret0 = nullptr;
      if (fn != "addmm_activation") {
        const bool out_spec = c.data.contains("out");
        const std::vector<int64_t> strides =
            out_spec && c.data["out"].contains("strides") ? ints(c.data["out"], "strides") : contiguous(sizes);
        out = make(
            sizes, strides, dtype, device, [](int64_t) { return -7.0; },
            out_spec ? c.data["out"].value("offset", int64_t{0}) : 0);
      }
      ASSERT_EQ(call_gemm(fn, cuda, out.get(), raw, beta, alpha, c.data.value("use_gelu", 0), &ret0), 0)
          << last_error_message();
      if (ret0 != nullptr) out.reset(ret0);
      std::vector<int64_t> got_sizes;
      const std::vector<double> got = read(out.get(), dtype, &got_sizes);
      expect_values(c, got, got_sizes);
      for (auto& t : in) keep.push_back(std::move(t));
      keep.push_back(std::move(out));
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
        << last_error_message();
    Tensor out(ret0);
    std::vector<int64_t> got_sizes;
    const std::vector<double> got = read(out.get(), dtype, &got_sizes);
    expect_values(c, got, got_sizes);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
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
    expect_code(c, code, last_error_message());
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// --- attention ---------------------------------------------------------------------------

struct Meta {
  std::vector<int64_t> sizes, strides;
  int32_t dtype = -1, device_type = -1;
};

Meta meta_of(AtenTensorHandle t) {
  Meta m;
  int64_t nd = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  int64_t *sz = nullptr, *st = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  m.sizes.assign(sz, sz + nd);
  m.strides.assign(st, st + nd);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &m.dtype), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &m.device_type), 0);
  return m;
}

// The operands of an attention case, as tools/ops/make_op_fixtures.py describes them.
std::vector<Tensor> attention_inputs(const Case& c, int32_t dtype, const std::string& device) {
  std::vector<Tensor> out;
  const int64_t seed = c.data["seed"].get<int64_t>();
  int64_t t = 0;
  for (const auto& spec : c.data["inputs"]) {
    const std::vector<int64_t> sizes = ints(spec, "sizes");
    const std::vector<int64_t> strides = spec.contains("strides") ? ints(spec, "strides") : contiguous(sizes);
    const std::string kind = spec.value("dtype", "");
    const bool is_bool = kind == "bool";
    const std::vector<int64_t> masked = ints(spec, "masked_rows");
    const int64_t rows = sizes[sizes.size() - 2], cols = sizes.back();
    const int64_t index = t++;
    out.push_back(make(sizes, strides, kind.empty() ? dtype : dtype_code(kind), device, [&](int64_t j) {
      for (int64_t r : masked) {
        if ((j / cols) % rows == r) return is_bool ? 0.0 : -INFINITY;
      }
      const double v = input_value(seed, index, j);
      return is_bool ? (v >= -0.5 ? 1.0 : 0.0) : v;
    }));
  }
  return out;
}

struct AttentionCall {
  std::string fn;
  bool cuda = false;
  AtenTensorHandle q = nullptr, k = nullptr, v = nullptr, bias = nullptr;
  int32_t compute_log_sumexp = 1, is_causal = 0, return_debug_mask = 0;
  double dropout_p = 0.0;
  bool has_scale = false;
  double scale = 0.0;
  bool null_ret0 = false;
};

struct AttentionOut {
  Tensor out, lse, cum_q, cum_k, seed, offset, debug;
  int64_t max_q = -1, max_k = -1;
  bool cum_null = true, debug_null = true;
};

int32_t call_attention(const AttentionCall& a, AttentionOut* r) {
  AtenTensorHandle h[9] = {};
  // Outputs PyTorch's meta functions return as None: Inductor passes NULL for them.
  AtenTensorHandle* ret0 = a.null_ret0 ? nullptr : &h[0];
  double scale = a.scale;
  double* sp = a.has_scale ? &scale : nullptr;
  AtenTensorHandle bias = a.bias;
  AtenTensorHandle* bp = bias != nullptr ? &bias : nullptr;
  int32_t code = -1;
  if (a.fn == "flash_for_cpu") {
    code = SLIMCUDA_SHIM(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu)(a.q, a.k, a.v, a.dropout_p,
                                                                                     a.is_causal, bp, sp, ret0, &h[1]);
  } else if (!a.cuda) {
    ADD_FAILURE() << "no CPU attention op " << a.fn;
  } else if (a.fn == "efficient") {
    code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_efficient_attention)(
        a.q, a.k, a.v, bp, a.compute_log_sumexp, a.dropout_p, a.is_causal, sp, ret0, &h[1], &h[6], &h[7]);
  } else if (a.fn == "flash") {
    code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_flash_attention)(
        a.q, a.k, a.v, a.dropout_p, a.is_causal, a.return_debug_mask, sp, ret0, &h[1], &h[2], &h[3], &r->max_q,
        &r->max_k, &h[6], &h[7], &h[8]);
  } else if (a.fn == "cudnn") {
    h[8] = reinterpret_cast<AtenTensorHandle>(&scale);  // must come back NULL, not left alone
    code = SLIMCUDA_SHIM(aoti_torch_cuda__scaled_dot_product_cudnn_attention)(
        a.q, a.k, a.v, bp, a.compute_log_sumexp, a.dropout_p, a.is_causal, a.return_debug_mask, sp, ret0, &h[1], &h[2],
        &h[3], &r->max_q, &r->max_k, &h[6], &h[7], &h[8]);
  } else {
    ADD_FAILURE() << "unknown attention fn " << a.fn;
  }
  if (code != 0) {
    for (AtenTensorHandle x : h) EXPECT_TRUE(x == nullptr || x == reinterpret_cast<AtenTensorHandle>(&scale));
    return code;
  }
  r->out.reset(h[0]), r->lse.reset(h[1]), r->seed.reset(h[6]), r->offset.reset(h[7]);
  r->cum_null = h[2] == nullptr && h[3] == nullptr;
  r->debug_null = h[8] == nullptr;
  if (a.fn == "flash") r->debug.reset(h[8]);
  return code;
}

// Cases of the same scenario share one case's values (expected_from).
const nlohmann::json& attention_values(const Case& c, const std::vector<Case>& all) {
  if (!c.data.contains("expected_from")) return c.data;
  const std::string from = c.data["expected_from"];
  for (const Case& o : all) {
    if (o.name == from) return o.data;
  }
  ADD_FAILURE() << c.name << ": expected_from " << from << " is not a case";
  return c.data;
}

// The philox placeholders: CPU int64 zeros of the op's shape.
void expect_rng_placeholder(AtenTensorHandle t, const std::vector<int64_t>& sizes, const std::string& what) {
  ASSERT_NE(t, nullptr) << what;
  const Meta m = meta_of(t);
  EXPECT_EQ(m.sizes, sizes) << what;
  EXPECT_EQ(m.dtype, SLIMCUDA_SHIM(aoti_torch_dtype_int64)()) << what;
  EXPECT_EQ(m.device_type, SLIMCUDA_SHIM(aoti_torch_device_type_cpu)()) << what;
  void* data = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &data), 0);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(static_cast<const int64_t*>(data)[i], 0) << what;
}

TEST(OpsFixtures, Attention) {
  const std::vector<Case> all = cases("ops.json", "attention");
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const int32_t dtype = dtype_code(c.data["dtype"]);
    std::vector<Tensor> in = attention_inputs(c, dtype, device);
    AttentionCall a;
    a.fn = c.data["fn"];
    a.cuda = device == "cuda";
    a.q = in[0].get(), a.k = in[1].get(), a.v = in[2].get();
    a.bias = in.size() > 3 ? in[3].get() : nullptr;
    a.is_causal = c.data.value("is_causal", false) ? 1 : 0;
    a.compute_log_sumexp = c.data.value("compute_log_sumexp", true) ? 1 : 0;
    a.has_scale = c.data.contains("scale");
    if (a.has_scale) a.scale = c.data["scale"].get<double>();
    AttentionOut r;
    ASSERT_EQ(call_attention(a, &r), 0) << last_error_message();
    const nlohmann::json& want = attention_values(c, all);

    const Meta om = meta_of(r.out.get());
    EXPECT_EQ(om.strides, ints(c.data, "expect_strides")) << "output strides";
    EXPECT_EQ(om.device_type,
              a.cuda ? SLIMCUDA_SHIM(aoti_torch_device_type_cuda)() : SLIMCUDA_SHIM(aoti_torch_device_type_cpu)());
    std::vector<int64_t> got_sizes;
    const std::vector<double> got = read(r.out.get(), dtype, &got_sizes);
    Case values = c;
    values.data["expected"] = want["expected"];
    expect_values(values, got, got_sizes);

    ASSERT_NE(r.lse.get(), nullptr);
    const Meta lm = meta_of(r.lse.get());
    EXPECT_EQ(lm.sizes, ints(c.data, "lse_sizes"));
    EXPECT_EQ(lm.strides, ints(c.data, "lse_strides"));
    EXPECT_EQ(lm.dtype, SLIMCUDA_SHIM(aoti_torch_dtype_float32)());
    if (c.data.value("compute_log_sumexp", true)) {
      // [B, H, >= Sq(, 1)]: the first Sq entries of each row.
      std::vector<int64_t> lse_sizes;
      const std::vector<double> lse = read(r.lse.get(), SLIMCUDA_SHIM(aoti_torch_dtype_float32)(), &lse_sizes);
      const std::vector<double> lse_want = want["lse_expected"].get<std::vector<double>>();
      const int64_t sq = om.sizes[2], row = lse_sizes[2];
      const double atol = c.data["atol"].get<double>(), rtol = c.data["rtol"].get<double>();
      ASSERT_EQ(static_cast<int64_t>(lse_want.size()), om.sizes[0] * om.sizes[1] * sq);
      int bad = 0;
      for (size_t i = 0; i < lse_want.size() && bad < 5; ++i) {
        const double g = lse[(i / sq) * row + i % sq];
        if (!(std::fabs(g - lse_want[i]) <= atol + rtol * std::fabs(lse_want[i]))) {
          ADD_FAILURE() << c.name << ": logsumexp " << i << " = " << g << ", want " << lse_want[i];
          ++bad;
        }
      }
    }

    // The extra outputs, as PyTorch returns them for inference.
    if (a.fn == "efficient" || a.fn == "cudnn") {
      expect_rng_placeholder(r.seed.get(), {}, "philox seed");
      expect_rng_placeholder(r.offset.get(), {}, "philox offset");
    }
    if (a.fn == "flash" || a.fn == "cudnn") {
      EXPECT_TRUE(r.cum_null) << "cum_seq_q/k are undefined for dense inputs";
      EXPECT_EQ(r.max_q, om.sizes[2]);
      EXPECT_EQ(r.max_k, meta_of(a.k).sizes[2]);
    }
    if (a.fn == "flash") {
      expect_rng_placeholder(r.seed.get(), {2}, "rng_state");
      expect_rng_placeholder(r.offset.get(), {}, "unused");
      ASSERT_NE(r.debug.get(), nullptr);
      const Meta dm = meta_of(r.debug.get());
      EXPECT_EQ(dm.sizes, std::vector<int64_t>{0});
      EXPECT_EQ(dm.dtype, dtype);
    }
    if (a.fn == "cudnn") {
      EXPECT_TRUE(r.debug_null) << "cudnn's debug mask is None";
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(OpsFixtures, AttentionBadInput) {
  for (const Case& c : cases("ops.json", "attention_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const std::string on = c.data.value("tensors_on", device);
    const auto dtypes = c.data["dtypes"].get<std::vector<std::string>>();
    const auto sizes = c.data["sizes"].get<std::vector<std::vector<int64_t>>>();
    std::vector<Tensor> ts;
    for (size_t i = 0; i < sizes.size(); ++i) {
      ts.push_back(make(sizes[i], contiguous(sizes[i]), dtype_code(dtypes[i]), on, [](int64_t) { return 0.5; }));
    }
    const std::string null = c.data.value("null", "");
    AttentionCall a;
    a.fn = c.data["fn"];
    a.cuda = device == "cuda";
    a.q = null == "query" ? nullptr : ts[0].get();
    a.k = null == "key" ? nullptr : ts[1].get();
    a.v = null == "value" ? nullptr : ts[2].get();
    a.bias = ts.size() > 3 ? ts[3].get() : nullptr;
    a.null_ret0 = null == "ret0";
    a.dropout_p = c.data.value("dropout_p", 0.0);
    a.return_debug_mask = c.data.value("return_debug_mask", 0);
    AttentionOut r;
    const int32_t code = call_attention(a, &r);
    expect_code(c, code, last_error_message());
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// --- cumulative ops ------------------------------------------------------------------------

int32_t call_cumulative(const std::string& fn, AtenTensorHandle self, int64_t dim, int32_t* dtype,
                        AtenTensorHandle* ret0) {
  if (fn == "cumsum") return SLIMCUDA_SHIM(aoti_torch_cpu_cumsum)(self, dim, dtype, ret0);
  if (fn == "cumprod") return SLIMCUDA_SHIM(aoti_torch_cpu_cumprod)(self, dim, dtype, ret0);
  ADD_FAILURE() << "unknown cumulative fn " << fn;
  return -1;
}

TEST(OpsFixtures, Cumulative) {
  for (const Case& c : cases("ops.json", "cumulative")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const int32_t dtype = dtype_code(c.data["dtype"]);
    const std::vector<int64_t> sizes = ints(c.data, "sizes");
    const std::vector<int64_t> strides = c.data.contains("strides") ? ints(c.data, "strides") : contiguous(sizes);
    const std::vector<double> values = c.data["input_values"].get<std::vector<double>>();
    Tensor in = make(sizes, strides, dtype, "cpu", [&](int64_t j) { return values[static_cast<size_t>(j)]; });
    int32_t out_dtype = c.data.contains("out_dtype") ? dtype_code(c.data["out_dtype"]) : 0;
    AtenTensorHandle ret0 = nullptr;
    ASSERT_EQ(call_cumulative(c.data["fn"], in.get(), c.data["dim"].get<int64_t>(),
                              c.data.contains("out_dtype") ? &out_dtype : nullptr, &ret0),
              0)
        << last_error_message();
    Tensor out(ret0);
    int32_t got_dtype = -1;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(ret0, &got_dtype), 0);
    const int32_t want_dtype = dtype_code(c.data["expect_dtype"]);
    ASSERT_EQ(got_dtype, want_dtype);
    std::vector<int64_t> got_sizes;
    const std::vector<double> got = read(ret0, want_dtype, &got_sizes);
    expect_values(c, got, got_sizes);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(OpsFixtures, CumulativeBadInput) {
  for (const Case& c : cases("ops.json", "cumulative_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::vector<int64_t> sizes = ints(c.data, "sizes");
    Tensor in = make(sizes, contiguous(sizes), dtype_code(c.data["dtype"]), "cpu", [](int64_t) { return 1.0; });
    const std::string null = c.data.value("null", "");
    int32_t code_arg = c.data.value("out_dtype_code", 0);
    AtenTensorHandle ret0 = nullptr;
    const int32_t code =
        call_cumulative(c.data["fn"], null == "self" ? nullptr : in.get(), c.data["dim"].get<int64_t>(),
                        c.data.contains("out_dtype_code") ? &code_arg : nullptr, null == "ret0" ? nullptr : &ret0);
    if (ret0 != nullptr) (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(ret0);
    expect_code(c, code, last_error_message());
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// --- embedding bags ------------------------------------------------------------------------

using BagShim = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, int32_t, int64_t, int32_t,
                                   AtenTensorHandle*, int32_t, int64_t, AtenTensorHandle*, AtenTensorHandle*,
                                   AtenTensorHandle*, AtenTensorHandle*);

BagShim bag_shim(const std::string& fn, bool cuda) {
  if (fn == "forward_only") {
    return cuda ? &SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag_forward_only)
                : &SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag_forward_only);
  }
  return cuda ? &SLIMCUDA_SHIM(aoti_torch_cuda__embedding_bag) : &SLIMCUDA_SHIM(aoti_torch_cpu__embedding_bag);
}

// A 1-D tensor with element stride `step` (or `sizes`, contiguous, when given) holding
// `values` in row-major order.
Tensor bag_vector(const std::vector<double>& values, const std::vector<int64_t>& sizes, const std::string& dtype,
                  const std::string& device, int64_t step = 1) {
  const std::vector<int64_t> s = sizes.empty() ? std::vector<int64_t>{static_cast<int64_t>(values.size())} : sizes;
  return make(s, sizes.empty() ? std::vector<int64_t>{step} : contiguous(s), dtype_code(dtype), device,
              [&](int64_t j) { return static_cast<size_t>(j) < values.size() ? values[static_cast<size_t>(j)] : 0.0; });
}

// The case's weight, indices, offsets and (optional) per_sample_weights.
struct BagInputs {
  Tensor weight, indices, offsets, psw;
};

BagInputs bag_inputs(const Case& c, const std::string& device) {
  BagInputs in;
  const std::vector<int64_t> ws = ints(c.data, "weight_sizes");
  const std::vector<double> wv = c.data.value("weight_values", std::vector<double>{});
  std::vector<int64_t> strides = contiguous(ws);
  if (c.data.value("weight_layout", "") == "transposed") strides = {1, ws[0]};
  in.weight = make(ws, strides, dtype_code(c.data["dtype"]), device,
                   [&](int64_t j) { return static_cast<size_t>(j) < wv.size() ? wv[static_cast<size_t>(j)] : 0.5; });
  in.indices = bag_vector(c.data["indices"].get<std::vector<double>>(), ints(c.data, "indices_sizes"),
                          c.data["index_dtype"], device, c.data.value("indices_stride", int64_t{1}));
  in.offsets = bag_vector(c.data["offsets"].get<std::vector<double>>(), ints(c.data, "offsets_sizes"),
                          c.data["offset_dtype"], device);
  if (c.data.contains("psw_values")) {
    in.psw = bag_vector(c.data["psw_values"].get<std::vector<double>>(), {},
                        c.data.value("psw_dtype", c.data["dtype"].get<std::string>()), device,
                        c.data.value("psw_stride", int64_t{1}));
  }
  return in;
}

// One returned index tensor against the case's `key` values and `key`_sizes, exactly.
void expect_bag_indices(const Case& c, AtenTensorHandle t, const std::string& key) {
  ASSERT_NE(t, nullptr) << key;
  int32_t dtype = -1;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &dtype), 0);
  EXPECT_EQ(dtype, dtype_code(c.data["expect_index_dtype"])) << key;
  std::vector<int64_t> sizes;
  const std::vector<double> got = read(t, dtype, &sizes);
  EXPECT_EQ(sizes, ints(c.data, (key + "_sizes").c_str())) << key;
  EXPECT_EQ(got, c.data[key].get<std::vector<double>>()) << key;
}

TEST(OpsFixtures, EmbeddingBag) {
  for (const Case& c : cases("ops.json", "embedding_bag")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    BagInputs in = bag_inputs(c, device);
    AtenTensorHandle psw = in.psw.get();
    AtenTensorHandle r[4] = {nullptr, nullptr, nullptr, nullptr};
    ASSERT_EQ(bag_shim(c.data["fn"], device == "cuda")(
                  in.weight.get(), in.indices.get(), in.offsets.get(), 0, c.data["mode"].get<int64_t>(), 0,
                  psw != nullptr ? &psw : nullptr, c.data["include_last_offset"].get<int32_t>(),
                  c.data["padding_idx"].get<int64_t>(), &r[0], &r[1], &r[2], &r[3]),
              0)
        << last_error_message();
    Tensor output(r[0]), offset2bag(r[1]), bag_size(r[2]), max_indices(r[3]);
    int32_t dtype = -1;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(r[0], &dtype), 0);
    ASSERT_EQ(dtype, dtype_code(c.data["dtype"]));
    std::vector<int64_t> sizes;
    const std::vector<double> got = read(r[0], dtype, &sizes);
    Case values = c;
    values.data["expect_sizes"] = c.data["output_sizes"];
    values.data["expected"] = c.data["output"];
    expect_values(values, got, sizes);
    expect_bag_indices(c, r[1], "offset2bag");
    expect_bag_indices(c, r[2], "bag_size");
    expect_bag_indices(c, r[3], "max_indices");
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(OpsFixtures, EmbeddingBagBadInput) {
  for (const Case& c : cases("ops.json", "embedding_bag_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    BagInputs in = bag_inputs(c, c.data.value("tensors_on", device));
    const std::string null = c.data.value("null", "");
    AtenTensorHandle psw = in.psw.get();
    AtenTensorHandle r[4] = {nullptr, nullptr, nullptr, nullptr};
    AtenTensorHandle* rp[4] = {&r[0], &r[1], &r[2], &r[3]};
    for (int i = 0; i < 4; ++i) {
      if (null == "ret" + std::to_string(i)) rp[i] = nullptr;
    }
    const int32_t code = bag_shim(c.data["fn"], device == "cuda")(
        null == "weight" ? nullptr : in.weight.get(), null == "indices" ? nullptr : in.indices.get(),
        null == "offsets" ? nullptr : in.offsets.get(), 0, c.data["mode"].get<int64_t>(), 0,
        psw != nullptr ? &psw : nullptr, c.data["include_last_offset"].get<int32_t>(),
        c.data["padding_idx"].get<int64_t>(), rp[0], rp[1], rp[2], rp[3]);
    for (AtenTensorHandle h : r) {
      EXPECT_EQ(h, nullptr) << "nothing is handed out on failure";
      if (h != nullptr) (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h);
    }
    expect_code(c, code, last_error_message());
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// --- sorting and searching: sort / sort_stable, topk, histc, searchsorted, bucketize -------

// A fixture number: JSON's, or "nan" / "inf" / "-inf".
double fixture_number(const nlohmann::json& v) {
  if (!v.is_string()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "nan") return std::nan("");
  return s == "inf" ? HUGE_VAL : -HUGE_VAL;
}

std::vector<double> fixture_numbers(const nlohmann::json& a) {
  std::vector<double> out;
  for (const auto& v : a) out.push_back(fixture_number(v));
  return out;
}

bool same_value(double got, double want) { return (std::isnan(got) && std::isnan(want)) || got == want; }

void expect_same(const std::string& what, const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!same_value(got[i], want[i])) {
      ADD_FAILURE() << what << " element " << i << " = " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

std::vector<int64_t> strides_of(AtenTensorHandle t) {
  int64_t nd = 0, *st = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  return std::vector<int64_t>(st, st + nd);
}

int32_t dtype_of(AtenTensorHandle t) {
  int32_t d = -1;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &d), 0);
  return d;
}

// One tensor of a sort-family case: {dtype, sizes, strides (optional), values (optional:
// zeros)}, or the case's own dtype/sizes/strides/input_values (ones when absent).
Tensor family_operand(const nlohmann::json& spec, const std::string& device, double fill = 0.0) {
  const std::vector<int64_t> sizes = ints(spec, "sizes");
  const std::vector<int64_t> strides = spec.contains("strides") ? ints(spec, "strides") : contiguous(sizes);
  const char* key = spec.contains("input_values") ? "input_values" : "values";
  const std::vector<double> vals = spec.contains(key) ? fixture_numbers(spec[key]) : std::vector<double>{};
  return make(sizes, strides, dtype_code(spec["dtype"]), device,
              [&](int64_t j) { return vals.empty() ? fill : vals[static_cast<size_t>(j)]; });
}

int32_t call_sort(const nlohmann::json& d, bool cuda, AtenTensorHandle self, AtenTensorHandle* ret0,
                  AtenTensorHandle* ret1) {
  const std::string fn = d["fn"];
  const int64_t dim = d["dim"].get<int64_t>();
  const int32_t descending = d.value("descending", 0);
  if (fn == "sort")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_sort)(self, dim, descending, ret0, ret1)
                : SLIMCUDA_SHIM(aoti_torch_cpu_sort)(self, dim, descending, ret0, ret1);
  if (fn == "sort_stable") {
    int32_t stable = d.value("stable", 1);
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_sort_stable)(self, &stable, dim, descending, ret0, ret1)
                : SLIMCUDA_SHIM(aoti_torch_cpu_sort_stable)(self, &stable, dim, descending, ret0, ret1);
  }
  const int64_t k = d["k"].get<int64_t>();
  const int32_t largest = d.value("largest", 1), sorted = d.value("sorted", 1);
  if (fn == "topk")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_topk)(self, k, dim, largest, sorted, ret0, ret1)
                : SLIMCUDA_SHIM(aoti_torch_cpu_topk)(self, k, dim, largest, sorted, ret0, ret1);
  ADD_FAILURE() << "unknown sort fn " << fn;
  return -1;
}

int32_t call_histc(const nlohmann::json& d, bool cuda, AtenTensorHandle self, AtenTensorHandle* ret0) {
  const int64_t bins = d["bins"].get<int64_t>();
  const double lo = fixture_number(d["min"]), hi = fixture_number(d["max"]);
  return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_histc)(self, bins, lo, hi, ret0)
              : SLIMCUDA_SHIM(aoti_torch_cpu_histc)(self, bins, lo, hi, ret0);
}

int32_t call_search(const nlohmann::json& d, bool cuda, AtenTensorHandle seq, AtenTensorHandle self,
                    AtenTensorHandle sorter, AtenTensorHandle* ret0) {
  const std::string fn = d["fn"];
  const int32_t out_int32 = d.value("out_int32", 0), right = d.value("right", 0);
  const std::string side_text = d.value("side", "");
  const char* side_ptr = side_text.c_str();
  const char** side = d.contains("side") ? &side_ptr : nullptr;
  AtenTensorHandle* sorter_arg = sorter != nullptr ? &sorter : nullptr;
  if (fn == "searchsorted_Tensor")
    return cuda
               ? SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Tensor)(seq, self, out_int32, right, side, sorter_arg, ret0)
               : SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Tensor)(seq, self, out_int32, right, side, sorter_arg, ret0);
  const double scalar = d.value("scalar", 0.0);
  if (fn == "searchsorted_Scalar")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_searchsorted_Scalar)(seq, scalar, out_int32, right, side, sorter_arg,
                                                                     ret0)
                : SLIMCUDA_SHIM(aoti_torch_cpu_searchsorted_Scalar)(seq, scalar, out_int32, right, side, sorter_arg,
                                                                    ret0);
  if (fn == "bucketize")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_bucketize_Tensor)(self, seq, out_int32, right, ret0)
                : SLIMCUDA_SHIM(aoti_torch_cpu_bucketize_Tensor)(self, seq, out_int32, right, ret0);
  ADD_FAILURE() << "unknown searchsorted fn " << fn;
  return -1;
}

TEST(OpsFixtures, Sort) {
  for (const Case& c : cases("ops.json", "sort")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const int32_t dtype = dtype_code(c.data["dtype"]);
    Tensor in = family_operand(c.data, device);
    AtenTensorHandle ret0 = nullptr, ret1 = nullptr;
    ASSERT_EQ(call_sort(c.data, device == "cuda", in.get(), &ret0, &ret1), 0) << last_error_message();
    Tensor values(ret0), indices(ret1);
    ASSERT_EQ(dtype_of(ret0), dtype);
    ASSERT_EQ(dtype_of(ret1), SLIMCUDA_SHIM(aoti_torch_dtype_int64)());
    // The strides ATen's meta functions give (AOTInductor's code indexes the outputs so).
    const std::vector<int64_t> want_sizes = ints(c.data, "expect_sizes");
    const std::vector<int64_t> want_strides =
        c.data.contains("expect_strides") ? ints(c.data, "expect_strides") : contiguous(want_sizes);
    EXPECT_EQ(strides_of(ret0), want_strides);
    EXPECT_EQ(strides_of(ret1), want_strides);
    std::vector<int64_t> got_sizes;
    expect_same("values", read(ret0, dtype, &got_sizes), fixture_numbers(c.data["expected"]));
    EXPECT_EQ(got_sizes, want_sizes);
    const auto want_idx = c.data["expected_indices"].get<std::vector<double>>();
    expect_same("indices", read(ret1, SLIMCUDA_SHIM(aoti_torch_dtype_int64)(), &got_sizes), want_idx);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(OpsFixtures, Histc) {
  for (const Case& c : cases("ops.json", "histc")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    const int32_t dtype = dtype_code(c.data["dtype"]);
    Tensor in = family_operand(c.data, device);
    AtenTensorHandle ret0 = nullptr;
    ASSERT_EQ(call_histc(c.data, device == "cuda", in.get(), &ret0), 0) << last_error_message();
    Tensor out(ret0);
    ASSERT_EQ(dtype_of(ret0), dtype);
    std::vector<int64_t> got_sizes;
    expect_same("counts", read(ret0, dtype, &got_sizes), fixture_numbers(c.data["expected"]));
    EXPECT_EQ(got_sizes, ints(c.data, "expect_sizes"));
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(OpsFixtures, Searchsorted) {
  for (const Case& c : cases("ops.json", "searchsorted")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data["device"];
    Tensor seq = family_operand(c.data["seq"], device), self, sorter;
    if (c.data.contains("self")) self = family_operand(c.data["self"], device);
    if (c.data.contains("sorter")) {
      const nlohmann::json spec = {{"dtype", "int64"}, {"sizes", c.data["seq"]["sizes"]}, {"values", c.data["sorter"]}};
      sorter = family_operand(spec, device);
    }
    AtenTensorHandle ret0 = nullptr;
    ASSERT_EQ(call_search(c.data, device == "cuda", seq.get(), self.get(), sorter.get(), &ret0), 0)
        << last_error_message();
    Tensor out(ret0);
    const int32_t want_dtype = dtype_code(c.data["expect_dtype"]);
    ASSERT_EQ(dtype_of(ret0), want_dtype);
    std::vector<int64_t> got_sizes;
    expect_same("positions", read(ret0, want_dtype, &got_sizes), c.data["expected"].get<std::vector<double>>());
    EXPECT_EQ(got_sizes, ints(c.data, "expect_sizes"));
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// Bad input of the three: a handle passed as NULL where `null` says, else the op refuses
// the arguments; nothing is returned.
TEST(OpsFixtures, SortFamilyBadInput) {
  for (const char* op : {"sort_error", "histc_error", "searchsorted_error"}) {
    for (const Case& c : cases("ops.json", op)) {
      SCOPED_TRACE(c.name);
      if (!begin_case(c)) continue;
      const std::string device = c.data["device"];
      const std::string on = c.data.value("tensors_on", device);
      const bool cuda = device == "cuda";
      const std::string null = c.data.value("null", "");
      AtenTensorHandle ret0 = nullptr, ret1 = nullptr;
      int32_t code = -1;
      if (std::string(op) == "searchsorted_error") {
        Tensor seq = family_operand(c.data["seq"], on), self, sorter;
        if (c.data.contains("self")) self = family_operand(c.data["self"], on);
        if (c.data.contains("sorter")) sorter = family_operand(c.data["sorter"], on);
        code = call_search(c.data, cuda, null == "seq" ? nullptr : seq.get(), null == "self" ? nullptr : self.get(),
                           sorter.get(), &ret0);
      } else {
        Tensor in = family_operand(c.data, on, 1.0);
        AtenTensorHandle self = null == "self" ? nullptr : in.get();
        if (std::string(op) == "sort_error") {
          code = call_sort(c.data, cuda, self, null == "ret0" ? nullptr : &ret0, null == "ret1" ? nullptr : &ret1);
        } else {
          code = call_histc(c.data, cuda, self, null == "ret0" ? nullptr : &ret0);
        }
      }
      EXPECT_EQ(ret0, nullptr);
      EXPECT_EQ(ret1, nullptr);
      expect_code(c, code, last_error_message());
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
