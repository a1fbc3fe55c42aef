// SPDX-License-Identifier: Apache-2.0
// CUDA graphs through the C ABI (slimcuda_load_options.cuda_graphs) with the demo model and
// its variant that synchronizes inside Run: replays give the normal run's outputs bit for
// bit, per layout and instance; what cannot be captured falls back or fails cleanly.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

// The file $env names.
std::vector<uint8_t> read_file(const char* env) {
  const char* path = std::getenv(env);
  EXPECT_NE(path, nullptr) << env;
  return path != nullptr ? read_bytes(runfile(path)) : std::vector<uint8_t>{};
}

struct Model {
  slimcuda_model* m = nullptr;
  ~Model() { slimcuda_model_free(m); }
};
struct Tensor {
  slimcuda_tensor* t = nullptr;
  ~Tensor() { slimcuda_tensor_delete(t); }
};
struct Stream {
  void* s = nullptr;
  explicit Stream(int32_t flags = SLIMCUDA_STREAM_NON_BLOCKING) {
    EXPECT_EQ(slimcuda_stream_create(flags, 0, &s), SLIMCUDA_OK) << slimcuda_last_error_message();
  }
  ~Stream() {
    if (s != nullptr) slimcuda_stream_destroy(s);
  }
};

int32_t load(const std::vector<uint8_t>& pkg, int32_t graphs, int32_t instances, Model* out) {
  slimcuda_load_options o{};
  o.struct_size = sizeof o;
  o.device_type = 1;
  o.device_index = 0;
  o.instances = instances;
  o.cuda_graphs = graphs;
  return slimcuda_model_load_with(pkg.data(), pkg.size(), &o, &out->m);
}

std::vector<float> input_values(int64_t batch, int seed) {
  std::vector<float> x(static_cast<size_t>(batch) * 16);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((static_cast<int>(i) * 37 + seed * 11) % 29) / 7.0f - 2.0f;
  return x;
}

// The first n floats of t, copied on `stream`.
std::vector<float> read_back(const slimcuda_tensor* t, size_t n, void* stream) {
  std::vector<float> y(n, -1.0f);
  EXPECT_EQ(slimcuda_tensor_copy_to_host_on(t, y.data(), y.size() * 4, SLIMCUDA_FLOAT32, stream), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  return y;
}

// Runs the model on `stream` (nullptr: the model's own) and reads the output back.
std::vector<float> run(slimcuda_model* m, int64_t batch, int seed, void* stream) {
  const std::vector<float> x = input_values(batch, seed);
  const int64_t sizes[2] = {batch, 16};
  Tensor in, out;
  EXPECT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 1, 0, 0, &in.t), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_tensor_copy_from_host_on(in.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32, stream), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  const int32_t rc = stream != nullptr ? slimcuda_model_run_on(m, &in.t, 1, &out.t, 1, stream)
                                       : slimcuda_model_run(m, &in.t, 1, &out.t, 1);
  EXPECT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
  const size_t n = static_cast<size_t>(batch) * 8;
  return rc == SLIMCUDA_OK ? read_back(out.t, n, stream) : std::vector<float>(n, -1.0f);
}

