// SPDX-License-Identifier: Apache-2.0
// zoo_runner MODEL_DIR [--load package|pt2] [--stream] [--graphs] [--iterations N] [--warmup W] [--save] —
// runs one exported AOTInductor model through slimcuda's C API on every case of
// MODEL_DIR/meta.json (tools/aoti/export_models.py): --load package (the default) loads
// MODEL_DIR/model.slimcuda (from tools/aoti/pt2_to_package.py), --load pt2 the archive
// MODEL_DIR/model.pt2 itself (weights in its .so or beside it in the archive).
// Inputs are read as raw bytes in the dtype inputs.json names and copied in that dtype
// (slimcuda_tensor_copy_from_host converts to the model's input dtype where they differ);
// each output's dtype must be the one meta.json declares; outputs are read back converted to
// float32 and compared with the eager outputs' float32 copies (expected_<i>.f32.bin) with the
// model's tolerance from meta.json: |got - want| <= atol + rtol |want|. --save also writes each
// output in its own dtype to CASE/capi/output_<i>.bin (+ outputs.json). Then times a run of
// the first case: W warm-up calls, median of N (each waiting for the result; N = 0: no
// timing). --stream: everything on a non-blocking caller stream. Prints one JSON line (with
// the load's seconds and slimcuda's device memory statistics); exit status 0 when every case
// matches. A detector's outputs (meta.json "detections") are only saved (CASE/capi*/) and
// their dtypes checked: tools/aoti/compare.py matches them as detections.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slimcuda/slimcuda.h"

