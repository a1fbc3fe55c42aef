// SPDX-License-Identifier: Apache-2.0
// decode_benchmark [DIR...] [--steps 64] — decode speed of tools/aoti/decoder.py's
// exports (a Llama-shaped decode step, KV cache in buffers) through slimcuda's C ABI, beside
// the memory roofline measured in the same run, and PyTorch's own runner on the same .pt2
// (timed by decoder.py --runner on the same machine, read from DIR/reference.json).
//
// Per DIR (one batch size) and variant: --steps steps at positions 0..steps-1 on one
// non-blocking stream, without reading the logits back (what the runner's timing does too:
// its calls, then one synchronize), graphs off and on, after a warm-up of 8 steps and a
// reset. Each step's position is its own element of one device tensor, so no host copy
// sits between steps. Roofline: the weights' bytes (read once per step) at the bandwidth a
// device-to-device cudaMemcpyAsync of 2 GiB reaches here (bytes read + written / time).
// Prints one row per (DIR, variant): ms per step and tokens/s for slimcuda (normal,
// graphs), the runner, the roofline, and the ratios the issue sets goals for (graphs:
// >= 0.75 of the roofline, >= 3 x the runner at batch 1). No DIR: $SLIMCUDA_DECODER_DIR
// (run.sh's export of the small decoder), 32 steps.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/benchmark_checks.h"
#include "slimcuda/slimcuda.h"

namespace {

double copy_bandwidth(void* stream) {
  const size_t n = size_t{2} << 30;
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, n));
  CHECK_CUDA(cudaMalloc(&b, n));
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  CHECK_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));  // warm
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CHECK_CUDA(cudaEventRecord(t0, s));
    CHECK_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s));
    CHECK_CUDA(cudaEventRecord(t1, s));
    CHECK_CUDA(cudaEventSynchronize(t1));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
    best = std::min(best, ms);
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return 2.0 * static_cast<double>(n) / (best * 1e-3);  // bytes/s, read + write
}

