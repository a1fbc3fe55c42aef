// SPDX-License-Identifier: Apache-2.0
// slimcuda.hpp, the C++ header over the C ABI: tensors from and to host vectors of every
// element type, errors as slimcuda::Exception with the C code and message, move-only
// owners whose moved-from state owns nothing, and models loaded, described and run (a real
// CPU export against PyTorch's reference; the demo on a CUDA stream with graphs on a GPU).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.hpp"

namespace slimcuda::testing {
namespace {

// The ownership rules hold at compile time: owners move but never copy, a view copies, and a
// literal 0 or nullptr is not a stream.
static_assert(!std::is_copy_constructible_v<slimcuda::Tensor> &&
              std::is_nothrow_move_constructible_v<slimcuda::Tensor>);
static_assert(!std::is_copy_constructible_v<slimcuda::Model> && std::is_nothrow_move_constructible_v<slimcuda::Model>);
static_assert(!std::is_copy_constructible_v<slimcuda::Stream> &&
              std::is_nothrow_move_constructible_v<slimcuda::Stream>);
static_assert(std::is_trivially_copyable_v<slimcuda::StreamView>);
static_assert(!std::is_constructible_v<slimcuda::StreamView, int>);
static_assert(!std::is_constructible_v<slimcuda::StreamView, std::nullptr_t>);
static_assert(slimcuda::dtype_of_v<float> == slimcuda::DType::Float32);
static_assert(slimcuda::Device{slimcuda::DeviceType::CPU, -1} == slimcuda::Device::cpu());
static_assert(slimcuda::Device::cuda(0) != slimcuda::Device::cuda(1));
static_assert(slimcuda::dtype_of_v<slimcuda::BFloat16> == slimcuda::DType::BFloat16);

// Runs f, which must throw slimcuda::Exception with `code`, and returns its what().
template <class F>
std::string expect_throw(F&& f, slimcuda::ErrorCode code) {
  try {
    f();
  } catch (const slimcuda::Exception& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(std::string(e.what()), std::string(e.name()) + ": " + e.message());
    return e.what();
  }
  ADD_FAILURE() << "no slimcuda::Exception";
  return "";
}

template <class T>
void round_trip(const std::vector<T>& data, slimcuda::Device device, std::optional<slimcuda::StreamView> stream = {}) {
  const slimcuda::Tensor x = slimcuda::Tensor::from({2, 3}, data, device, stream);
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(x.dtype(), slimcuda::dtype_of_v<T>);
  EXPECT_EQ(x.device(), device);
  EXPECT_EQ(x.to_vector<T>(stream), data);
}

void round_trip_every_type(slimcuda::Device device, std::optional<slimcuda::StreamView> stream = {}) {
  round_trip<uint8_t>({0, 1, 2, 3, 254, 255}, device, stream);
  round_trip<int8_t>({-128, -1, 0, 1, 2, 127}, device, stream);
  round_trip<int16_t>({-32768, -1, 0, 1, 2, 32767}, device, stream);
  round_trip<int32_t>({INT32_MIN, -1, 0, 1, 2, 7}, device, stream);
  round_trip<int64_t>({INT64_MIN, -1, 0, 1, 2, int64_t{1} << 60}, device, stream);
  round_trip<float>({0.5f, -1.25f, 3e38f, 1e-45f, 0, 7}, device, stream);
  round_trip<double>({0.1, -2, 1e308, 5e-324, 0, 9}, device, stream);
  round_trip<bool>({true, false, false, true, true, false}, device, stream);
  // The 16-bit floats as their bits: compare the bits.
  const std::vector<uint16_t> bits = {0x3c00, 0xc000, 0x0001, 0x7bff, 0, 0x8000};
  std::vector<slimcuda::Float16> h;
  std::vector<slimcuda::BFloat16> b;
  for (uint16_t v : bits) {
    h.push_back({v});
    b.push_back({v});
  }
  const auto x = slimcuda::Tensor::from({2, 3}, h, device, stream);
  const auto y = slimcuda::Tensor::from({2, 3}, b, device, stream);
  EXPECT_EQ(x.dtype(), slimcuda::DType::Float16);
  EXPECT_EQ(y.dtype(), slimcuda::DType::BFloat16);
  const auto hx = x.to_vector<slimcuda::Float16>(stream);
  const auto by = y.to_vector<slimcuda::BFloat16>(stream);
  for (size_t i = 0; i < bits.size(); ++i) {
    EXPECT_EQ(hx[i].bits, bits[i]) << i;
    EXPECT_EQ(by[i].bits, bits[i]) << i;
  }
}

TEST(SlimcudaHpp, TensorsRoundTripEveryElementTypeOnTheCpu) { round_trip_every_type(slimcuda::Device::cpu()); }

TEST(SlimcudaHpp, TensorsRoundTripEveryElementTypeOnCudaOnAStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const slimcuda::Stream stream(slimcuda::StreamFlags::NonBlocking, 0);
  EXPECT_EQ(stream.device(), 0);
  round_trip_every_type(slimcuda::Device::cuda(0), stream);
  stream.synchronize();
}

TEST(SlimcudaHpp, CopiesConvertAndToVectorDoesNot) {
  auto x = slimcuda::Tensor::empty({4}, slimcuda::DType::Float16);
  x.copy_from(std::vector<double>{0.5, 1.5, -2, 4}.data(), 4);
  std::vector<float> y(4);
  x.copy_to(y.data(), y.size());
  EXPECT_EQ(y, (std::vector<float>{0.5f, 1.5f, -2, 4}));
  const std::string what = expect_throw([&] { (void)x.to_vector<float>(); }, slimcuda::ErrorCode::InvalidArgument);
  EXPECT_NE(what.find("the tensor is float16, to_vector reads float32 tensors only (copy_to converts)"),
            std::string::npos)
      << what;
}

TEST(SlimcudaHpp, BadInputThrowsTheCodeAndTheLibrarysMessage) {
  const std::vector<float> five(5, 1.0f);
  std::string what = expect_throw(
      [&] {
        (void)slimcuda::Tensor::from({2, 3}, five);
      },
      slimcuda::ErrorCode::InvalidArgument);
  EXPECT_NE(what.find("InvalidArgument: slimcuda_tensor_copy_from_host"), std::string::npos) << what;
  expect_throw([] { (void)slimcuda::Tensor::empty({-1}, slimcuda::DType::Float32); },
               slimcuda::ErrorCode::InvalidArgument);
  expect_throw([] { (void)slimcuda::Tensor::empty({1}, static_cast<slimcuda::DType>(99)); },
               slimcuda::ErrorCode::InvalidArgument);
  what = expect_throw(
      [] {
        (void)slimcuda::Tensor::empty({2, 2}, slimcuda::DType::Float32, {}, {1});
      },
      slimcuda::ErrorCode::InvalidArgument);
  EXPECT_NE(what.find("1 strides for 2 sizes"), std::string::npos) << what;
  // A broadcast view: 2^40 elements over 4 bytes of storage.
  const auto one = slimcuda::Tensor::from({1}, std::vector<float>{1});
  const auto wide = one.view({int64_t{1} << 40}, {0});
  what = expect_throw([&] { (void)wide.to_vector<float>(); }, slimcuda::ErrorCode::InvalidArgument);
  EXPECT_NE(what.find("than its storage of 4 bytes holds"), std::string::npos) << what;
  what = expect_throw([] { slimcuda::Model m("/nonexistent/model.pt2"); }, slimcuda::ErrorCode::NotFound);
  EXPECT_NE(what.find("/nonexistent/model.pt2"), std::string::npos) << what;
}

TEST(SlimcudaHpp, MovedFromOwnersOwnNothingAndThrow) {
  auto x = slimcuda::Tensor::from({2}, std::vector<int32_t>{7, 8});
  slimcuda::Tensor y = std::move(x);
  EXPECT_FALSE(x);  // NOLINT(bugprone-use-after-move): the moved-from state is the subject
  EXPECT_EQ(x.get(), nullptr);
  expect_throw([&] { (void)x.sizes(); }, slimcuda::ErrorCode::InvalidArgument);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
  slimcuda::Tensor z;
  z = std::move(y);
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
  // An adopted handle is deleted with its owner; a released one is the caller's.
  slimcuda_tensor* raw = z.release();
  EXPECT_FALSE(z);
  EXPECT_EQ(slimcuda_tensor_delete(raw), SLIMCUDA_OK);
}

TEST(SlimcudaHpp, AStreamNeedsAGpuAndAMovedFromOneIsNoStream) {
  if (slimcuda::device_count() == 0) {
    expect_throw([] { slimcuda::Stream s; }, slimcuda::ErrorCode::NotSupported);
    return;
  }
  slimcuda::Stream s;
  slimcuda::Stream t = std::move(s);
  EXPECT_NE(t.handle(), nullptr);
  expect_throw([&] { (void)s.view(); }, slimcuda::ErrorCode::InvalidState);  // NOLINT(bugprone-use-after-move)
  expect_throw([&] { s.synchronize(); }, slimcuda::ErrorCode::InvalidState);
  t.synchronize();
}

struct LinearReference {
  std::vector<float> x, z, y;
};

LinearReference linear_reference() {
  std::ifstream in(fixture_relative("pt2.json", "pt2/real_cpu_linear.ref.json"));
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    ADD_FAILURE() << "cannot read pt2/real_cpu_linear.ref.json";
    return {};
  }
  return {doc.at("x").get<std::vector<float>>(), doc.at("z").get<std::vector<float>>(),
          doc.at("y").get<std::vector<float>>()};
}

// A real PyTorch CPU export, y = relu(x W^T + b + z): described, run, and read back against
// eager PyTorch's y.
TEST(SlimcudaHpp, ARealExportLoadsDescribesAndRunsToPyTorchsReference) {
  const slimcuda::Model model(fixture_relative("pt2.json", "pt2/real_cpu_linear.pt2"));
  EXPECT_EQ(model.device(), slimcuda::Device::cpu());
  EXPECT_EQ(model.instances(), 1);
  const auto inputs = model.inputs();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "arg2_1");
  EXPECT_EQ(inputs[0].dtype, slimcuda::DType::Float32);
  EXPECT_EQ(inputs[0].sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(inputs[1].sizes, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(model.outputs().size(), 1u);

  const LinearReference ref = linear_reference();
  ASSERT_EQ(ref.x.size(), 8u);
  const auto x = slimcuda::Tensor::from({2, 4}, ref.x, model.device());
  const auto z = slimcuda::Tensor::from({2, 3}, ref.z, model.device());
  const std::vector<slimcuda::Tensor> outs = model.run({&x, &z});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].sizes(), (std::vector<int64_t>{2, 3}));
  const std::vector<float> y = outs[0].to_vector<float>();
  ASSERT_EQ(y.size(), ref.y.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref.y[i], 1e-5) << i;