namespace {

using nlohmann::json;

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool fail(const char* what) {
  std::fprintf(stderr, "zoo_runner: %s: %s\n", what, slimcuda_last_error_message());
  return false;
}

struct DType {
  int32_t code;
  size_t size;
};

// The dtype names of inputs.json / expected.json (PyTorch's) -> slimcuda's codes.
bool dtype_by_name(const std::string& name, DType* out) {
  static const std::map<std::string, DType> kDTypes = {
      {"uint8", {SLIMCUDA_UINT8, 1}},      {"int8", {SLIMCUDA_INT8, 1}},       {"int16", {SLIMCUDA_INT16, 2}},
      {"int32", {SLIMCUDA_INT32, 4}},      {"int64", {SLIMCUDA_INT64, 8}},     {"float16", {SLIMCUDA_FLOAT16, 2}},
      {"float32", {SLIMCUDA_FLOAT32, 4}},  {"float64", {SLIMCUDA_FLOAT64, 8}}, {"bool", {SLIMCUDA_BOOL, 1}},
      {"bfloat16", {SLIMCUDA_BFLOAT16, 2}}};
  const auto it = kDTypes.find(name);
  if (it == kDTypes.end()) return false;
  *out = it->second;
  return true;
}

std::string dtype_name(int32_t code) {
  for (const char* n :
       {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16"}) {
    DType d{};
    if (dtype_by_name(n, &d) && d.code == code) return n;
  }
  return "dtype" + std::to_string(code);
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

struct Run {
  slimcuda_model* model;
  void* stream;    // null: no caller stream (the model waits on its own)
  int32_t device;  // SLIMCUDA_DEVICE_CPU or _CUDA: where the model and its inputs live
  std::vector<slimcuda_tensor*> inputs;
  std::vector<slimcuda_tensor*> outputs;

  bool once() {
    for (slimcuda_tensor* t : outputs) slimcuda_tensor_delete(t);
    std::fill(outputs.begin(), outputs.end(), nullptr);
    const int32_t rc =
        stream ? slimcuda_model_run_on(model, inputs.data(), inputs.size(), outputs.data(), outputs.size(), stream)
               : slimcuda_model_run(model, inputs.data(), inputs.size(), outputs.data(), outputs.size());
    if (rc != SLIMCUDA_OK) return fail("run");
    return stream == nullptr || slimcuda_stream_synchronize(stream) == SLIMCUDA_OK || fail("synchronize");
  }
};

// Loads CASE/inputs.json's tensors onto the model's device in their own dtypes.
bool load_inputs(const std::string& cd, Run* run) {
  std::ifstream specs_in(cd + "/inputs.json");
  const json specs = json::parse(specs_in);
  if (specs.size() != run->inputs.size()) {
    std::fprintf(stderr, "zoo_runner: %s: %zu inputs, the model takes %zu\n", cd.c_str(), specs.size(),
                 run->inputs.size());
    return false;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::vector<int64_t> sizes = specs[i]["sizes"].get<std::vector<int64_t>>();
    const std::string file = cd + "/" + specs[i]["file"].get<std::string>();
    DType dt{};
    if (!dtype_by_name(specs[i]["dtype"].get<std::string>(), &dt)) {
      std::fprintf(stderr, "zoo_runner: %s: unknown dtype %s\n", file.c_str(), specs[i]["dtype"].dump().c_str());
      return false;
    }
    const std::vector<char> data = read_bytes(file);
    if (data.size() != static_cast<size_t>(numel_of(sizes)) * dt.size) {
      std::fprintf(stderr, "zoo_runner: %s: %zu bytes, want %lld %s elements\n", file.c_str(), data.size(),
                   static_cast<long long>(numel_of(sizes)), dtype_name(dt.code).c_str());
      return false;
    }
    if (slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, dt.code, run->device, -1, 0,
                              &run->inputs[i]) != SLIMCUDA_OK)
      return fail("input");
    if (!data.empty() && slimcuda_tensor_copy_from_host_on(run->inputs[i], data.data(), data.size(), dt.code,
                                                           run->stream) != SLIMCUDA_OK)
      return fail("input copy");
  }
  return true;
}

// Writes output o in its own dtype to DIR/output_<o>.bin; returns its outputs.json entry.
bool save_output(const std::string& dir, size_t o, const slimcuda_tensor* t, void* stream, json* specs) {
  slimcuda_tensor_info info{};
  if (slimcuda_tensor_get_info(t, &info) != SLIMCUDA_OK) return fail("output info");
  DType dt{};
  if (!dtype_by_name(dtype_name(info.dtype), &dt)) return false;
  std::vector<char> raw(static_cast<size_t>(info.numel) * dt.size);
  if (!raw.empty() && slimcuda_tensor_copy_to_host_on(t, raw.data(), raw.size(), dt.code, stream) != SLIMCUDA_OK)
    return fail("output save copy");
  const std::string name = "output_" + std::to_string(o) + ".bin";
  std::ofstream(dir + "/" + name, std::ios::binary).write(raw.data(), static_cast<std::streamsize>(raw.size()));
  specs->push_back({{"file", name},
                    {"dtype", dtype_name(info.dtype)},
                    {"sizes", std::vector<int64_t>(info.sizes, info.sizes + info.ndim)}});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: zoo_runner MODEL_DIR [--load package|pt2] [--stream] [--graphs] [--iterations N] [--warmup W] "
                 "[--save]\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool use_stream = false, save = false, graphs = false;
  std::string load = "package";
  int iterations = 200, warmup = 200;  // warmup: the same as export_models.py's WARMUP
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--stream") == 0) use_stream = true;
    if (std::strcmp(argv[i], "--save") == 0) save = true;
    if (std::strcmp(argv[i], "--graphs") == 0) graphs = true;
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) warmup = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--load") == 0 && i + 1 < argc) load = argv[++i];
  }
  if (load != "package" && load != "pt2") {
    std::fprintf(stderr, "zoo_runner: --load must be package or pt2, not %s\n", load.c_str());
    return 2;
  }
  std::ifstream meta_in(dir + "/meta.json");
  const json meta = json::parse(meta_in);
  // The comparison: the model's tolerance from meta.json (export_models.py's TOLERANCES).
  const json tol = meta.value("tolerance", json{{"name", "float32"}, {"atol", 1e-4}, {"rtol", 1e-3}});
  const double atol = tol["atol"].get<double>(), rtol = tol["rtol"].get<double>();
  // A detector's outputs (meta.json "detections": boxes, scores, labels of a data-dependent
  // count) are matched as detections by compare.py, not compared by position here: they are
  // saved for it as --save does, and only their dtypes are checked.
  const bool detections = meta.contains("detections");
  if (detections) save = true;
  // The archive's model is data/aotinductor/model/ (export_models.py writes one model per
  // .pt2), the loader's default: no model_name load option needed.
  const std::string path = dir + (load == "pt2" ? "/model.pt2" : "/model.slimcuda");
  // Create the CUDA context first (one small allocation), so that load_s below is the load
  // alone, as in a service that has already touched the GPU (tools/aoti/load_time.py compares
  // it with PyTorch's loader measured the same way).
  void* warm = nullptr;
  if (slimcuda_device_alloc(256, -1, 0, &warm) == SLIMCUDA_OK) slimcuda_device_free(warm, -1);
  slimcuda_model* model = nullptr;
  // --graphs: CUDA graphs on (a layout that cannot be captured runs the normal way; the
  // report says how many runs a graph served).
  // A CPU export (meta.json's device, export_models.py --device cpu) runs on the CPU.
  const int32_t device = meta.value("device", "cuda") == "cpu" ? SLIMCUDA_DEVICE_CPU : SLIMCUDA_DEVICE_CUDA;
  const slimcuda_load_options options{
      sizeof(slimcuda_load_options), device, -1, 0, nullptr, graphs ? SLIMCUDA_GRAPHS_ON : SLIMCUDA_GRAPHS_OFF};
  const auto load_t0 = std::chrono::steady_clock::now();
  if (slimcuda_model_load_file_with(path.c_str(), &options, &model) != SLIMCUDA_OK) {
    fail("load");
    return 1;
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_t0).count();
  // What the load holds in slimcuda's caching allocator (weights uploaded by slimcuda show here).
  slimcuda_memory_stats after_load{};
  slimcuda_memory_stats_get(-1, &after_load);
  size_t n_in = 0, n_out = 0;
  slimcuda_model_num_io(model, &n_in, &n_out);
  void* stream = nullptr;
  if (use_stream && slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, -1, &stream) != SLIMCUDA_OK) {
    fail("stream");
    return 1;
  }
  json report = {{"model", meta["name"]}, {"dtype", meta.value("dtype", "float32")},
                 {"stream", use_stream},  {"load", load},
                 {"graphs_on", graphs},   {"tolerance", tol},
                 {"cases", json::array()}};
  if (detections) report["compared_by"] = "compare.py";
  bool all_ok = true;
  double median_us = 0;
  bool timed = false;
  for (const json& c : meta["cases"]) {
    const std::string cd = dir + "/" + c["dir"].get<std::string>();
    Run run{model, stream, device, std::vector<slimcuda_tensor*>(n_in, nullptr),
            std::vector<slimcuda_tensor*>(n_out, nullptr)};
    bool ok = load_inputs(cd, &run) && run.once();
    const json& expected = c["outputs"];
    if (ok && expected.size() != n_out) {
      std::fprintf(stderr, "zoo_runner: %s: %zu outputs, eager gave %zu\n", cd.c_str(), n_out, expected.size());
      ok = false;
    }
    json saved = json::array();
    const std::string save_dir = cd + (graphs ? "/capi_graphs" : use_stream ? "/capi_stream" : "/capi");
    if (ok && save) std::filesystem::create_directories(save_dir);
    double max_abs = 0, max_rel = 0;
    for (size_t o = 0; ok && o < n_out; ++o) {
      slimcuda_tensor_info info{};
      if (slimcuda_tensor_get_info(run.outputs[o], &info) != SLIMCUDA_OK) {
        ok = fail("output info");
        break;
      }
      if (dtype_name(info.dtype) != expected[o]["dtype"].get<std::string>()) {
        std::fprintf(stderr, "zoo_runner: %s output %zu: dtype %s, eager %s\n", cd.c_str(), o,
                     dtype_name(info.dtype).c_str(), expected[o]["dtype"].get<std::string>().c_str());
        ok = false;
        break;
      }
      if (detections) {
        if (!save_output(save_dir, o, run.outputs[o], stream, &saved)) ok = false;
        continue;
      }
      const std::vector<char> want_bytes = read_bytes(cd + "/" + expected[o]["float32_file"].get<std::string>());
      std::vector<float> want(want_bytes.size() / 4);
      std::memcpy(want.data(), want_bytes.data(), want.size() * 4);
      if (static_cast<int64_t>(want.size()) != info.numel) {
        std::fprintf(stderr, "zoo_runner: %s output %zu: %lld elements, eager %zu\n", cd.c_str(), o,
                     static_cast<long long>(info.numel), want.size());
        ok = false;
        break;
      }
      std::vector<float> got(want.size());
      ok = got.empty() ||
           slimcuda_tensor_copy_to_host_on(run.outputs[o], got.data(), got.size() * 4, SLIMCUDA_FLOAT32, stream) ==
               SLIMCUDA_OK ||
           fail("output copy");
      size_t bad = 0;
      for (size_t i = 0; ok && i < want.size(); ++i) {
        const double w = want[i], d = std::fabs(static_cast<double>(got[i]) - w);
        if (!(d <= atol + rtol * std::fabs(w))) {  // NaN fails
          if (bad++ < 5)
            std::fprintf(stderr, "zoo_runner: %s output %zu element %zu: %g, eager %g\n", cd.c_str(), o, i, got[i],
                         want[i]);
        }
        if (std::isnan(d)) {
          max_abs = max_rel = INFINITY;
          continue;
        }
        max_abs = std::max(max_abs, d);
        max_rel = std::max(max_rel, d / std::max(std::fabs(w), 1e-6));
      }
      if (bad)
        std::fprintf(stderr, "zoo_runner: %s output %zu: %zu of %zu elements out of tolerance\n", cd.c_str(), o, bad,
                     want.size());
      ok = ok && bad == 0;
      if (save && !save_output(save_dir, o, run.outputs[o], stream, &saved)) ok = false;
    }
    if (save && !saved.empty()) std::ofstream(save_dir + "/outputs.json") << saved.dump(1);
    if (ok && !timed && iterations > 0) {  // time the first case
      timed = true;
      for (int i = 0; i < warmup && ok; ++i) ok = run.once();  // warm up the GPU clocks and caches first
      std::vector<double> us;
      for (int i = 0; i < iterations && ok; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        ok = run.once();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(us.begin(), us.end());
      median_us = us.empty() ? 0 : us[us.size() / 2];
    }
    json case_report = {{"dir", c["dir"]}, {"max_abs", max_abs}, {"max_rel", max_rel}, {"pass", ok}};
    if (detections) case_report["max_abs"] = case_report["max_rel"] = nullptr;  // compare.py's to say
    report["cases"].push_back(case_report);
    all_ok = all_ok && ok;
    for (slimcuda_tensor* t : run.inputs) slimcuda_tensor_delete(t);
    for (slimcuda_tensor* t : run.outputs) slimcuda_tensor_delete(t);
  }
  report["slimcuda_us_median"] = median_us;
  if (graphs) {
    slimcuda_graph_stats gs{};
    if (slimcuda_model_graph_stats(model, &gs) == SLIMCUDA_OK) {
      report["graphs"] = {{"captures", gs.captures}, {"replays", gs.replays}, {"fallbacks", gs.fallbacks}};
    }
  }
  report["load_s"] = load_s;
  slimcuda_memory_stats end{};
  slimcuda_memory_stats_get(-1, &end);
  report["device_allocated_after_load"] = after_load.allocated_bytes;
  report["device_peak_allocated"] = end.peak_allocated_bytes;
  report["device_peak_reserved"] = end.peak_reserved_bytes;
  report["pass"] = all_ok;
  std::printf("%s\n", report.dump().c_str());
  if (stream) slimcuda_stream_destroy(stream);
  slimcuda_model_free(model);
  return all_ok ? 0 : 1;
}
