// SPDX-License-Identifier: Apache-2.0
// serving_benchmark: one loaded CUDA model driven by C caller threads at once, each on its
// own non-blocking stream, as a service would (a call = slimcuda_model_run_on + waiting for
// its stream + freeing the outputs). For each instance count (1, 2, 4, 8) and caller count
// (1, 2, 4, 8, 16, 32) it prints runs/s over all callers and p50/p99 call latency; the
// baseline is the same model with one caller in the same run (the "x1" column). The table
// runs twice: CUDA graphs off, then on (SLIMCUDA_GRAPHS_STRICT: every run a replay). Every
// caller's last outputs are compared bit for bit with a single-threaded reference run.
// "run us" is the host time inside slimcuda_model_run_on (p50): what a caller spends
// enqueueing, as opposed to waiting for the GPU.
//
// First, the raw-CUDA ceiling in the same run: the demo model's own two kernels
// (models/demo/demo_cuda.cu) launched directly on cudaMalloc'd buffers by the same number of
// threads, each on its own non-blocking stream, launched plainly and as a CUDA graph
// replay, then synchronized: what the driver gives one process with no runtime in between.
// Usage: serving_benchmark PACKAGE [SECONDS_PER_POINT] [--instances=1,2,4,8] [--graphs=both|off|on]
//        [--no-raw]   (needs a GPU; exits 2 without one)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench/benchmark_checks.h"
#include "models/demo/demo_weights.h"
#include "slimcuda/slimcuda.h"

namespace {

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
  CHECK_SC(slimcuda_model_num_io(model, &num_in, &num_out));
  for (size_t i = 0; i < num_in; ++i) {
    slimcuda_tensor_spec spec;
    CHECK_SC(slimcuda_model_input_spec(model, i, &spec));
    int64_t numel = 1;
    for (int64_t d = 0; d < spec.ndim; ++d) numel *= spec.sizes[d];  // exact, or the upper bound
    slimcuda_tensor* t = nullptr;
    CHECK_SC(slimcuda_tensor_empty(spec.ndim, spec.sizes, nullptr, spec.dtype, SLIMCUDA_DEVICE_CUDA, 0, 0, &t));
    in->tensors.push_back(t);
    std::vector<float> host(static_cast<size_t>(numel));
    for (size_t k = 0; k < host.size(); ++k) host[k] = static_cast<float>((k * 37 + i * 11) % 97) / 97.0f - 0.5f;
    CHECK_SC(slimcuda_tensor_copy_from_host(t, host.data(), host.size() * sizeof(float), SLIMCUDA_FLOAT32));
  }
}

// The outputs' values, converted to float32, one vector per output.
std::vector<std::vector<float>> read_outputs(const std::vector<slimcuda_tensor*>& outs) {
  std::vector<std::vector<float>> r;
  for (slimcuda_tensor* t : outs) {
    slimcuda_tensor_info info;
    CHECK_SC(slimcuda_tensor_get_info(t, &info));
    std::vector<float> v(static_cast<size_t>(info.numel));
    CHECK_SC(slimcuda_tensor_copy_to_host(t, v.data(), v.size() * sizeof(float), SLIMCUDA_FLOAT32));
    r.push_back(std::move(v));
  }
  return r;
}

struct Point {
  double runs_per_s;
  double p50_us;
  double p99_us;
  double run_p50_us;  // host time inside the enqueueing call
  int mismatched_callers;
};

double percentile(std::vector<double>* v, int pct) {
  if (v->empty()) return 0;
  std::sort(v->begin(), v->end());
  return (*v)[std::min(v->size() - 1, v->size() * static_cast<size_t>(pct) / 100)];
}

// The caller threads of one measurement. measure() starts `n` threads, each running
// `body(c)` (c = 0 .. n - 1), which prepares and then calls time_calls; once all are ready
// their timed calls start together, and after `seconds` they stop, are joined, and what they
// recorded is summarized.
class Callers {
 public:
  explicit Callers(int n) : n_(n), lat_(static_cast<size_t>(n)), enq_(static_cast<size_t>(n)) {}

  // Runs/s over all callers and the call latency and enqueue-time percentiles (no mismatches).
  template <typename Body>
  Point measure(double seconds, Body body) {
    std::vector<std::thread> threads;
    for (int c = 0; c < n_; ++c) threads.emplace_back(body, c);
    while (ready_.load() < n_) std::this_thread::yield();
    auto t0 = std::chrono::steady_clock::now();
    go_.store(true);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop_.store(true);
    for (std::thread& t : threads) t.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> all, all_enq;
    for (const std::vector<double>& v : lat_) all.insert(all.end(), v.begin(), v.end());
    for (const std::vector<double>& v : enq_) all_enq.insert(all_enq.end(), v.begin(), v.end());
    Point p{};
    p.runs_per_s = static_cast<double>(all.size()) / elapsed;
    p.p50_us = percentile(&all, 50);
    p.p99_us = percentile(&all, 99);
    p.run_p50_us = percentile(&all_enq, 50);
    return p;
  }