  // Wrong inputs are refused before the library runs; the model stays usable.
  expect_throw([&] { (void)model.run({&x}); }, slimcuda::ErrorCode::InvalidArgument);
  expect_throw([&] { (void)model.run({&z, &x}); }, slimcuda::ErrorCode::InvalidArgument);
  expect_throw([&] { (void)model.run({&x, nullptr}); }, slimcuda::ErrorCode::InvalidArgument);
  std::vector<slimcuda::Tensor> again;
  again.push_back(slimcuda::Tensor::from({2, 4}, ref.x));
  again.push_back(slimcuda::Tensor::from({2, 3}, ref.z));
  EXPECT_EQ(model.run(again)[0].to_vector<float>(), y);
}

TEST(SlimcudaHpp, AMovedFromModelThrows) {
  slimcuda::Model a(fixture_relative("pt2.json", "pt2/real_cpu_linear.pt2"));
  slimcuda::Model b = std::move(a);
  EXPECT_EQ(b.inputs().size(), 2u);
  expect_throw([&] { (void)a.inputs(); }, slimcuda::ErrorCode::InvalidArgument);  // NOLINT(bugprone-use-after-move)
  expect_throw([&] { (void)a.run(std::vector<const slimcuda::Tensor*>{}); }, slimcuda::ErrorCode::InvalidArgument);
}

