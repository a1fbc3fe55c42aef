// SPDX-License-Identifier: Apache-2.0
// testdata/select_ops.json (nonzero, nonzero_static, masked_select, index.Tensor through their
// C shims) and testdata/unique_ops.json (_unique2, unique_consecutive through
// slimcuda::ops::unique), PyTorch's values (tools/ops/make_select_fixtures.py), on the CPU
// and on CUDA (those cases skip without a GPU), bad input, and the CUDA ops under graph
// capture: refused without breaking the capture, or captured where no size is read back.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "csrc/ops/select/select_ops.h"
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

const bool kOwnsSelect = own_fixture("select_ops.json");
const bool kOwnsUnique = own_fixture("unique_ops.json");

// A fixture number: a JSON number, or "nan", "inf", "-inf".
double num(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return v.get<double>();
}

ScalarType dtype_of(const std::string& name) {
  static const std::pair<const char*, ScalarType> kNames[] = {
      {"float32", ScalarType::Float},     {"float64", ScalarType::Double}, {"float16", ScalarType::Half},
      {"bfloat16", ScalarType::BFloat16}, {"int64", ScalarType::Long},     {"int32", ScalarType::Int},
      {"int16", ScalarType::Short},       {"int8", ScalarType::Char},      {"uint8", ScalarType::Byte},
      {"bool", ScalarType::Bool}};
  for (const auto& [n, t] : kNames) {
    if (name == n) return t;
  }
  ADD_FAILURE() << "unknown dtype " << name;
  return ScalarType::Float;
}

bool floating(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}

template <typename T>
void put(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <typename T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

void store(char* p, ScalarType t, double v) {
  switch (t) {
    case ScalarType::Double:
      return put(p, v);
    case ScalarType::Float:
      return put(p, static_cast<float>(v));
    case ScalarType::Half:
      return put(p, convert::float_to_half(static_cast<float>(v)));
    case ScalarType::BFloat16:
      return put(p, convert::float_to_bfloat16(static_cast<float>(v)));
    case ScalarType::Long:
      return put(p, static_cast<int64_t>(v));
    case ScalarType::Int:
      return put(p, static_cast<int32_t>(v));
    case ScalarType::Short:
      return put(p, static_cast<int16_t>(v));
    case ScalarType::Char:
      return put(p, static_cast<int8_t>(v));
    case ScalarType::Byte:
      return put(p, static_cast<uint8_t>(v));
    case ScalarType::Bool:
      return put(p, static_cast<uint8_t>(v != 0.0 ? 1 : 0));
  }
}

double load(const char* p, ScalarType t) {
  switch (t) {
    case ScalarType::Double:
      return get<double>(p);
    case ScalarType::Float:
      return get<float>(p);
    case ScalarType::Half:
      return convert::half_to_float(get<uint16_t>(p));
    case ScalarType::BFloat16:
      return convert::bfloat16_to_float(get<uint16_t>(p));
    case ScalarType::Long:
      return static_cast<double>(get<int64_t>(p));
    case ScalarType::Int:
      return get<int32_t>(p);
    case ScalarType::Short:
      return get<int16_t>(p);
    case ScalarType::Char:
      return get<int8_t>(p);
    case ScalarType::Byte:
    case ScalarType::Bool:
      return get<uint8_t>(p);
  }
  return 0;
}

struct Deleter {
  void operator()(SlimTensor* t) const {
    (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(reinterpret_cast<AtenTensorHandle>(t));
  }
};
using Tensor = std::unique_ptr<SlimTensor, Deleter>;

AtenTensorHandle handle(const SlimTensor* t) { return reinterpret_cast<AtenTensorHandle>(const_cast<SlimTensor*>(t)); }
Tensor adopt(AtenTensorHandle h) { return Tensor(reinterpret_cast<SlimTensor*>(h)); }

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

// Element offset of row-major element j over sizes/strides.
int64_t offset_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t j) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (j % sizes[d]) * strides[d];
    j /= sizes[d];
  }
  return off;
}

