// SPDX-License-Identifier: Apache-2.0
// testdata/vision_ops.json (torchvision's values, tools/ops/make_vision_fixtures.py) through
// slimcuda::ops' detection ops on the CPU and on CUDA (those cases skip without a GPU), the
// CUDA nms refused under graph capture, and bad input.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "csrc/ops/testing/fixture_inputs.h"
#include "csrc/ops/vision/vision_ops.h"
#include "csrc/tensor/convert.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/test_stream.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("vision_ops.json");

double input_value(int64_t seed, int64_t t, int64_t j) { return fixture_input_value(seed, t, j); }

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
  if (name == "float64") return ScalarType::Double;
  if (name == "float16") return ScalarType::Half;
  if (name == "bfloat16") return ScalarType::BFloat16;
  if (name == "int32") return ScalarType::Int;
  if (name == "int64") return ScalarType::Long;
  return ScalarType::Float;
}

void store(char* p, ScalarType t, double v) {
  const float f = static_cast<float>(v);
  switch (t) {
    case ScalarType::Double:
      std::memcpy(p, &v, 8);
      break;
    case ScalarType::Half: {
      const uint16_t h = convert::float_to_half(f);
      std::memcpy(p, &h, 2);
      break;
    }
    case ScalarType::BFloat16: {
      const uint16_t h = convert::float_to_bfloat16(f);
      std::memcpy(p, &h, 2);
      break;
    }
    case ScalarType::Int: {
      const auto i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      break;
    }
    case ScalarType::Long: {
      const auto i = static_cast<int64_t>(v);
      std::memcpy(p, &i, 8);
      break;
    }
    default:
      std::memcpy(p, &f, 4);
  }
}

double load(const char* p, ScalarType t) {
  switch (t) {
    case ScalarType::Double: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case ScalarType::Half:
    case ScalarType::BFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return t == ScalarType::Half ? convert::half_to_float(h) : convert::bfloat16_to_float(h);
    }
    case ScalarType::Int: {
      int32_t i;
      std::memcpy(&i, p, 4);
      return i;
    }
    case ScalarType::Long: {
      int64_t i;
      std::memcpy(&i, p, 8);
      return static_cast<double>(i);
    }
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
  }
}

struct Deleter {
  void operator()(SlimTensor* t) const {
    (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(reinterpret_cast<AtenTensorHandle>(t));
  }
};
using Tensor = std::unique_ptr<SlimTensor, Deleter>;

AtenTensorHandle handle(const SlimTensor* t) { return reinterpret_cast<AtenTensorHandle>(const_cast<SlimTensor*>(t)); }

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

Tensor empty(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, ScalarType t, bool cuda) {
  AtenTensorHandle h = nullptr;
  EXPECT_EQ(
      SLIMCUDA_SHIM(aoti_torch_empty_strided)(
          static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), static_cast<int32_t>(t),
          cuda ? SLIMCUDA_SHIM(aoti_torch_device_type_cuda)() : SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &h),
      0)
      << last_error_message();
  return Tensor(reinterpret_cast<SlimTensor*>(h));
}

// A tensor (CPU, or CUDA through a host copy) whose element j in row-major order over its
// sizes is value(j), stored through `strides` (default contiguous).
Tensor make(const std::vector<int64_t>& sizes, std::vector<int64_t> strides, ScalarType t, bool cuda,
            const std::function<double(int64_t)>& value) {
  if (strides.empty()) strides = contiguous(sizes);
  Tensor host = empty(sizes, strides, t, false);
  if (host == nullptr) return nullptr;
  const int64_t n = numel(sizes), nd = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> idx(sizes.size(), 0);
  char* data = static_cast<char*>(host->data_ptr());
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * strides[d];
    store(data + off * static_cast<int64_t>(element_size(t)), t, value(j));
    for (int64_t d = nd; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  if (!cuda) return host;
  Tensor dev = empty(sizes, strides, t, true);
  if (dev == nullptr) return nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(handle(dev.get()), handle(host.get()), 0), 0) << last_error_message();
  return dev;
}

