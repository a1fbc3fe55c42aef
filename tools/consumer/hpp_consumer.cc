// SPDX-License-Identifier: Apache-2.0
// hpp_consumer PACKAGE — a C++ program against the installed library through
// <slimcuda/slimcuda.hpp> alone: loads a model package (its CUDA library on a GPU, on a
// stream of its own; the CPU library otherwise), runs it, prints the output's sum as
// model_consumer does (the C ABI version), and checks that a bad call throws
// slimcuda::Exception with its code. Built by tools/consumer/check.sh, with pkg-config and
// with CMake.
#include <slimcuda/slimcuda.hpp>

#include <cstdio>
#include <optional>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hpp_consumer PACKAGE\n");
    return 2;
  }
  try {
    const slimcuda::Model model(argv[1]);
    const bool cuda = model.device().type == slimcuda::DeviceType::CUDA;
    std::optional<slimcuda::Stream> stream;
    if (cuda) stream.emplace(slimcuda::StreamFlags::NonBlocking, model.device().index);
    std::optional<slimcuda::StreamView> on;
    if (stream) on = stream->view();
    std::vector<float> x(64);
    for (int k = 0; k < 64; ++k) x[k] = static_cast<float>((k * 5) % 11 - 5) / 8.0f;
    const auto in = slimcuda::Tensor::from({4, 16}, x, model.device(), on);
    const std::vector<slimcuda::Tensor> outs = model.run({&in}, on);
    const std::vector<float> y = outs.at(0).to_vector<float>(on);
    double sum = 0;
    for (float v : y) sum += v;
    std::printf("hpp_consumer: %s on %s, output sum %.8f\n", argv[1], cuda ? "cuda" : "cpu", sum);
  } catch (const slimcuda::Exception& e) {
    std::fprintf(stderr, "hpp_consumer: %s\n", e.what());
    return 1;
  }
  try {
    (void)slimcuda::Tensor::from({2}, std::vector<float>{1, 2, 3});  // three elements for two
    std::fprintf(stderr, "hpp_consumer: a wrong element count did not throw\n");
    return 1;
  } catch (const slimcuda::Exception& e) {
    if (e.code() != slimcuda::ErrorCode::InvalidArgument) {
      std::fprintf(stderr, "hpp_consumer: want InvalidArgument, got %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
