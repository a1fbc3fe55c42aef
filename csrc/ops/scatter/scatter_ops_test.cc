// SPDX-License-Identifier: Apache-2.0
// testdata/scatter_ops.json (PyTorch's values, tools/ops/make_scatter_fixtures.py) through the
// exported aoti_torch_{cpu,cuda}_scatter_src_out, _scatter_value_out, _scatter_reduce_two_out,
// _index_put and _masked_scatter of libslimcuda.so (CUDA cases skip without a GPU), and bad
// input: the code, the message, and nothing handed out or written. go/internal/opsfixture runs
// the same cases from Go.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "csrc/ops/testing/fixture_inputs.h"
#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/test_stream.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("scatter_ops.json");

std::string message() { return last_error_message(); }

int32_t dtype_code(const std::string& name) {
  if (name == "float32") return SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
  if (name == "float64") return SLIMCUDA_SHIM(aoti_torch_dtype_float64)();
  if (name == "float16") return SLIMCUDA_SHIM(aoti_torch_dtype_float16)();
  if (name == "bfloat16") return SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)();
  if (name == "int64") return SLIMCUDA_SHIM(aoti_torch_dtype_int64)();
  if (name == "int32") return SLIMCUDA_SHIM(aoti_torch_dtype_int32)();
  if (name == "int16") return SLIMCUDA_SHIM(aoti_torch_dtype_int16)();
  if (name == "int8") return SLIMCUDA_SHIM(aoti_torch_dtype_int8)();
  if (name == "uint8") return SLIMCUDA_SHIM(aoti_torch_dtype_uint8)();
  if (name == "bool") return SLIMCUDA_SHIM(aoti_torch_dtype_bool)();
  ADD_FAILURE() << "unknown dtype " << name;
  return -1;
}

// Elements through the library's own conversions (convert.h: what copy_ uses).
void store(char* p, int32_t dtype, double v) {
  convert::store(p, dtype, convert::Wide{v, convert::float_to_int64(v), true});
}
double load(const char* p, int32_t dtype) { return convert::load(p, dtype).f; }

size_t dtype_size(int32_t code) { return SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(code); }

struct Deleter {
  void operator()(AtenTensorOpaque* t) const { (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t); }
};
using Tensor = std::unique_ptr<AtenTensorOpaque, Deleter>;

std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(sizes[d], 1);
  return s;
}

// f(row-major index, element offset) for every element.
void each_element(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                  const std::function<void(int64_t, int64_t)>& f) {
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

// A tensor on the CPU or cuda:0: storage zero-filled, element j (row-major) = value(j). A CUDA
// tensor gets its whole storage in one flat copy and the view made there.
Tensor make(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype, bool cuda,
            const std::function<double(int64_t)>& value) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(nd, sizes.data(), strides.data(), dtype,
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
            0)
      << message();
  Tensor host(h);
  int64_t storage = 0;
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(h, &storage), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(h, &data), 0);
  if (data != nullptr) std::memset(data, 0, static_cast<size_t>(storage));
  const size_t es = dtype_size(dtype);
  each_element(sizes, strides,
               [&](int64_t j, int64_t off) { store(static_cast<char*>(data) + off * es, dtype, value(j)); });
  if (!cuda) return host;
  const int64_t flat = storage / static_cast<int64_t>(es), one = 1;
  AtenTensorHandle hf = nullptr, d = nullptr, view = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(h, 1, &flat, &one, 0, &hf), 0) << message();
  Tensor host_flat(hf);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &flat, &one, dtype, SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(),
                                                    0, &d),
            0)
      << message();
  Tensor dev(d);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(d, hf, 0), 0) << message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(d, nd, sizes.data(), strides.data(), 0, &view), 0)
      << message();
  return Tensor(view);
}

std::vector<int64_t> ints(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? j[key].get<std::vector<int64_t>>() : std::vector<int64_t>{};
}

double number(const nlohmann::json& v) {
  if (!v.is_string()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "nan") return std::nan("");
  return s == "inf" ? HUGE_VAL : -HUGE_VAL;
}

std::vector<double> numbers(const nlohmann::json& a) {
  std::vector<double> out;
  for (const auto& v : a) out.push_back(number(v));
  return out;
}