// The demo package from memory, on the CPU.
TEST(SlimcudaHpp, AModelLoadsFromMemory) {
  const char* path = std::getenv("SLIMCUDA_DEMO_PACKAGE");
  ASSERT_NE(path, nullptr);
  const std::vector<uint8_t> bytes = read_bytes(runfile(path));
  slimcuda::LoadOptions options;
  options.device = slimcuda::Device::cpu();
  options.instances = 2;
  const slimcuda::Model model = slimcuda::Model::from_memory(bytes.data(), bytes.size(), options);
  EXPECT_EQ(model.instances(), 2);
  EXPECT_EQ(model.inputs().at(0).dynamism, slimcuda::Dynamism::DynamicBounded);
  const auto x = slimcuda::Tensor::from({1, 16}, std::vector<float>(16, 0.25f));
  EXPECT_EQ(model.run({&x}).at(0).sizes(), (std::vector<int64_t>{1, 8}));
  const slimcuda::GraphStats none = model.graph_stats();
  EXPECT_EQ(none.captures + none.replays + none.fallbacks + none.graphs, 0u);
}

// The demo on CUDA with graphs on, on a non-blocking stream: one capture, its run and the
// later ones replays, each read on the stream equal to a run without graphs.
TEST(SlimcudaHpp, ACudaModelRunsOnAStreamWithGraphs) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const char* path = std::getenv("SLIMCUDA_DEMO_PACKAGE");
  ASSERT_NE(path, nullptr);
  slimcuda::LoadOptions options;
  options.device = slimcuda::Device::cuda(0);
  options.instances = 1;
  const slimcuda::Model plain(runfile(path), options);
  options.cuda_graphs = slimcuda::GraphMode::Strict;
  const slimcuda::Model graphed(runfile(path), options);
  const slimcuda::Stream stream(slimcuda::StreamFlags::NonBlocking, 0);
  std::vector<float> input(32);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 7) / 4 - 0.5f;
  const auto x = slimcuda::Tensor::from({2, 16}, input, slimcuda::Device::cuda(0), stream);
  const std::vector<float> want = plain.run({&x}, stream).at(0).to_vector<float>(stream);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(graphed.run({&x}, stream).at(0).to_vector<float>(stream), want) << "run " << i;
  }
  const slimcuda::GraphStats s = graphed.graph_stats();
  EXPECT_EQ(s.captures, 1u);
  EXPECT_EQ(s.replays, 3u);
  EXPECT_EQ(s.fallbacks, 0u);
}

}  // namespace
}  // namespace slimcuda::testing