slimcuda_graph_stats stats(slimcuda_model* m) {
  slimcuda_graph_stats s{};
  EXPECT_EQ(slimcuda_model_graph_stats(m, &s), SLIMCUDA_OK) << slimcuda_last_error_message();
  return s;
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(Graphs, OptionsAreChecked) {
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  slimcuda_load_options o{};
  o.struct_size = sizeof o;
  o.device_type = 0;
  o.device_index = -1;
  o.cuda_graphs = 3;
  slimcuda_model* m = nullptr;
  EXPECT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &o, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("cuda_graphs 3"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(m, nullptr);
  // 0.2.0's layout (no cuda_graphs) still loads, graphs off; a size between the two does not.
  o.struct_size = 16;
  ASSERT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &o, &m), SLIMCUDA_OK) << slimcuda_last_error_message();
  EXPECT_EQ(stats(m).captures, 0u);
  slimcuda_model_free(m);
  m = nullptr;
  o.struct_size = 18;
  EXPECT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &o, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_graph_stats(nullptr, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
}

TEST(Graphs, CpuModelIgnoresGraphs) {
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  slimcuda_load_options o{};
  o.struct_size = sizeof o;
  o.device_type = 0;
  o.device_index = -1;
  o.cuda_graphs = SLIMCUDA_GRAPHS_STRICT;
  Model m;
  ASSERT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &o, &m.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  const std::vector<float> x = input_values(3, 1);
  const int64_t sizes[2] = {3, 16};
  Tensor in, out;
  ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(in.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_model_run(m.m, &in.t, 1, &out.t, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  const slimcuda_graph_stats s = stats(m.m);
  EXPECT_EQ(s.captures + s.replays + s.fallbacks, 0u);
}

TEST(Graphs, ReplaysMatchNormalRunsPerLayout) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model plain, graphed;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 1, &graphed), SLIMCUDA_OK) << slimcuda_last_error_message();
  Stream stream;
  const int64_t batches[3] = {4, 13, 64};
  for (int round = 0; round < 4; ++round) {
    for (int64_t b : batches) {
      SCOPED_TRACE("batch " + std::to_string(b) + " round " + std::to_string(round));
      const int seed = round * 3 + static_cast<int>(b);  // new values every call: the copy-in must happen
      expect_bitwise_equal(run(graphed.m, b, seed, stream.s), run(plain.m, b, seed, stream.s));
    }
  }
  const slimcuda_graph_stats s = stats(graphed.m);
  EXPECT_EQ(s.captures, 3u) << "one graph per layout";
  EXPECT_EQ(s.graphs, 3u);
  EXPECT_EQ(s.replays, 12u) << "every run, the capturing one included, is served by its graph";
  EXPECT_EQ(s.fallbacks, 0u);
  EXPECT_EQ(stats(plain.m).replays, 0u);
}

