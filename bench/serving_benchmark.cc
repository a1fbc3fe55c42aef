// SPDX-License-Identifier: Apache-2.0
// serving_benchmark: one loaded CUDA model driven by C caller threads at once, each on its
// own non-blocking stream, as a service would (a call = slimcuda_model_run_on + waiting for
// its stream + freeing the outputs). For each instance count (1, 2, 4, 8) and caller count
// (1, 2, 4, 8, 16, 32) it prints runs/s over all callers and p50/p99 call latency; the
// baseline is the same model with one caller in the same run (the "x1" column). The table
// runs twice: CUDA graphs off, then on (SLIMCUDA_GRAPHS_STRICT: every run a replay). Every
// caller's last outputs are compared bit for bit with a single-threaded reference run.
// Usage: serving_benchmark PACKAGE [SECONDS_PER_POINT]   (needs a GPU; exits 2 without one)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "slimcuda/slimcuda.h"

namespace {

#define CHECK(call)                                                                  \
  do {                                                                               \
    if ((call) != 0) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call, slimcuda_last_error_message()); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// One caller's inputs, filled with the same deterministic values for every caller, so that
// every caller's outputs must equal the reference.
struct Inputs {
  std::vector<slimcuda_tensor*> tensors;
  ~Inputs() {
    for (slimcuda_tensor* t : tensors) slimcuda_tensor_delete(t);
  }
};

void make_inputs(slimcuda_model* model, Inputs* in) {
  size_t num_in = 0, num_out = 0;
  CHECK(slimcuda_model_num_io(model, &num_in, &num_out));
  for (size_t i = 0; i < num_in; ++i) {
    slimcuda_tensor_spec spec;
    CHECK(slimcuda_model_input_spec(model, i, &spec));
    int64_t numel = 1;
    for (int64_t d = 0; d < spec.ndim; ++d) numel *= spec.sizes[d];  // exact, or the upper bound
    slimcuda_tensor* t = nullptr;
    CHECK(slimcuda_tensor_empty(spec.ndim, spec.sizes, nullptr, spec.dtype, SLIMCUDA_DEVICE_CUDA, 0, 0, &t));
    in->tensors.push_back(t);
    std::vector<float> host(static_cast<size_t>(numel));
    for (size_t k = 0; k < host.size(); ++k) host[k] = static_cast<float>((k * 37 + i * 11) % 97) / 97.0f - 0.5f;
    CHECK(slimcuda_tensor_copy_from_host(t, host.data(), host.size() * sizeof(float), SLIMCUDA_FLOAT32));
  }
}

// The outputs' values, converted to float32, one vector per output.
std::vector<std::vector<float>> read_outputs(const std::vector<slimcuda_tensor*>& outs) {
  std::vector<std::vector<float>> r;
  for (slimcuda_tensor* t : outs) {
    slimcuda_tensor_info info;
    CHECK(slimcuda_tensor_get_info(t, &info));
    std::vector<float> v(static_cast<size_t>(info.numel));
    CHECK(slimcuda_tensor_copy_to_host(t, v.data(), v.size() * sizeof(float), SLIMCUDA_FLOAT32));
    r.push_back(std::move(v));
  }
  return r;
}

struct Point {
  double runs_per_s;
  double p50_us;
  double p99_us;
  int mismatched_callers;
};

Point drive(slimcuda_model* model, int callers, double seconds, const std::vector<std::vector<float>>& reference) {
  size_t num_in = 0, num_out = 0;
  CHECK(slimcuda_model_num_io(model, &num_in, &num_out));
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int> ready{0}, mismatched{0};
  std::vector<std::vector<double>> lat(static_cast<size_t>(callers));
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      void* stream = nullptr;
      CHECK(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream));
      {
        Inputs in;
        make_inputs(model, &in);
        std::vector<slimcuda_tensor*> outs(num_out, nullptr);
        auto call = [&](bool keep) {
          CHECK(slimcuda_model_run_on(model, in.tensors.data(), num_in, outs.data(), num_out, stream));
          CHECK(slimcuda_stream_synchronize(stream));
          if (keep) return;
          for (slimcuda_tensor*& t : outs) {
            slimcuda_tensor_delete(t);
            t = nullptr;
          }
        };
        call(false);  // warm: the instance's first run
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        std::vector<double>& mine = lat[static_cast<size_t>(c)];
        mine.reserve(1 << 16);
        while (!stop.load()) {
          auto t0 = std::chrono::steady_clock::now();
          call(false);
          mine.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        call(true);
        if (read_outputs(outs) != reference) mismatched.fetch_add(1);
        for (slimcuda_tensor* t : outs) slimcuda_tensor_delete(t);
      }
      CHECK(slimcuda_stream_release(stream));
      CHECK(slimcuda_stream_destroy(stream));
    });
  }
  while (ready.load() < callers) std::this_thread::yield();
  auto t0 = std::chrono::steady_clock::now();
  go.store(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (std::thread& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  for (const std::vector<double>& v : lat) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Point p{};
  p.runs_per_s = static_cast<double>(all.size()) / elapsed;
  if (!all.empty()) {
    p.p50_us = all[all.size() / 2];
    p.p99_us = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  p.mismatched_callers = mismatched.load();
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: serving_benchmark PACKAGE [SECONDS_PER_POINT]\n");
    return 2;
  }
  const double seconds = argc > 2 ? std::atof(argv[2]) : 0.5;
  int32_t devices = 0;
  if (slimcuda_device_count(&devices) != 0 || devices < 1) {
    std::fprintf(stderr, "serving_benchmark: needs a GPU\n");
    return 2;
  }
  // The single-threaded reference outputs, from a one-instance model.
  std::vector<std::vector<float>> reference;
  {
    slimcuda_load_options o{sizeof(slimcuda_load_options), SLIMCUDA_DEVICE_CUDA, 0, 1, nullptr, SLIMCUDA_GRAPHS_OFF};
    slimcuda_model* model = nullptr;
    CHECK(slimcuda_model_load_file_with(argv[1], &o, &model));
    size_t num_in = 0, num_out = 0;
    CHECK(slimcuda_model_num_io(model, &num_in, &num_out));
    Inputs in;
    make_inputs(model, &in);
    std::vector<slimcuda_tensor*> outs(num_out, nullptr);
    CHECK(slimcuda_model_run(model, in.tensors.data(), num_in, outs.data(), num_out));
    reference = read_outputs(outs);
    for (slimcuda_tensor* t : outs) slimcuda_tensor_delete(t);
    CHECK(slimcuda_model_free(model));
  }
  std::printf("serving_benchmark %s, %.2f s per point; x1 = runs/s over the same instance count's one caller\n",
              argv[1], seconds);
  std::printf("%6s %9s %7s %12s %6s %10s %10s %9s\n", "graphs", "instances", "callers", "runs/s", "x1", "p50 us",
              "p99 us", "mismatch");
  int failures = 0;
  for (int32_t graphs : {SLIMCUDA_GRAPHS_OFF, SLIMCUDA_GRAPHS_STRICT}) {
    for (int instances : {1, 2, 4, 8}) {
      slimcuda_load_options o{sizeof(slimcuda_load_options), SLIMCUDA_DEVICE_CUDA, 0, instances, nullptr, graphs};
      slimcuda_model* model = nullptr;
      CHECK(slimcuda_model_load_file_with(argv[1], &o, &model));
      double one = 0;
      for (int callers : {1, 2, 4, 8, 16, 32}) {
        Point p = drive(model, callers, seconds, reference);
        if (callers == 1) one = p.runs_per_s;
        std::printf("%6s %9d %7d %12.0f %6.2f %10.1f %10.1f %9d\n", graphs ? "on" : "off", instances, callers,
                    p.runs_per_s, one > 0 ? p.runs_per_s / one : 0.0, p.p50_us, p.p99_us, p.mismatched_callers);
        std::fflush(stdout);
        failures += p.mismatched_callers;
      }
      CHECK(slimcuda_model_free(model));
    }
  }
  if (failures != 0) {
    std::fprintf(stderr, "serving_benchmark: %d callers' outputs differ from the reference\n", failures);
    return 1;
  }
  return 0;
}