Tensor empty(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, ScalarType t, bool cuda) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(
      SLIMCUDA_SHIM(aoti_torch_empty_strided)(
          static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), static_cast<int32_t>(t),
          cuda ? SLIMCUDA_SHIM(aoti_torch_device_type_cuda)() : SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
      0)
      << last_error_message();
  return adopt(h);
}

// The element values of a fixture spec (tools/ops/make_select_fixtures.py's rules).
std::vector<double> spec_values(const nlohmann::json& spec, int64_t seed, int64_t t) {
  const auto sizes = spec["sizes"].get<std::vector<int64_t>>();
  const ScalarType dt = dtype_of(spec["dtype"].get<std::string>());
  const int64_t n = numel(sizes);
  std::vector<double> out;
  if (spec.contains("values")) {
    for (const auto& v : spec["values"]) out.push_back(num(v));
    return out;
  }
  if (spec.contains("fill")) return std::vector<double>(static_cast<size_t>(n), num(spec["fill"]));
  const bool zeroing = spec.contains("zero_within");
  const double zw = zeroing ? spec["zero_within"].get<double>() : 0.0;
  for (int64_t j = 0; j < n; ++j) {
    double v = fixture_input_value(seed, t, j);
    if (zeroing && std::fabs(v) <= zw) v = 0.0;
    if (floating(dt)) {
      out.push_back(v);
    } else if (dt == ScalarType::Byte) {
      out.push_back(8 * std::fabs(v));
    } else if (dt == ScalarType::Bool) {
      out.push_back(v != 0.0 ? 1.0 : 0.0);
    } else {
      out.push_back(8 * v);
    }
  }
  return out;
}

// Operand t of a case as the spec describes it, on the CPU or cuda:0: a view at the spec's
// offset over a zero-filled flat storage, elements written row-major (the last write wins
// where a stride of 0 aliases).
Tensor make(const nlohmann::json& spec, int64_t seed, int64_t t, bool cuda) {
  cuda = cuda && spec.value("on", std::string("cuda")) != "cpu";  // an operand kept on the CPU
  const auto sizes = spec["sizes"].get<std::vector<int64_t>>();
  const auto strides = spec.value("strides", contiguous(sizes));
  const int64_t offset = spec.value("offset", int64_t{0});
  const ScalarType dt = dtype_of(spec["dtype"].get<std::string>());
  const std::vector<double> vals = spec_values(spec, seed, t);
  int64_t span = numel(sizes) == 0 ? 0 : 1;
  for (size_t d = 0; d < sizes.size() && span > 0; ++d) span += (sizes[d] - 1) * strides[d];
  const int64_t flat_n = offset + std::max<int64_t>(span, 1);
  Tensor flat = empty({flat_n}, {1}, dt, false);
  if (flat == nullptr) return nullptr;
  char* data = static_cast<char*>(flat->data_ptr());
  std::memset(data, 0, static_cast<size_t>(flat_n) * element_size(dt));
  for (size_t j = 0; j < vals.size(); ++j) {
    store(data + (offset + offset_of(sizes, strides, static_cast<int64_t>(j))) * element_size(dt), dt, vals[j]);
  }
  if (cuda) {
    Tensor dev = empty({flat_n}, {1}, dt, true);
    if (dev == nullptr) return nullptr;
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(handle(dev.get()), handle(flat.get()), 0), 0) << last_error_message();
    flat = std::move(dev);
  }
  AtenTensorHandle view = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(handle(flat.get()), static_cast<int64_t>(sizes.size()),
                                                          sizes.data(), strides.data(), offset, &view),
            0)
      << last_error_message();
  return adopt(view);
}