// One operand of a case (see the fixture's description): stored values or generated ones.
Tensor operand(const Case& c, const nlohmann::json& spec, bool cuda) {
  const std::string dtype = spec.value("dtype", c.data["dtype"].get<std::string>());
  const std::vector<int64_t> sizes = ints(spec, "sizes");
  const std::vector<int64_t> strides = spec.contains("strides") ? ints(spec, "strides") : contiguous(sizes);
  const std::vector<double> stored = spec.contains("values") ? numbers(spec["values"]) : std::vector<double>{};
  const int64_t seed = c.data["seed"].get<int64_t>(), t = spec.value("gen", int64_t{0});
  return make(sizes, strides, dtype_code(dtype), cuda, [&](int64_t j) {
    if (spec.contains("values")) return stored[static_cast<size_t>(j)];
    const double v = fixture_input_value(seed, t, j);
    if (dtype == "bool") return v >= 0 ? 1.0 : 0.0;
    if (dtype == "uint8") return 8 * v + 8;
    if (dtype.rfind("int", 0) == 0) return 8 * v;
    return v;
  });
}

struct Meta {
  std::vector<int64_t> sizes, strides;
  int32_t dtype = -1;
  bool cuda = false;
};

Meta meta_of(AtenTensorHandle t) {
  Meta m;
  int64_t nd = 0, *sz = nullptr, *st = nullptr;
  int32_t type = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dim)(t, &nd), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_sizes)(t, &sz), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_strides)(t, &st), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_dtype)(t, &m.dtype), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_type)(t, &type), 0);
  m.sizes.assign(sz, sz + nd);
  m.strides.assign(st, st + nd);
  m.cuda = type == SLIMCUDA_SHIM(aoti_torch_device_type_cuda)();
  return m;
}

// The tensor's elements in row-major order, through its strides (a CUDA tensor through a
// host copy, which also waits for the op on the legacy stream).
std::vector<double> read(AtenTensorHandle t) {
  const Meta m = meta_of(t);
  Tensor host;
  AtenTensorHandle src = t;
  if (m.cuda) {
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(
        SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(m.sizes.size()), m.sizes.data(), m.strides.data(),
                                                m.dtype, SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
        0);
    host.reset(h);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(h, t, 0), 0) << message();
    src = h;
  }
  void* data = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(src, &data), 0);
  std::vector<double> out;
  const size_t es = dtype_size(m.dtype);
  each_element(m.sizes, m.strides,
               [&](int64_t, int64_t off) { out.push_back(load(static_cast<char*>(data) + off * es, m.dtype)); });
  return out;
}

void expect_values(const Case& c, AtenTensorHandle t) {
  const Meta m = meta_of(t);
  EXPECT_EQ(m.sizes, ints(c.data, "expect_sizes"));
  if (c.data.contains("expect_strides")) {
    EXPECT_EQ(m.strides, ints(c.data, "expect_strides")) << "the output's layout (ATen's meta function's)";
  }
  EXPECT_EQ(m.dtype, dtype_code(c.data["dtype"]));
  EXPECT_EQ(m.cuda, c.data["device"] == "cuda");
  const std::vector<double> got = read(t), want = numbers(c.data["expected"]);
  ASSERT_EQ(got.size(), want.size());
  const double atol = c.data["atol"].get<double>(), rtol = c.data["rtol"].get<double>();
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const bool ok = std::isnan(want[i])
                        ? std::isnan(got[i])
                        : got[i] == want[i] || std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok) {
      ADD_FAILURE() << c.name << ": element " << i << " = " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

// ---- the calls ----

struct ScatterCall {
  Tensor self, index, src, out_owner;
  AtenTensorHandle out = nullptr;
};

// A scatter case's operands on `cuda` or not; out: the case's operand, self itself
// ("self"), or a new zeroed tensor of self's sizes.
ScatterCall scatter_operands(const Case& c, bool cuda) {
  ScatterCall s;
  s.self = operand(c, c.data["self"], cuda);
  s.index = operand(c, c.data["index"], cuda);
  if (c.data.contains("src")) s.src = operand(c, c.data["src"], cuda);
  if (c.data.contains("out") && c.data["out"].is_string()) {
    s.out = s.self.get();
  } else if (c.data.contains("out")) {
    s.out_owner = operand(c, c.data["out"], cuda);
    s.out = s.out_owner.get();
  } else {
    const std::vector<int64_t> sizes = ints(c.data["self"], "sizes");
    s.out_owner = make(sizes, contiguous(sizes), dtype_code(c.data["dtype"]), cuda, [](int64_t) { return 0.0; });
    s.out = s.out_owner.get();
  }
  return s;
}

int32_t call_scatter(const Case& c, bool cuda, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle index,
                     AtenTensorHandle src, const char* reduce) {
  const std::string fn = c.data["fn"];
  const int64_t dim = c.data["dim"].get<int64_t>();
  if (fn == "scatter_src")
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_src_out)(out, self, dim, index, src)
                : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(out, self, dim, index, src);
  if (fn == "scatter_value") {
    const double value = number(c.data["value"]);
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_value_out)(out, self, dim, index, value)
                : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(out, self, dim, index, value);
  }
  const int32_t include_self = c.data.value("include_self", 1);
  if (fn == "scatter_reduce")
    return cuda
               ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_reduce_two_out)(out, self, dim, index, src, reduce, include_self)
               : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_reduce_two_out)(out, self, dim, index, src, reduce, include_self);
  ADD_FAILURE() << "unknown scatter fn " << fn;
  return -1;
}