  // On caller c's thread, once it is ready: from the common start to the stop, times
  // call(t0) (t0: the call's start; it returns the call's enqueue microseconds) to its return.
  template <typename Call>
  void time_calls(int c, Call call) {
    ready_.fetch_add(1);
    while (!go_.load()) std::this_thread::yield();
    std::vector<double>& mine = lat_[static_cast<size_t>(c)];
    std::vector<double>& queued = enq_[static_cast<size_t>(c)];
    mine.reserve(1 << 16);
    queued.reserve(1 << 16);
    while (!stop_.load()) {
      auto t0 = std::chrono::steady_clock::now();
      const double enqueued_us = call(t0);
      mine.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      queued.push_back(enqueued_us);
    }
  }

 private:
  const int n_;
  std::atomic<bool> go_{false}, stop_{false};
  std::atomic<int> ready_{0};
  std::vector<std::vector<double>> lat_, enq_;  // per caller: call latencies and enqueue times, us
};

#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    if (cudaError_t e_ = (call); e_ != cudaSuccess) {                         \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// The raw-CUDA ceiling: `callers` threads, each launching the demo's two kernels on its own
// non-blocking stream (as a graph replay when `graph`) and synchronizing, for `seconds`.
Point drive_raw(int callers, double seconds, bool graph) {
  using namespace slimcuda_demo;
  Callers group(callers);
  return group.measure(seconds, [&](int c) {
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *x, *w1, *b1, *w2, *b2, *hidden, *y;
    for (float** p : {&x, &w1, &b1, &w2, &b2, &hidden, &y})
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(p), 64 << 10));
    for (float* p : {x, w1, b1, w2, b2}) CUDA_CHECK(cudaMemsetAsync(p, 0, 64 << 10, s));
    auto launch = [&] {
      if (forward(x, kMaxBatch, w1, b1, w2, b2, hidden, y, s) != 0) {
        std::fprintf(stderr, "the demo's kernels failed to launch\n");
        std::exit(1);
      }
    };
    cudaGraphExec_t exec = nullptr;
    if (graph) {
      cudaGraph_t g = nullptr;
      CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      launch();
      CUDA_CHECK(cudaStreamEndCapture(s, &g));
      CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
      CUDA_CHECK(cudaGraphDestroy(g));
    }
    auto call = [&] {
      if (graph) {
        CUDA_CHECK(cudaGraphLaunch(exec, s));
      } else {
        launch();
      }
    };
    call();
    CUDA_CHECK(cudaStreamSynchronize(s));
    group.time_calls(c, [&](std::chrono::steady_clock::time_point t0) {
      call();
      auto t1 = std::chrono::steady_clock::now();
      CUDA_CHECK(cudaStreamSynchronize(s));
      return std::chrono::duration<double, std::micro>(t1 - t0).count();
    });
    if (exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(exec));
    for (float* p : {x, w1, b1, w2, b2, hidden, y}) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaStreamDestroy(s));
  });
}

