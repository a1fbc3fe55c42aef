// zoo_runner MODEL_DIR [--stream] [--iterations N] — runs one exported AOTInductor model
// (MODEL_DIR/model.slimcuda, from tools/aoti/pt2_to_package.py) through slimcuda's C API
// on every case of MODEL_DIR/meta.json, compares with the PyTorch-eager outputs
// (|got - want| <= 1e-4 + 1e-3 |want|, float32) and times a run (median of N, each waiting
// for the result). --stream: everything on a non-blocking caller stream. Prints one JSON
// line; exit status 0 when every case matches.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slimcuda/slimcuda.h"

namespace {

using nlohmann::json;

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

bool fail(const char* what) {
  std::fprintf(stderr, "zoo_runner: %s: %s\n", what, slimcuda_last_error_message());
  return false;
}

struct Run {
  slimcuda_model* model;
  void* stream;  // null: no caller stream (the model waits on its own)
  std::vector<slimcuda_tensor*> inputs;
  std::vector<slimcuda_tensor*> outputs;

  bool once() {
    for (slimcuda_tensor* t : outputs) slimcuda_tensor_delete(t);
    std::fill(outputs.begin(), outputs.end(), nullptr);
    const int32_t rc = stream ? slimcuda_model_run_on(model, inputs.data(), inputs.size(), outputs.data(),
                                                      outputs.size(), stream)
                              : slimcuda_model_run(model, inputs.data(), inputs.size(), outputs.data(), outputs.size());
    if (rc != SLIMCUDA_OK) return fail("run");
    return stream == nullptr || slimcuda_stream_synchronize(stream) == SLIMCUDA_OK || fail("synchronize");
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: zoo_runner MODEL_DIR [--stream] [--iterations N]\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool use_stream = false;
  int iterations = 200;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--stream") == 0) use_stream = true;
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = std::atoi(argv[++i]);
  }
  std::ifstream meta_in(dir + "/meta.json");
  const json meta = json::parse(meta_in);
  slimcuda_model* model = nullptr;
  if (slimcuda_model_load_file((dir + "/model.slimcuda").c_str(), SLIMCUDA_DEVICE_CUDA, -1, &model) != SLIMCUDA_OK) {
    fail("load");
    return 1;
  }
  size_t n_in = 0, n_out = 0;
  slimcuda_model_num_io(model, &n_in, &n_out);
  void* stream = nullptr;
  if (use_stream && slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, -1, &stream) != SLIMCUDA_OK) {
    fail("stream");
    return 1;
  }
  json report = {{"model", meta["name"]}, {"stream", use_stream}, {"cases", json::array()}};
  bool all_ok = true;
  double median_us = 0;
  for (const json& c : meta["cases"]) {
    const std::string cd = dir + "/" + c["dir"].get<std::string>();
    std::ifstream specs_in(cd + "/inputs.json");
    const json specs = json::parse(specs_in);
    Run run{model, stream, std::vector<slimcuda_tensor*>(n_in, nullptr), std::vector<slimcuda_tensor*>(n_out, nullptr)};
    bool ok = specs.size() == n_in;
    for (size_t i = 0; ok && i < n_in; ++i) {
      const std::vector<int64_t> sizes = specs[i]["sizes"].get<std::vector<int64_t>>();
      const std::vector<float> data = read_floats(cd + "/" + specs[i]["file"].get<std::string>());
      ok = (slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, SLIMCUDA_FLOAT32,
                                  SLIMCUDA_DEVICE_CUDA, -1, 0, &run.inputs[i]) == SLIMCUDA_OK ||
            fail("input")) &&
           (slimcuda_tensor_copy_from_host_on(run.inputs[i], data.data(), data.size() * 4, SLIMCUDA_FLOAT32, stream) ==
                SLIMCUDA_OK ||
            fail("input copy"));
    }
    ok = ok && run.once();
    double max_abs = 0, max_rel = 0;
    for (size_t o = 0; ok && o < n_out; ++o) {
      const std::vector<float> want = read_floats(cd + "/expected_" + std::to_string(o) + ".bin");
      std::vector<float> got(want.size());
      ok = slimcuda_tensor_copy_to_host_on(run.outputs[o], got.data(), got.size() * 4, SLIMCUDA_FLOAT32, stream) ==
               SLIMCUDA_OK ||
           fail("output copy");
      for (size_t i = 0; ok && i < want.size(); ++i) {
        const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
        max_abs = std::max(max_abs, d);
        max_rel = std::max(max_rel, d / std::max(std::fabs(static_cast<double>(want[i])), 1e-6));
        ok = d <= 1e-4 + 1e-3 * std::fabs(static_cast<double>(want[i]));
        if (!ok) std::fprintf(stderr, "zoo_runner: %s output %zu element %zu: %g, eager %g\n", cd.c_str(), o, i, got[i], want[i]);
      }
    }
    if (ok && median_us == 0) {  // time the first case
      for (int i = 0; i < 200; ++i) run.once();  // warm up the GPU clocks and caches first
      std::vector<double> us;
      for (int i = 0; i < iterations && ok; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        ok = run.once();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(us.begin(), us.end());
      median_us = us.empty() ? 0 : us[us.size() / 2];
    }
    report["cases"].push_back({{"dir", c["dir"]}, {"max_abs", max_abs}, {"max_rel", max_rel}, {"pass", ok}});
    all_ok = all_ok && ok;
    for (slimcuda_tensor* t : run.inputs) slimcuda_tensor_delete(t);
    for (slimcuda_tensor* t : run.outputs) slimcuda_tensor_delete(t);
  }
  report["slimcuda_us_median"] = median_us;
  report["pass"] = all_ok;
  std::printf("%s\n", report.dump().c_str());
  if (stream) slimcuda_stream_destroy(stream);
  slimcuda_model_free(model);
  return all_ok ? 0 : 1;
}