// A replay's copy nodes are pointed at each call's tensors: inputs that live side by side in
// one buffer (different addresses, some not 16-byte aligned) are each read where they are,
// and every replay's output is its own tensor, unchanged by the replays after it.
TEST(Graphs, ReplaysReadEachInputWhereItLivesAndOutputsStayTheirOwn) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model plain, graphed;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 1, &graphed), SLIMCUDA_OK) << slimcuda_last_error_message();
  Stream stream;
  constexpr int64_t kBatch = 6, kViews = 4, kElems = kBatch * 16;
  const int64_t offsets[kViews] = {0, kElems + 3, 2 * kElems + 5, 3 * kElems + 9};
  const int64_t total = 4 * kElems + 16;
  std::vector<float> host(static_cast<size_t>(total));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((static_cast<int>(i) * 53) % 31) / 5.0f - 3.0f;
  Tensor buffer;
  ASSERT_EQ(slimcuda_tensor_empty(1, &total, nullptr, SLIMCUDA_FLOAT32, 1, 0, 0, &buffer.t), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host_on(buffer.t, host.data(), host.size() * 4, SLIMCUDA_FLOAT32, stream.s),
            SLIMCUDA_OK)
      << slimcuda_last_error_message();
  Tensor views[kViews];
  const int64_t sizes[2] = {kBatch, 16}, strides[2] = {16, 1};
  for (int v = 0; v < kViews; ++v) {
    ASSERT_EQ(slimcuda_tensor_view(buffer.t, 2, sizes, strides, offsets[v], &views[v].t), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  std::vector<float> want[kViews];
  for (int v = 0; v < kViews; ++v) {
    Tensor out;
    ASSERT_EQ(slimcuda_model_run_on(plain.m, &views[v].t, 1, &out.t, 1, stream.s), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    want[v] = read_back(out.t, kBatch * 8, stream.s);
  }
  for (int v = 1; v < kViews; ++v) ASSERT_NE(want[v], want[0]) << "the views must hold different inputs";
  constexpr int kRounds = 3;
  Tensor kept[kRounds][kViews];
  for (int r = 0; r < kRounds; ++r) {
    for (int v = 0; v < kViews; ++v) {
      SCOPED_TRACE("round " + std::to_string(r) + " view " + std::to_string(v));
      ASSERT_EQ(slimcuda_model_run_on(graphed.m, &views[v].t, 1, &kept[r][v].t, 1, stream.s), SLIMCUDA_OK)
          << slimcuda_last_error_message();
      expect_bitwise_equal(read_back(kept[r][v].t, kBatch * 8, stream.s), want[v]);
    }
  }
  for (int r = 0; r < kRounds; ++r) {
    for (int v = 0; v < kViews; ++v) expect_bitwise_equal(read_back(kept[r][v].t, kBatch * 8, stream.s), want[v]);
  }
  const slimcuda_graph_stats s = stats(graphed.m);
  EXPECT_EQ(s.captures, 1u);
  EXPECT_EQ(s.replays, static_cast<uint64_t>(kRounds * kViews));
  EXPECT_EQ(s.fallbacks, 0u);
}

TEST(Graphs, ModelsOwnStreamAndOutputsOutliveTheModel) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model plain;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK);
  const std::vector<float> want = run(plain.m, 5, 2, nullptr);
  slimcuda_model* m = nullptr;
  {
    Model graphed;
    ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 2, &graphed), SLIMCUDA_OK) << slimcuda_last_error_message();
    // The model's own stream is non-blocking: captured too.
    for (int i = 0; i < 3; ++i) expect_bitwise_equal(run(graphed.m, 5, 2, nullptr), want);
    EXPECT_GE(stats(graphed.m).captures, 1u);
    EXPECT_EQ(stats(graphed.m).replays, 3u);
    m = graphed.m;
    // An output of a replay, read after the model is gone.
    const std::vector<float> x = input_values(5, 2);
    const int64_t sizes[2] = {5, 16};
    Tensor in;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 1, 0, 0, &in.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(in.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    slimcuda_tensor* out = nullptr;
    ASSERT_EQ(slimcuda_model_run(m, &in.t, 1, &out, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
    slimcuda_model_free(graphed.m);
    graphed.m = nullptr;
    std::vector<float> y(want.size());
    ASSERT_EQ(slimcuda_tensor_copy_to_host(out, y.data(), y.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    expect_bitwise_equal(y, want);
    slimcuda_tensor_delete(out);
  }
}

// Captures on one thread while another retires streams and empties the cache (what a
// service does as goroutines come and go): neither may synchronize the whole device during
// the capture, which would invalidate it (seen in Go's BenchmarkServing on the H200,
// 2026-12-01: "cudaErrorStreamCaptureInvalidated" in strict mode). 16 batch sizes: 16
// captures, each racing the other thread.
TEST(Graphs, CapturesSurviveStreamsRetiredOnAnotherThread) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model strict, plain;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 1, &strict), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK) << slimcuda_last_error_message();
  std::atomic<bool> stop{false};
  std::atomic<int> churn_errors{0}, churned{0};
  std::thread churn([&] {
    while (!stop.load()) {
      void* s = nullptr;
      if (slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &s) != SLIMCUDA_OK) {
        ++churn_errors;
        break;
      }
      void* p = nullptr;
      churn_errors += slimcuda_caller_stream_push(s) != SLIMCUDA_OK;
      churn_errors += slimcuda_device_alloc(1u << 20, 0, 0, &p) != SLIMCUDA_OK;
      churn_errors += slimcuda_device_free(p, 0) != SLIMCUDA_OK;
      churn_errors += slimcuda_caller_stream_pop() != SLIMCUDA_OK;
      churn_errors += slimcuda_stream_release(s) != SLIMCUDA_OK;  // the pool forgets s: waits for it
      churn_errors += slimcuda_stream_destroy(s) != SLIMCUDA_OK;
      churn_errors += slimcuda_empty_cache(0) != SLIMCUDA_OK;
      ++churned;
    }
  });
  Stream caller;
  for (int64_t batch = 1; batch <= 16; ++batch) {
    const std::vector<float> got = run(strict.m, batch, 5, caller.s);
    expect_bitwise_equal(got, run(plain.m, batch, 5, caller.s));
    if (HasFailure()) break;
  }
  stop.store(true);
  churn.join();
  EXPECT_EQ(churn_errors.load(), 0);
  EXPECT_GT(churned.load(), 0);
  EXPECT_EQ(stats(strict.m).captures, 16u);
}