// A result's elements in row-major order (through a host copy for CUDA).
std::vector<double> values(const SlimTensor& t) {
  Tensor host;
  const SlimTensor* src = &t;
  if (t.device().is_cuda()) {
    host = empty(t.sizes(), t.strides(), t.dtype(), false);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(handle(host.get()), handle(&t), 0), 0) << last_error_message();
    src = host.get();
  }
  std::vector<double> out;
  const char* data = static_cast<const char*>(src->data_ptr());
  for (int64_t j = 0; j < src->numel(); ++j) {
    out.push_back(load(data + offset_of(src->sizes(), src->strides(), j) * src->element_size(), src->dtype()));
  }
  return out;
}

void expect_values(const std::string& what, const std::vector<double>& got, const nlohmann::json& want) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double w = num(want[i]);
    if (!(got[i] == w || (std::isnan(w) && std::isnan(got[i])))) {
      ADD_FAILURE() << what << ": element " << i << " = " << got[i] << ", want " << w;
      ++bad;
    }
  }
}

// One case's device and caller stream (CUDA: a stream of its own, selected for the shim).
struct CaseRun {
  bool cuda = false;
  std::unique_ptr<TestStream> stream;
  std::unique_ptr<CallerStreamGuard> guard;

  explicit CaseRun(const Case& c) : cuda(c.data["device"] == "cuda") {
    if (cuda) {
      stream = std::make_unique<TestStream>();
      EXPECT_TRUE(stream->ok());
      guard = std::make_unique<CallerStreamGuard>(stream->get());
    }
  }
  [[nodiscard]] StreamContext ctx() const {
    return cuda ? StreamContext::selected(stream->get(), 0) : StreamContext::unselected(-1);
  }
  void finish() const {
    if (cuda) {
      EXPECT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
    }
  }
};

// The case's operands (tensors_on overrides the device: CPU tensors into a CUDA op).
std::vector<Tensor> operands(const Case& c, bool cuda) {
  const int64_t seed = c.data.value("seed", int64_t{1});
  std::vector<Tensor> out;
  for (size_t t = 0; t < c.data["inputs"].size(); ++t) out.push_back(make(c.data["inputs"][t], seed, t, cuda));
  return out;
}

// The index list: one tensor per non-null spec (operand 1 + k), and the pointers the shim takes.
struct IndexList {
  std::vector<Tensor> tensors;
  std::vector<AtenTensorHandle> handles;
  std::vector<const AtenTensorHandle*> list;
};

std::unique_ptr<IndexList> index_list(const Case& c, bool cuda) {
  auto l = std::make_unique<IndexList>();
  const nlohmann::json& specs = c.data["indices"];
  const int64_t seed = c.data.value("seed", int64_t{1});
  l->handles.resize(specs.size(), nullptr);
  for (size_t k = 0; k < specs.size(); ++k) {
    if (specs[k].is_null()) continue;
    l->tensors.push_back(make(specs[k], seed, 1 + static_cast<int64_t>(k), cuda));
    l->handles[k] = handle(l->tensors.back().get());
  }
  for (size_t k = 0; k < specs.size(); ++k) l->list.push_back(specs[k].is_null() ? nullptr : &l->handles[k]);
  return l;
}

// Calls the case's shim (fn: its "fn", or its op) on the given operands; null names one
// argument passed as NULL.
int32_t call_shim(const Case& c, bool cuda, const std::vector<Tensor>& in, IndexList* idx, AtenTensorHandle* ret0) {
  const std::string fn = c.data.value("fn", c.op);
  const std::string null = c.data.value("null", std::string());
  AtenTensorHandle self = null == "self" ? nullptr : handle(in[0].get());
  AtenTensorHandle* out = null == "ret0" ? nullptr : ret0;
  if (fn == "nonzero") {
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(self, out) : SLIMCUDA_SHIM(aoti_torch_cpu_nonzero)(self, out);
  }
  if (fn == "nonzero_static") {
    const int64_t size = c.data["size"].get<int64_t>(), fill = c.data["fill_value"].get<int64_t>();
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(self, size, fill, out)
                : SLIMCUDA_SHIM(aoti_torch_cpu_nonzero_static)(self, size, fill, out);
  }
  if (fn == "masked_select") {
    AtenTensorHandle mask = null == "mask" ? nullptr : handle(in[1].get());
    return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_masked_select)(self, mask, out)
                : SLIMCUDA_SHIM(aoti_torch_cpu_masked_select)(self, mask, out);
  }
  const AtenTensorHandle** list = null == "indices" ? nullptr : idx->list.data();
  const auto len = static_cast<int64_t>(idx->list.size());
  return cuda ? SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(self, list, len, out)
              : SLIMCUDA_SHIM(aoti_torch_cpu_index_Tensor)(self, list, len, out);
}