struct IndexPutCall {
  Tensor self, values;
  std::vector<Tensor> index_owners;
  std::vector<AtenTensorHandle> handles;
  std::vector<const AtenTensorHandle*> indices;  // NULL for None
};

IndexPutCall index_put_operands(const Case& c, bool cuda) {
  IndexPutCall s;
  s.self = operand(c, c.data["self"], cuda);
  s.values = operand(c, c.data["values"], cuda);
  for (const auto& spec : c.data["indices"]) {
    s.index_owners.push_back(spec.is_null() ? nullptr : operand(c, spec, cuda));
    s.handles.push_back(s.index_owners.back().get());
  }
  for (size_t i = 0; i < s.handles.size(); ++i) s.indices.push_back(s.handles[i] == nullptr ? nullptr : &s.handles[i]);
  return s;
}

int32_t call_index_put(bool cuda, AtenTensorHandle self, IndexPutCall& s, AtenTensorHandle values, int32_t accumulate,
                       AtenTensorHandle* ret0) {
  const int64_t n = static_cast<int64_t>(s.indices.size());
  return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_index_put)(self, s.indices.data(), n, values, accumulate, ret0)
              : SLIMCUDA_SHIM(aoti_torch_cpu_index_put)(self, s.indices.data(), n, values, accumulate, ret0);
}

int32_t call_masked_scatter(bool cuda, AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
                            AtenTensorHandle* ret0) {
  return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_masked_scatter)(self, mask, source, ret0)
              : SLIMCUDA_SHIM(aoti_torch_cpu_masked_scatter)(self, mask, source, ret0);
}

// ---- value cases ----