Point drive(slimcuda_model* model, int callers, double seconds, const std::vector<std::vector<float>>& reference) {
  size_t num_in = 0, num_out = 0;
  CHECK_SC(slimcuda_model_num_io(model, &num_in, &num_out));
  std::atomic<int> mismatched{0};
  Callers group(callers);
  Point p = group.measure(seconds, [&](int c) {
    void* stream = nullptr;
    CHECK_SC(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream));
    {
      Inputs in;
      make_inputs(model, &in);
      std::vector<slimcuda_tensor*> outs(num_out, nullptr);
      double enqueued_us = 0;
      auto call = [&](bool keep) {
        auto t0 = std::chrono::steady_clock::now();
        CHECK_SC(slimcuda_model_run_on(model, in.tensors.data(), num_in, outs.data(), num_out, stream));
        enqueued_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        CHECK_SC(slimcuda_stream_synchronize(stream));
        if (keep) return;
        for (slimcuda_tensor*& t : outs) {
          slimcuda_tensor_delete(t);
          t = nullptr;
        }
      };
      call(false);  // warm: the instance's first run
      group.time_calls(c, [&](std::chrono::steady_clock::time_point) {
        call(false);
        return enqueued_us;
      });
      call(true);
      if (read_outputs(outs) != reference) mismatched.fetch_add(1);
      for (slimcuda_tensor* t : outs) slimcuda_tensor_delete(t);
    }
    CHECK_SC(slimcuda_stream_release(stream));
    CHECK_SC(slimcuda_stream_destroy(stream));
  });
  p.mismatched_callers = mismatched.load();
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: serving_benchmark PACKAGE [SECONDS_PER_POINT] [--instances=1,2,4,8] [--graphs=both|off|on] "
      "[--no-raw]\n";
  if (argc < 2) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  double seconds = 0.5;
  std::vector<int> instance_counts = {1, 2, 4, 8};
  std::vector<int32_t> graph_modes = {SLIMCUDA_GRAPHS_OFF, SLIMCUDA_GRAPHS_STRICT};
  bool raw = true;
  for (int a = 2; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("--instances=", 0) == 0) {
      instance_counts.clear();
      for (const char* p = argv[a] + 12; *p != '\0';) {
        char* end = nullptr;
        const long n = std::strtol(p, &end, 10);
        if (end == p || n < 1 || n > 64) {
          std::fprintf(stderr, "serving_benchmark: bad --instances list\n%s", usage);
          return 2;
        }
        instance_counts.push_back(static_cast<int>(n));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (arg == "--graphs=off") {
      graph_modes = {SLIMCUDA_GRAPHS_OFF};
    } else if (arg == "--graphs=on") {
      graph_modes = {SLIMCUDA_GRAPHS_STRICT};
    } else if (arg == "--graphs=both") {
    } else if (arg == "--no-raw") {
      raw = false;
    } else if (a == 2 && std::atof(argv[a]) > 0) {
      seconds = std::atof(argv[a]);
    } else {
      std::fprintf(stderr, "serving_benchmark: unknown argument %s\n%s", argv[a], usage);
      return 2;
    }
  }
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
    CHECK_SC(slimcuda_model_load_file_with(argv[1], &o, &model));
    size_t num_in = 0, num_out = 0;
    CHECK_SC(slimcuda_model_num_io(model, &num_in, &num_out));
    Inputs in;
    make_inputs(model, &in);
    std::vector<slimcuda_tensor*> outs(num_out, nullptr);
    CHECK_SC(slimcuda_model_run(model, in.tensors.data(), num_in, outs.data(), num_out));
    reference = read_outputs(outs);
    for (slimcuda_tensor* t : outs) slimcuda_tensor_delete(t);
    CHECK_SC(slimcuda_model_free(model));
  }
  std::printf("serving_benchmark %s, %.2f s per point; x1 = runs/s over the same row group's one caller\n", argv[1],
              seconds);
  if (raw) {
    std::printf("raw CUDA: the demo's two kernels, launched directly (no slimcuda), then a stream sync\n");
    std::printf("%6s %7s %12s %6s %10s %10s %10s\n", "graph", "callers", "runs/s", "x1", "p50 us", "p99 us",
                "launch us");
  }
  for (bool graph : {false, true}) {
    if (!raw) break;
    double one = 0;
    for (int callers : {1, 2, 4, 8, 16, 32}) {
      Point p = drive_raw(callers, seconds, graph);
      if (callers == 1) one = p.runs_per_s;
      std::printf("%6s %7d %12.0f %6.2f %10.1f %10.1f %10.1f\n", graph ? "on" : "off", callers, p.runs_per_s,
                  one > 0 ? p.runs_per_s / one : 0.0, p.p50_us, p.p99_us, p.run_p50_us);
      std::fflush(stdout);
    }
  }
  std::printf("slimcuda: %s\n", argv[1]);
  std::printf("%6s %9s %7s %12s %6s %10s %10s %10s %9s\n", "graphs", "instances", "callers", "runs/s", "x1", "p50 us",
              "p99 us", "run us", "mismatch");
  int failures = 0;
  for (int32_t graphs : graph_modes) {
    for (int instances : instance_counts) {
      slimcuda_load_options o{sizeof(slimcuda_load_options), SLIMCUDA_DEVICE_CUDA, 0, instances, nullptr, graphs};
      slimcuda_model* model = nullptr;
      CHECK_SC(slimcuda_model_load_file_with(argv[1], &o, &model));
      double one = 0;
      for (int callers : {1, 2, 4, 8, 16, 32}) {
        Point p = drive(model, callers, seconds, reference);
        if (callers == 1) one = p.runs_per_s;
        std::printf("%6s %9d %7d %12.0f %6.2f %10.1f %10.1f %10.1f %9d\n", graphs ? "on" : "off", instances, callers,
                    p.runs_per_s, one > 0 ? p.runs_per_s / one : 0.0, p.p50_us, p.p99_us, p.run_p50_us,
                    p.mismatched_callers);
        std::fflush(stdout);
        failures += p.mismatched_callers;
      }
      CHECK_SC(slimcuda_model_free(model));
    }
  }
  if (failures != 0) {
    std::fprintf(stderr, "serving_benchmark: %d callers' outputs differ from the reference\n", failures);
    return 1;
  }
  return 0;
}