TEST(Graphs, BlockingStreamIsNotCaptured) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model plain, on, strict;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK);
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_ON, 1, &on), SLIMCUDA_OK);
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 1, &strict), SLIMCUDA_OK);
  Stream blocking(SLIMCUDA_STREAM_DEFAULT);
  expect_bitwise_equal(run(on.m, 7, 3, blocking.s), run(plain.m, 7, 3, blocking.s));
  EXPECT_EQ(stats(on.m).fallbacks, 1u);
  EXPECT_EQ(stats(on.m).captures, 0u);

  const int64_t sizes[2] = {7, 16};
  Tensor in, out;
  ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 1, 0, 0, &in.t), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_model_run_on(strict.m, &in.t, 1, &out.t, 1, blocking.s), SLIMCUDA_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("non-blocking stream"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(out.t, nullptr);
}

TEST(Graphs, UncapturableModelFallsBackOrFailsCleanly) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  const std::vector<uint8_t> sync_pkg = read_file("SLIMCUDA_DEMO_SYNC_PACKAGE");
  Model plain, on, strict;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK);
  ASSERT_EQ(load(sync_pkg, SLIMCUDA_GRAPHS_ON, 1, &on), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(load(sync_pkg, SLIMCUDA_GRAPHS_STRICT, 1, &strict), SLIMCUDA_OK);
  Stream stream;
  const std::vector<float> want = run(plain.m, 6, 4, stream.s);
  // On: the capture fails inside the model (its cudaStreamSynchronize), the run goes the
  // normal way, and so does every later run of that layout without trying again.
  for (int i = 0; i < 3; ++i) expect_bitwise_equal(run(on.m, 6, 4, stream.s), want);
  slimcuda_graph_stats s = stats(on.m);
  EXPECT_EQ(s.captures, 0u);
  EXPECT_EQ(s.fallbacks, 3u);
  EXPECT_EQ(s.graphs, 0u);

  const int64_t sizes[2] = {6, 16};
  Tensor in, out;
  ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 1, 0, 0, &in.t), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_model_run_on(strict.m, &in.t, 1, &out.t, 1, stream.s), SLIMCUDA_ERROR_NOT_SUPPORTED);
  const std::string why = slimcuda_last_error_message();
  EXPECT_NE(why.find("cannot be captured into a CUDA graph"), std::string::npos) << why;
  EXPECT_EQ(out.t, nullptr);
  // Nothing left broken: the stream takes work, and the same model still runs a normal model's work.
  EXPECT_EQ(slimcuda_stream_synchronize(stream.s), SLIMCUDA_OK) << slimcuda_last_error_message();
  expect_bitwise_equal(run(plain.m, 6, 4, stream.s), want);
  EXPECT_EQ(slimcuda_model_run_on(strict.m, &in.t, 1, &out.t, 1, stream.s), SLIMCUDA_ERROR_NOT_SUPPORTED)
      << "a layout that failed is not captured again";
}

TEST(Graphs, ManyThreadsOnTheirOwnStreams) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = read_file("SLIMCUDA_DEMO_PACKAGE");
  Model plain, graphed;
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_OFF, 1, &plain), SLIMCUDA_OK);
  ASSERT_EQ(load(pkg, SLIMCUDA_GRAPHS_STRICT, 4, &graphed), SLIMCUDA_OK);
  constexpr int kThreads = 8, kRuns = 150;
  const int64_t batches[3] = {1, 9, 32};
  std::vector<std::vector<float>> want;
  {
    Stream s;
    for (int k = 0; k < 3; ++k) want.push_back(run(plain.m, batches[k], k, s.s));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Stream s;
      for (int i = 0; i < kRuns; ++i) {
        const int k = (i + t) % 3;
        const std::vector<float> y = run(graphed.m, batches[k], k, s.s);
        if (y.size() != want[k].size() || std::memcmp(y.data(), want[k].data(), y.size() * 4) != 0) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  const slimcuda_graph_stats s = stats(graphed.m);
  EXPECT_EQ(s.replays, uint64_t{kThreads} * kRuns);
  EXPECT_GE(s.captures, 3u);
  EXPECT_LE(s.captures, 12u) << "at most one graph per layout and instance";
  EXPECT_EQ(s.fallbacks, 0u);
}

}  // namespace
}  // namespace slimcuda::testing