// ms per step over `steps` steps (after a warm-up and a reset), on `stream`.
double time_steps(const std::string& path, int32_t graphs, int64_t batch, int steps, void* stream) {
  slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 0, nullptr, graphs};
  slimcuda_model* m = nullptr;
  CHECK_SC(slimcuda_model_load_file_with(path.c_str(), &o, &m));
  const int64_t ids_sizes[2] = {batch, 1};
  slimcuda_tensor *ids = nullptr, *positions = nullptr;
  CHECK_SC(slimcuda_tensor_empty(2, ids_sizes, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &ids));
  std::vector<int64_t> tokens(static_cast<size_t>(batch), 7);
  CHECK_SC(slimcuda_tensor_copy_from_host_on(ids, tokens.data(), tokens.size() * 8, SLIMCUDA_INT64, stream));
  // Two int64 per position: each step's view starts 16-byte aligned, as the generated code
  // wants its inputs (it copies a misaligned one first).
  const int64_t n = 2 * static_cast<int64_t>(steps);
  CHECK_SC(slimcuda_tensor_empty(1, &n, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &positions));
  std::vector<int64_t> pos(static_cast<size_t>(n), 0);
  for (int s = 0; s < steps; ++s) pos[2 * static_cast<size_t>(s)] = s;
  CHECK_SC(slimcuda_tensor_copy_from_host_on(positions, pos.data(), pos.size() * 8, SLIMCUDA_INT64, stream));
  std::vector<slimcuda_tensor*> at(static_cast<size_t>(steps));
  const int64_t one = 1, unit = 1;
  for (int s = 0; s < steps; ++s) {
    CHECK_SC(slimcuda_tensor_view(positions, 1, &one, &unit, 2 * s, &at[static_cast<size_t>(s)]));
  }
  auto run = [&](int count) {
    for (int s = 0; s < count; ++s) {
      slimcuda_tensor* in[2] = {ids, at[static_cast<size_t>(s)]};
      slimcuda_tensor* out = nullptr;
      CHECK_SC(slimcuda_model_run_on(m, in, 2, &out, 1, stream));
      CHECK_SC(slimcuda_tensor_delete(out));  // stream-ordered: its memory serves the next step
    }
    CHECK_SC(slimcuda_stream_synchronize(stream));
  };
  run(std::min(8, steps));
  CHECK_SC(slimcuda_caller_stream_push(stream));
  CHECK_SC(slimcuda_model_reset_state(m));
  CHECK_SC(slimcuda_caller_stream_pop());
  CHECK_SC(slimcuda_stream_synchronize(stream));
  const auto t0 = std::chrono::steady_clock::now();
  run(steps);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (slimcuda_tensor* t : at) slimcuda_tensor_delete(t);
  slimcuda_tensor_delete(positions);
  slimcuda_tensor_delete(ids);
  slimcuda_model_free(m);
  return ms / steps;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> dirs;
  int steps = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else {
      dirs.emplace_back(argv[i]);
    }
  }
  // run.sh --bench runs every benchmark without arguments: the decoder it exported.
  if (const char* env = std::getenv("SLIMCUDA_DECODER_DIR"); dirs.empty() && env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
    steps = std::min(steps, 32);
  }
  if (dirs.empty() || steps < 1) {
    std::fprintf(stderr, "usage: decode_benchmark DIR [DIR...] [--steps 64] (DIR: tools/aoti/decoder.py's output)\n");
    return 2;
  }
  void* stream = nullptr;
  CHECK_SC(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream));
  const double bw = copy_bandwidth(stream);
  std::printf("device-to-device copy: %.0f GB/s (read + write)\n", bw / 1e9);
  std::printf("%-28s %5s %8s | %9s %9s %9s | %9s %9s | %7s %7s | %s\n", "export", "batch", "weights", "normal",
              "graphs", "runner", "roofline", "tok/s", "graphs/", "runner/",
              "ms per step; ratios: roofline/graphs, "
              "runner/graphs");
  for (const std::string& dir : dirs) {
    std::ifstream in(dir + "/reference.json");
    const nlohmann::json ref = nlohmann::json::parse(in, nullptr, false);
    if (!ref.is_object()) {
      std::fprintf(stderr, "%s/reference.json: not readable JSON\n", dir.c_str());
      return 1;
    }
    const int64_t batch = ref.at("batch");
    const double weight_bytes = ref.at("weight_bytes");
    if (steps > ref.at("max_pos").get<int>()) {
      std::fprintf(stderr, "%s: --steps %d past its cache of %d positions\n", dir.c_str(), steps,
                   ref.at("max_pos").get<int>());
      return 1;
    }
    for (const auto& [variant, rel] : ref.at("variants").items()) {
      if (variant == "oob") continue;
      const std::string path = dir + "/" + rel.get<std::string>();
      const double normal = time_steps(path, SLIMCUDA_GRAPHS_OFF, batch, steps, stream);
      const double graphs = time_steps(path, SLIMCUDA_GRAPHS_ON, batch, steps, stream);
      double runner = 0;
      if (ref.contains("runner_ms_per_step") && ref["runner_ms_per_step"].contains(variant)) {
        runner = ref["runner_ms_per_step"][variant];
      }
      const double roofline = weight_bytes / bw * 1e3;
      std::printf("%-28s %5lld %7.2fG | %9.4f %9.4f %9.4f | %9.4f %9.0f | %7.2f %7.2f\n",
                  (dir.substr(dir.find_last_of('/') + 1) + "/" + variant).c_str(), static_cast<long long>(batch),
                  weight_bytes / 1e9, normal, graphs, runner, roofline, 1e3 * batch / graphs, roofline / graphs,
                  runner > 0 ? runner / graphs : 0.0);
    }
  }
  CHECK_SC(slimcuda_stream_destroy(stream));
  return 0;
}