void run_value_cases(const std::string& op) {
  for (const Case& c : cases("select_ops.json", op)) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    const std::vector<Tensor> in = operands(c, r.cuda);
    for (const Tensor& t : in) ASSERT_NE(t, nullptr);
    std::unique_ptr<IndexList> idx = op == "index" ? index_list(c, r.cuda) : nullptr;
    AtenTensorHandle out_h = nullptr;
    ASSERT_EQ(call_shim(c, r.cuda, in, idx.get(), &out_h), 0) << last_error_message();
    Tensor out = adopt(out_h);
    r.finish();
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->device().is_cuda(), r.cuda);
    const bool coords = op == "nonzero" || op == "nonzero_static";
    EXPECT_EQ(out->dtype(), coords ? ScalarType::Long : dtype_of(c.data["dtype"].get<std::string>()));
    EXPECT_EQ(out->sizes(), c.data["expect_sizes"].get<std::vector<int64_t>>());
    if (c.data.contains("expect_strides")) {
      EXPECT_EQ(out->strides(), c.data["expect_strides"].get<std::vector<int64_t>>()) << "PyTorch's layout";
    }
    expect_values(c.name, values(*out), c.data["expected"]);
  }
}

TEST(SelectOps, Nonzero) {
  run_value_cases("nonzero");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOps, NonzeroStatic) {
  run_value_cases("nonzero_static");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOps, MaskedSelect) {
  run_value_cases("masked_select");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOps, Index) {
  run_value_cases("index");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOps, BadInput) {
  for (const Case& c : cases("select_ops.json", "select_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const bool cuda = c.data["device"] == "cuda";
    const bool tensors_cuda = c.data.value("tensors_on", c.data["device"].get<std::string>()) == "cuda";
    const std::vector<Tensor> in = operands(c, tensors_cuda);
    std::unique_ptr<IndexList> idx = c.data.contains("indices") ? index_list(c, tensors_cuda) : nullptr;
    AtenTensorHandle out = nullptr;
    const int32_t code = call_shim(c, cuda, in, idx.get(), &out);
    expect_code(c, code, last_error_message());
    EXPECT_EQ(out, nullptr) << "a failed call hands nothing out";
    if (out != nullptr) (void)adopt(out);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// ops::unique (no dim) or ops::unique_dim for a unique_ops.json case.
Error call_unique(const Case& c, const SlimTensor& self, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]) {
  const std::string fn = c.data["fn"].get<std::string>();
  const bool consecutive = fn == "unique_consecutive";
  const std::string op = "aten::" + fn;
  const bool inverse = c.data.value("return_inverse", 1) != 0, counts = c.data.value("return_counts", 1) != 0;
  if (c.data.contains("dim") && !c.data["dim"].is_null()) {
    return ops::unique_dim(op.c_str(), self, c.data["dim"].get<int64_t>(), consecutive, inverse, counts, ctx, out);
  }
  return ops::unique(op.c_str(), self, consecutive, inverse, counts, ctx, out);
}

TEST(SelectOps, Unique) {
  for (const Case& c : cases("unique_ops.json", "unique")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    const std::vector<Tensor> in = operands(c, r.cuda);
    ASSERT_NE(in[0], nullptr);
    std::unique_ptr<SlimTensor> out[3];
    ASSERT_EQ(call_unique(c, *in[0], r.ctx(), out), Error::Ok) << last_error_message();
    r.finish();
    EXPECT_EQ(out[0]->dtype(), dtype_of(c.data["dtype"].get<std::string>()));
    EXPECT_EQ(out[1]->dtype(), ScalarType::Long);
    EXPECT_EQ(out[2]->dtype(), ScalarType::Long);
    EXPECT_EQ(out[0]->sizes(), c.data["expect_sizes"].get<std::vector<int64_t>>());
    EXPECT_EQ(out[1]->sizes(), c.data["inverse_sizes"].get<std::vector<int64_t>>());
    EXPECT_EQ(out[2]->sizes(), c.data["counts_sizes"].get<std::vector<int64_t>>());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i]->device().is_cuda(), r.cuda);
    expect_values(c.name + " values", values(*out[0]), c.data["expected"]);
    expect_values(c.name + " inverse", values(*out[1]), c.data["expected_inverse"]);
    expect_values(c.name + " counts", values(*out[2]), c.data["expected_counts"]);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOps, UniqueBadInput) {
  for (const Case& c : cases("unique_ops.json", "unique_error")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    const std::vector<Tensor> in = operands(c, r.cuda);
    ASSERT_NE(in[0], nullptr);
    std::unique_ptr<SlimTensor> out[3];
    const Error e = call_unique(c, *in[0], r.ctx(), out);
    expect_code(c, code_of(e), last_error_message());
    EXPECT_EQ(out[0], nullptr) << "a failed call hands nothing out";
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(SelectOpsBadInput, UniqueRefusesTooManyDimensions) {
  const std::vector<int64_t> sizes(13, 1);
  Tensor t = empty(sizes, contiguous(sizes), ScalarType::Float, false);
  std::unique_ptr<SlimTensor> out[3];
  EXPECT_EQ(ops::unique("aten::_unique2", *t, false, true, true, StreamContext::unselected(-1), out),
            Error::NotSupported);
  EXPECT_NE(std::string(last_error_message()).find("at most 12"), std::string::npos) << last_error_message();
  EXPECT_EQ(ops::unique("aten::_unique2", *t, false, true, true, StreamContext::unselected(-1), nullptr),
            Error::InvalidArgument);
  EXPECT_EQ(out[0], nullptr);
}

// ---- CUDA graph capture ----

// A float32 [6] CUDA tensor holding 0, 1, 0, 2, 0, 3.
Tensor sparse_cuda() {
  return make(nlohmann::json{{"dtype", "float32"}, {"sizes", {6}}, {"values", {0, 1, 0, 2, 0, 3}}}, 1, 0, true);
}

// Begins a capture on `stream`, runs `call`, ends the capture: the capture must still be
// valid (a synchronization inside would have invalidated it), and the graph is destroyed.
template <typename Call>
int32_t call_capturing(cudaStream_t stream, Call call) {
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const int32_t code = call();
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "the call broke the capture";
  if (graph != nullptr) {
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  }
  return code;
}

TEST(SelectOpsCuda, DataDependentSizesRefuseGraphCapture) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  CallerStreamGuard on_stream(stream.get());
  Tensor x = sparse_cuda();
  Tensor mask = make(nlohmann::json{{"dtype", "bool"}, {"sizes", {6}}, {"fill", 1}}, 1, 0, true);
  Tensor pos = make(nlohmann::json{{"dtype", "int64"}, {"sizes", {1}}, {"values", {2}}}, 1, 0, true);
  ASSERT_TRUE(x && mask && pos);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  AtenTensorHandle mask_h = handle(mask.get());
  const AtenTensorHandle* by_mask[1] = {&mask_h};
  struct Refused {
    const char* what;
    std::function<int32_t(AtenTensorHandle*)> call;
  };
  const Refused refused[] = {
      {"nonzero", [&](AtenTensorHandle* o) { return SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(handle(x.get()), o); }},
      {"masked_select",
       [&](AtenTensorHandle* o) { return SLIMCUDA_SHIM(aoti_torch_cuda_masked_select)(handle(x.get()), mask_h, o); }},
      {"index with a bool or uint8 index",
       [&](AtenTensorHandle* o) {
         return SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(handle(x.get()), by_mask, 1, o);
       }},
  };
  for (const Refused& r : refused) {
    SCOPED_TRACE(r.what);
    AtenTensorHandle out = nullptr;
    const int32_t code = call_capturing(stream.get(), [&]() { return r.call(&out); });
    const std::string message = last_error_message();
    EXPECT_EQ(code, code_of(Error::NotSupported));
    EXPECT_NE(message.find("has a data-dependent output size"), std::string::npos) << message;
    EXPECT_NE(message.find("which a CUDA graph cannot capture"), std::string::npos) << message;
    EXPECT_NE(message.find(r.what), std::string::npos) << message;
    EXPECT_EQ(out, nullptr);
  }
  {
    std::unique_ptr<SlimTensor> out[3];
    const Error e = static_cast<Error>(call_capturing(stream.get(), [&]() {
      return code_of(
          ops::unique("aten::_unique2", *x, false, true, true, StreamContext::selected(stream.get(), 0), out));
    }));
    EXPECT_EQ(e, Error::NotSupported);
    EXPECT_EQ(out[0], nullptr);
  }
  // The stream is still usable: the same call outside the capture works.
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(handle(x.get()), &out), 0) << last_error_message();
  Tensor nz = adopt(out);
  EXPECT_EQ(nz->sizes(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(values(*nz), (std::vector<double>{1, 3, 5}));
}

// nonzero_static and an index by int tensors read no size back: they are captured, and the
// replayed graph gives their values.
TEST(SelectOpsCuda, StaticSizesAreCaptured) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  CallerStreamGuard on_stream(stream.get());
  Tensor x = sparse_cuda();
  Tensor pos = make(nlohmann::json{{"dtype", "int64"}, {"sizes", {2}}, {"values", {3, -1}}}, 1, 0, true);
  ASSERT_TRUE(x && pos);
  // Warm up (CUB's kernels loaded, the allocator's blocks made) outside the capture.
  AtenTensorHandle warm = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(handle(x.get()), 4, -1, &warm), 0) << last_error_message();
  (void)adopt(warm);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  AtenTensorHandle pos_h = handle(pos.get());
  const AtenTensorHandle* by_pos[1] = {&pos_h};
  AtenTensorHandle fixed = nullptr, picked = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const int32_t c1 = SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(handle(x.get()), 4, -1, &fixed);
  const std::string m1 = last_error_message();
  const int32_t c2 = SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(handle(x.get()), by_pos, 1, &picked);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
  Tensor fixed_t = adopt(fixed), picked_t = adopt(picked);
  ASSERT_EQ(c1, 0) << m1;
  ASSERT_EQ(c2, 0) << last_error_message();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_EQ(values(*fixed_t), (std::vector<double>{1, 3, 5, -1}));
  EXPECT_EQ(fixed_t->strides(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(values(*picked_t), (std::vector<double>{2, 3}));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

// An index out of range on CUDA cannot be reported (no synchronization): its element is 0.
TEST(SelectOpsCuda, IndexOutOfRangeGivesZero) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  Tensor x = sparse_cuda();
  Tensor pos = make(nlohmann::json{{"dtype", "int64"}, {"sizes", {3}}, {"values", {5, 6, -7}}}, 1, 0, true);
  ASSERT_TRUE(x && pos);
  AtenTensorHandle pos_h = handle(pos.get());
  const AtenTensorHandle* by_pos[1] = {&pos_h};
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_cuda_index_Tensor)(handle(x.get()), by_pos, 1, &out), 0) << last_error_message();
  Tensor t = adopt(out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(values(*t), (std::vector<double>{3, 0, 0}));
}

}  // namespace
}  // namespace slimcuda::testing