// A contiguous result's elements (copied to the host first when on CUDA).
std::vector<double> values(const SlimTensor& t) {
  Tensor host;
  const SlimTensor* src = &t;
  if (t.device().is_cuda()) {
    host = empty(t.sizes(), t.strides(), t.dtype(), false);
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(handle(host.get()), handle(&t), 0), 0) << last_error_message();
    src = host.get();
  }
  EXPECT_TRUE(src->is_contiguous());
  std::vector<double> out;
  const char* data = static_cast<const char*>(src->data_ptr());
  for (int64_t i = 0; i < src->numel(); ++i) out.push_back(load(data + i * src->element_size(), src->dtype()));
  return out;
}

// One case's device, dtype and stream.
struct CaseRun {
  bool cuda = false;
  ScalarType dtype = ScalarType::Float;
  std::unique_ptr<TestStream> stream;
  StreamContext ctx = StreamContext::unselected(-1);

  explicit CaseRun(const Case& c) {
    cuda = c.data["device"] == "cuda";
    dtype = dtype_of(c.data["dtype"].get<std::string>());
    if (cuda) {
      stream = std::make_unique<TestStream>();
      EXPECT_TRUE(stream->ok());
      ctx = StreamContext::selected(stream->get(), 0);
    }
  }
  // The op's work done before its outputs are read through the legacy stream.
  void finish() const {
    if (cuda) {
      EXPECT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
    }
  }
};

// Generated operand t of the case, in the case's dtype and place.
Tensor generated(const Case& c, const CaseRun& r, int64_t t) {
  const nlohmann::json& spec = c.data["inputs"][t];
  const int64_t seed = c.data["seed"].get<int64_t>();
  const double scale = spec.value("scale", 1.0);
  const std::vector<int64_t> strides = spec.value("strides", std::vector<int64_t>{});
  return make(spec["sizes"].get<std::vector<int64_t>>(), strides, r.dtype, r.cuda,
              [&](int64_t j) { return input_value(seed, t, j) * scale; });
}

// A stored [rows, width] table (dets, rois) as a tensor.
Tensor table(const nlohmann::json& rows, int64_t width, const CaseRun& r) {
  std::vector<double> flat;
  for (const auto& row : rows) {
    for (const auto& v : row) flat.push_back(num(v));
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  return make({n, width}, {}, r.dtype, r.cuda, [&](int64_t j) { return flat[static_cast<size_t>(j)]; });
}

void expect_close(const Case& c, const std::vector<double>& got, const nlohmann::json& want_json) {
  ASSERT_EQ(got.size(), want_json.size()) << c.name;
  const double atol = c.data["atol"].get<double>(), rtol = c.data["rtol"].get<double>();
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double want = num(want_json[i]);
    const bool ok = std::isnan(want) ? std::isnan(got[i]) : std::fabs(got[i] - want) <= atol + rtol * std::fabs(want);
    if (!ok) {
      ADD_FAILURE() << c.name << ": element " << i << " = " << got[i] << ", want " << want;
      ++bad;
    }
  }
}