TEST(ScatterOps, Scatter) {
  for (const Case& c : cases("scatter_ops.json", "scatter")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const bool cuda = c.data["device"] == "cuda";
    ScatterCall s = scatter_operands(c, cuda);
    const std::string reduce = c.data.value("reduce", "");
    ASSERT_EQ(call_scatter(c, cuda, s.out, s.self.get(), s.index.get(), s.src.get(), reduce.c_str()), 0) << message();
    expect_values(c, s.out);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(ScatterOps, IndexPut) {
  for (const Case& c : cases("scatter_ops.json", "index_put")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const bool cuda = c.data["device"] == "cuda";
    IndexPutCall s = index_put_operands(c, cuda);
    AtenTensorHandle ret0 = nullptr;
    ASSERT_EQ(call_index_put(cuda, s.self.get(), s, s.values.get(), c.data["accumulate"].get<int32_t>(), &ret0), 0)
        << message();
    Tensor out(ret0);
    expect_values(c, ret0);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(ScatterOps, MaskedScatter) {
  for (const Case& c : cases("scatter_ops.json", "masked_scatter")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const bool cuda = c.data["device"] == "cuda";
    Tensor self = operand(c, c.data["self"], cuda), mask = operand(c, c.data["mask"], cuda),
           source = operand(c, c.data["source"], cuda);
    AtenTensorHandle ret0 = nullptr;
    ASSERT_EQ(call_masked_scatter(cuda, self.get(), mask.get(), source.get(), &ret0), 0) << message();
    Tensor out(ret0);
    expect_values(c, ret0);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// ---- bad input: the code and message, nothing handed out, a scatter's out untouched ----

TEST(ScatterOps, BadInput) {
  for (const char* op : {"scatter_error", "index_put_error", "masked_scatter_error"}) {
    for (const Case& c : cases("scatter_ops.json", op)) {
      SCOPED_TRACE(c.name);
      if (!begin_case(c)) continue;
      const bool cuda = c.data["device"] == "cuda";
      const bool on_cuda = c.data.value("tensors_on", c.data["device"].get<std::string>()) == "cuda";
      const std::string null = c.data.value("null", "");
      auto pick = [&](const std::string& what, AtenTensorHandle h) { return null == what ? nullptr : h; };
      AtenTensorHandle ret0 = nullptr;
      int32_t code = -1;
      if (std::string(op) == "scatter_error") {
        ScatterCall s = scatter_operands(c, on_cuda);
        const std::vector<double> before = read(s.out);
        const std::string reduce = c.data.value("reduce", "");
        code = call_scatter(c, cuda, pick("out", s.out), pick("self", s.self.get()), pick("index", s.index.get()),
                            pick("src", s.src.get()), null == "reduce" ? nullptr : reduce.c_str());
        EXPECT_EQ(read(s.out), before) << "a refused scatter wrote into out";
      } else if (std::string(op) == "index_put_error") {
        IndexPutCall s = index_put_operands(c, on_cuda);
        code = call_index_put(cuda, pick("self", s.self.get()), s, pick("values", s.values.get()),
                              c.data["accumulate"].get<int32_t>(), null == "ret0" ? nullptr : &ret0);
      } else {
        Tensor self = operand(c, c.data["self"], on_cuda), mask = operand(c, c.data["mask"], on_cuda),
               source = operand(c, c.data["source"], on_cuda);
        code = call_masked_scatter(cuda, pick("self", self.get()), pick("mask", mask.get()),
                                   pick("source", source.get()), null == "ret0" ? nullptr : &ret0);
      }
      EXPECT_EQ(ret0, nullptr);
      Tensor leaked(ret0);
      expect_code(c, code, message());
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// Memory shared between out and the other operands (not in the fixtures: views of one
// storage): refused before anything is written, except out == self's own view (in place).
TEST(ScatterOps, OverlappingOutRefused) {
  const int32_t f32 = SLIMCUDA_SHIM(aoti_torch_dtype_float32)();
  Tensor base = make({8}, {1}, f32, false, [](int64_t j) { return static_cast<double>(j); });
  Tensor index = make({1}, {1}, SLIMCUDA_SHIM(aoti_torch_dtype_int64)(), false, [](int64_t) { return 0.0; });
  auto view = [&](int64_t offset, int64_t stride) {
    const int64_t size = 4;
    AtenTensorHandle h = nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(base.get(), 1, &size, &stride, offset, &h), 0);
    return Tensor(h);
  };
  Tensor a = view(0, 1), shifted = view(2, 1), far = view(4, 1), repeated = view(4, 0);
  const std::vector<double> before = read(base.get());
  auto expect = [&](int32_t code, const char* fragment) {
    EXPECT_EQ(code, static_cast<int32_t>(Error::InvalidArgument));
    EXPECT_NE(message().find(fragment), std::string::npos) << message();
    EXPECT_EQ(read(base.get()), before) << "a refused scatter wrote";
  };
  expect(SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(shifted.get(), a.get(), 0, index.get(), far.get()),
         "out partly overlaps self");
  expect(SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(far.get(), a.get(), 0, index.get(), far.get()),
         "out and src share memory");
  expect(SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(a.get(), far.get(), 0, a.get(), 1.0),
         "Expected dtype int32/int64 for index");
  expect(SLIMCUDA_SHIM(aoti_torch_cpu_scatter_value_out)(repeated.get(), a.get(), 0, index.get(), 1.0),
         "out has overlapping elements");
  // In place: out is self's own view.
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_cpu_scatter_src_out)(a.get(), a.get(), 0, index.get(), far.get()), 0) << message();
  EXPECT_EQ(read(a.get()), (std::vector<double>{4, 1, 2, 3}));
}

// The CUDA shims captured into a CUDA graph on the caller's stream and replayed: a
// synchronization, an allocation outside the caching allocator (mean's counters,
// masked_scatter's prefix sum and CUB's scratch, the new outputs) or work on another stream
// would break the capture. The replay must compute what the CPU ops do (sums of multiples of
// 1/8: exact in any order).
TEST(ScatterOpsCuda, CapturesIntoACudaGraphOnTheCallerStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const int32_t f32 = SLIMCUDA_SHIM(aoti_torch_dtype_float32)(), i64 = SLIMCUDA_SHIM(aoti_torch_dtype_int64)(),
                b8 = SLIMCUDA_SHIM(aoti_torch_dtype_bool)();
  auto self_value = [](int64_t j) { return static_cast<double>(j % 9) / 8.0; };
  auto src_value = [](int64_t j) { return static_cast<double>(j % 5) / 8.0 - 0.25; };
  auto index_value = [](int64_t j) { return static_cast<double>((j * 7) % 64); };
  auto mask_value = [](int64_t j) { return j % 3 == 0 ? 1.0 : 0.0; };
  struct Operands {
    Tensor self, src, index, mask, out;
  };
  auto operands = [&](bool cuda) {
    Operands o;
    o.self = make({64}, {1}, f32, cuda, self_value);
    o.src = make({256}, {1}, f32, cuda, src_value);
    o.index = make({256}, {1}, i64, cuda, index_value);
    o.mask = make({64}, {1}, b8, cuda, mask_value);
    o.out = make({64}, {1}, f32, cuda, [](int64_t) { return 0.0; });
    return o;
  };
  // The three calls: scatter_reduce mean into out, masked_scatter and index_put (accumulate)
  // into new tensors.
  auto calls = [](bool cuda, Operands& o, Tensor* masked, Tensor* put) {
    AtenTensorHandle r1 = nullptr, r2 = nullptr, ix = o.index.get();
    const AtenTensorHandle* indices[1] = {&ix};
    int32_t code = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_scatter_reduce_two_out)(o.out.get(), o.self.get(), 0, ix,
                                                                                o.src.get(), "mean", 0)
                        : SLIMCUDA_SHIM(aoti_torch_cpu_scatter_reduce_two_out)(o.out.get(), o.self.get(), 0, ix,
                                                                               o.src.get(), "mean", 0);
    if (code == 0) code = call_masked_scatter(cuda, o.self.get(), o.mask.get(), o.src.get(), &r1);
    masked->reset(r1);
    if (code == 0) {
      code = cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_index_put)(o.self.get(), indices, 1, o.src.get(), 1, &r2)
                  : SLIMCUDA_SHIM(aoti_torch_cpu_index_put)(o.self.get(), indices, 1, o.src.get(), 1, &r2);
    }
    put->reset(r2);
    return code;
  };
  Operands cpu = operands(false);
  Tensor want_masked, want_put;
  ASSERT_EQ(calls(false, cpu, &want_masked, &want_put), 0) << message();

  Operands dev = operands(true);
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  CallerStreamGuard on_stream(stream.get());
  {  // eager first: the caching allocator then holds blocks the captured calls reuse
    Tensor masked, put;
    ASSERT_EQ(calls(true, dev, &masked, &put), 0) << message();
    EXPECT_EQ(read(dev.out.get()), read(cpu.out.get()));
    EXPECT_EQ(read(masked.get()), read(want_masked.get()));
    EXPECT_EQ(read(put.get()), read(want_put.get()));
  }
  const cudaStream_t cs = stream.get();
  ASSERT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  Tensor masked, put;
  const int32_t code = calls(true, dev, &masked, &put);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(cs, &graph);
  ASSERT_EQ(code, 0) << message();
  ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
  void* out_data = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(dev.out.get(), &out_data), 0);
  ASSERT_EQ(cudaMemsetAsync(out_data, 0, 64 * sizeof(float), cs), cudaSuccess);  // the replay must rewrite it
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, cs), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(cs), cudaSuccess);
  EXPECT_EQ(read(dev.out.get()), read(cpu.out.get())) << "scatter_reduce's replay";
  EXPECT_EQ(read(masked.get()), read(want_masked.get())) << "masked_scatter's replay";
  EXPECT_EQ(read(put.get()), read(want_put.get())) << "index_put's replay";
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace slimcuda::testing