TEST(VisionOps, Nms) {
  for (const Case& c : cases("vision_ops.json", "nms")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    Tensor dets = table(c.data["dets"], 4, r);
    std::vector<double> sc;
    for (const auto& v : c.data["scores"]) sc.push_back(num(v));
    Tensor scores = make({static_cast<int64_t>(sc.size())}, {}, r.dtype, r.cuda,
                         [&](int64_t j) { return sc[static_cast<size_t>(j)]; });
    ASSERT_TRUE(dets && scores);
    std::unique_ptr<SlimTensor> out;
    ASSERT_EQ(ops::nms(*dets, *scores, c.data["iou_threshold"].get<double>(), r.ctx, &out), Error::Ok)
        << last_error_message();
    r.finish();
    EXPECT_EQ(out->dtype(), ScalarType::Long);
    EXPECT_EQ(out->device().is_cuda(), r.cuda);
    const std::vector<double> got = values(*out);
    std::vector<double> want;
    for (const auto& v : c.data["expected"]) want.push_back(v.get<double>());
    EXPECT_EQ(got, want);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// Every case of one roi op: the output, and the argmax / channel_mapping when it has one.
void run_roi_cases(const std::string& op) {
  for (const Case& c : cases("vision_ops.json", op)) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    Tensor input = generated(c, r, 0);
    Tensor rois = table(c.data["rois"], 5, r);
    ASSERT_TRUE(input && rois);
    const double ss = c.data["spatial_scale"].get<double>();
    const int64_t ph = c.data["pooled_height"].get<int64_t>(), pw = c.data["pooled_width"].get<int64_t>();
    std::unique_ptr<SlimTensor> out, index;
    Error e = Error::Internal;
    if (op == "roi_align") {
      e = ops::roi_align(*input, *rois, ss, ph, pw, c.data["sampling_ratio"].get<int64_t>(),
                         c.data["aligned"].get<bool>(), r.ctx, &out);
    } else if (op == "roi_pool") {
      e = ops::roi_pool(*input, *rois, ss, ph, pw, r.ctx, &out, &index);
    } else if (op == "ps_roi_align") {
      e = ops::ps_roi_align(*input, *rois, ss, ph, pw, c.data["sampling_ratio"].get<int64_t>(), r.ctx, &out, &index);
    } else {
      e = ops::ps_roi_pool(*input, *rois, ss, ph, pw, r.ctx, &out, &index);
    }
    ASSERT_EQ(e, Error::Ok) << last_error_message();
    r.finish();
    EXPECT_EQ(out->sizes(), c.data["expect_sizes"].get<std::vector<int64_t>>());
    EXPECT_EQ(out->dtype(), r.dtype);
    expect_close(c, values(*out), c.data["expected"]);
    if (c.data.contains("expected_index")) {
      ASSERT_NE(index, nullptr);
      EXPECT_EQ(index->dtype(), dtype_of(c.data["index_dtype"].get<std::string>()));
      std::vector<double> want;
      for (const auto& v : c.data["expected_index"]) want.push_back(v.get<double>());
      EXPECT_EQ(values(*index), want);
    }
  }
}

TEST(VisionOps, RoiAlign) {
  run_roi_cases("roi_align");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(VisionOps, RoiPool) {
  run_roi_cases("roi_pool");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(VisionOps, PsRoiAlign) {
  run_roi_cases("ps_roi_align");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(VisionOps, PsRoiPool) {
  run_roi_cases("ps_roi_pool");
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(VisionOps, DeformConv2d) {
  for (const Case& c : cases("vision_ops.json", "deform_conv2d")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    CaseRun r(c);
    std::vector<Tensor> in;
    for (int64_t t = 0; t < 5; ++t) in.push_back(generated(c, r, t));
    for (const Tensor& t : in) ASSERT_NE(t, nullptr);
    const auto s = c.data["stride"].get<std::vector<int64_t>>(), p = c.data["padding"].get<std::vector<int64_t>>(),
               d = c.data["dilation"].get<std::vector<int64_t>>();
    std::unique_ptr<SlimTensor> out;
    ASSERT_EQ(ops::deform_conv2d(*in[0], *in[1], *in[2], *in[3], *in[4], s[0], s[1], p[0], p[1], d[0], d[1],
                                 c.data["groups"].get<int64_t>(), c.data["offset_groups"].get<int64_t>(),
                                 c.data["use_mask"].get<bool>(), r.ctx, &out),
              Error::Ok)
        << last_error_message();
    r.finish();
    EXPECT_EQ(out->sizes(), c.data["expect_sizes"].get<std::vector<int64_t>>());
    expect_close(c, values(*out), c.data["expected"]);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// ---- CUDA nms under graph capture ----

TEST(VisionOpsCuda, NmsRefusesGraphCapture) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  Tensor dets = make({2, 4}, {}, ScalarType::Float, true, [](int64_t j) { return static_cast<double>(j); });
  Tensor scores = make({2}, {}, ScalarType::Float, true, [](int64_t j) { return static_cast<double>(j); });
  ASSERT_TRUE(dets && scores);
  ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  std::unique_ptr<SlimTensor> out;
  const Error e = ops::nms(*dets, *scores, 0.5, StreamContext::selected(stream.get(), 0), &out);
  const std::string message = last_error_message();
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess) << "the refusal left the capture intact";
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  EXPECT_EQ(e, Error::NotSupported);
  EXPECT_NE(message.find("depends on the data"), std::string::npos) << message;
  EXPECT_EQ(out, nullptr);
}

// ---- bad input (CPU: the checks are the same code for both devices) ----

Tensor cpu(const std::vector<int64_t>& sizes, ScalarType t = ScalarType::Float) {
  return make(sizes, {}, t, false, [](int64_t j) { return static_cast<double>(j % 7); });
}

void expect_error(Error got, Error want, const char* fragment) {
  EXPECT_EQ(got, want);
  const std::string m = last_error_message();
  EXPECT_NE(m.find(fragment), std::string::npos) << "message: " << m;
}

const StreamContext kCpu = StreamContext::unselected(-1);

TEST(VisionOpsBadInput, Nms) {
  std::unique_ptr<SlimTensor> out;
  Tensor dets = cpu({3, 4}), scores = cpu({3});
  expect_error(ops::nms(*cpu({3, 5}), *scores, 0.5, kCpu, &out), Error::InvalidArgument, "[N, 4]");
  expect_error(ops::nms(*cpu({12}), *scores, 0.5, kCpu, &out), Error::InvalidArgument, "dets must be 2-D");
  expect_error(ops::nms(*dets, *cpu({4}), 0.5, kCpu, &out), Error::InvalidArgument, "must be equal");
  expect_error(ops::nms(*dets, *cpu({3, 1}), 0.5, kCpu, &out), Error::InvalidArgument, "scores must be 1-D");
  expect_error(ops::nms(*dets, *cpu({3}, ScalarType::Double), 0.5, kCpu, &out), Error::InvalidArgument,
               "scores is float64, dets is float32");
  expect_error(ops::nms(*cpu({3, 4}, ScalarType::Long), *cpu({3}, ScalarType::Long), 0.5, kCpu, &out),
               Error::NotSupported, "int64 is not supported on CPU");
  expect_error(ops::nms(*cpu({3, 4}, ScalarType::Half), *cpu({3}, ScalarType::Half), 0.5, kCpu, &out),
               Error::NotSupported, "float16 is not supported on CPU");
  expect_error(ops::nms(*dets, *scores, 0.5, kCpu, nullptr), Error::InvalidArgument, "null output");
  EXPECT_EQ(out, nullptr);
}

TEST(VisionOpsBadInput, RoiOps) {
  std::unique_ptr<SlimTensor> out, index;
  Tensor input = cpu({1, 8, 5, 5}), rois = cpu({2, 5});
  expect_error(ops::roi_align(*input, *cpu({2, 4}), 1.0, 2, 2, 0, false, kCpu, &out), Error::InvalidArgument, "[K, 5]");
  expect_error(ops::roi_align(*cpu({8, 5, 5}), *rois, 1.0, 2, 2, 0, false, kCpu, &out), Error::InvalidArgument,
               "input must be 4-D");
  expect_error(ops::roi_align(*input, *rois, 1.0, 0, 2, 0, false, kCpu, &out), Error::InvalidArgument,
               "must be positive");
  expect_error(ops::roi_pool(*input, *cpu({2, 5}, ScalarType::Double), 1.0, 2, 2, kCpu, &out, &index),
               Error::InvalidArgument, "rois is float64, input is float32");
  expect_error(ops::roi_pool(*input, *rois, 1.0, 2, 2, kCpu, &out, nullptr), Error::InvalidArgument, "null output");
  expect_error(ops::ps_roi_align(*input, *rois, 1.0, 3, 1, 0, kCpu, &out, &index), Error::InvalidArgument,
               "multiple of pooled_height * pooled_width");
  expect_error(ops::ps_roi_pool(*input, *rois, 1.0, 3, 3, kCpu, &out, &index), Error::InvalidArgument,
               "multiple of pooled_height * pooled_width");
  expect_error(ops::roi_align(*cpu({1, 8, 5, 5}, ScalarType::BFloat16), *cpu({2, 5}, ScalarType::BFloat16), 1.0, 2, 2,
                              0, false, kCpu, &out),
               Error::NotSupported, "bfloat16 is not supported on CPU");
  EXPECT_EQ(out, nullptr);
}

// A roi whose batch index is outside the input's batch reads nothing: zeros, argmax -1.
TEST(VisionOpsBadInput, RoiBatchIndexOutOfRangeGivesZeros) {
  Tensor input = make({1, 1, 4, 4}, {}, ScalarType::Float, false, [](int64_t j) { return 1.0 + j; });
  const double rows[3][5] = {{1, 0, 0, 3, 3}, {-1, 0, 0, 3, 3}, {std::nan(""), 0, 0, 3, 3}};
  Tensor rois = make({3, 5}, {}, ScalarType::Float, false, [&](int64_t j) { return rows[j / 5][j % 5]; });
  std::unique_ptr<SlimTensor> out, argmax;
  ASSERT_EQ(ops::roi_pool(*input, *rois, 1.0, 2, 2, kCpu, &out, &argmax), Error::Ok) << last_error_message();
  EXPECT_EQ(values(*out), std::vector<double>(12, 0.0));
  EXPECT_EQ(values(*argmax), std::vector<double>(12, -1.0));
  ASSERT_EQ(ops::roi_align(*input, *rois, 1.0, 2, 2, 2, true, kCpu, &out), Error::Ok) << last_error_message();
  EXPECT_EQ(values(*out), std::vector<double>(12, 0.0));
}

TEST(VisionOpsBadInput, DeformConv2d) {
  std::unique_ptr<SlimTensor> out;
  // A valid call: input [1, 4, 5, 5], weight [2, 4, 3, 3], offset [1, 18, 5, 5] (pad 1),
  // mask [1, 9, 5, 5], bias [2]; each check below breaks one thing.
  Tensor in = cpu({1, 4, 5, 5}), w = cpu({2, 4, 3, 3}), off = cpu({1, 18, 5, 5}), m = cpu({1, 9, 5, 5}), b = cpu({2});
  ASSERT_EQ(ops::deform_conv2d(*in, *w, *off, *m, *b, 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out), Error::Ok)
      << last_error_message();
  EXPECT_EQ(out->sizes(), (std::vector<int64_t>{1, 2, 5, 5}));
  expect_error(ops::deform_conv2d(*in, *w, *cpu({1, 16, 5, 5}), *m, *b, 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "offset must be [1, 18, 5, 5]");
  expect_error(ops::deform_conv2d(*in, *w, *off, *cpu({1, 9, 4, 5}), *b, 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "mask must be [1, 9, 5, 5]");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *cpu({3}), 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "bias has 3 elements");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *b, 0, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "must be positive");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *b, 1, 1, -1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "non-negative");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *b, 1, 1, 1, 1, 1, 1, 2, 1, true, kCpu, &out),
               Error::InvalidArgument, "does not fit 4 input channels in 2 groups");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *b, 1, 1, 1, 1, 1, 1, 1, 3, true, kCpu, &out),
               Error::InvalidArgument, "multiple of offset_groups");
  expect_error(ops::deform_conv2d(*in, *cpu({2, 4, 9, 9}), *off, *m, *b, 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
               Error::InvalidArgument, "output would be empty");
  expect_error(
      ops::deform_conv2d(*in, *w, *off, *m, *cpu({2}, ScalarType::Double), 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, &out),
      Error::InvalidArgument, "bias is float64");
  expect_error(ops::deform_conv2d(*in, *w, *off, *m, *b, 1, 1, 1, 1, 1, 1, 1, 1, true, kCpu, nullptr),
               Error::InvalidArgument, "null output");
}

}  // namespace
}  // namespace slimcuda::testing
