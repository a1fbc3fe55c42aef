// SPDX-License-Identifier: Apache-2.0
// Decoding with a model that keeps state (docs/state.md), through the C ABI: the small
// Llama-shaped decode step of tools/aoti/decoder.py (a KV cache in registered buffers,
// written with index_copy_ at each step's position), exported on the GPU machine with its
// weights in the library ("so") and in the archive ("archive"). Every run compares 32
// steps against eager PyTorch's logits at the same tokens (teacher forcing: a bf16 near-tie
// may pick another token on one side, which then says nothing about the state); a step
// whose eager top-2 margin is wider than the tolerance must pick eager's token. Cases:
// graphs off and on, normal runs and replays mixed, two loads of one file interleaved, a
// reset and the same sequence again, and the one-instance rule. SLIMCUDA_DECODER_DIR
// names decoder.py's output; skips without a GPU or it, fails for either under
// SLIMCUDA_REQUIRE_GPU=1.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

struct Reference {
  std::string dir;
  int steps = 0, vocab = 0;
  std::vector<int64_t> tokens;  // batch 1: the token fed at each step
  std::vector<float> logits;    // steps x vocab
  double abs_tol = 0, rel_tol = 0;
};

class Decode : public ::testing::Test {
 protected:
  void SetUp() override {
    SLIMCUDA_REQUIRE_GPU_OR_SKIP();
    const char* dir = std::getenv("SLIMCUDA_DECODER_DIR");
    if (dir == nullptr || *dir == '\0') {
      if (gpu_required()) FAIL() << "SLIMCUDA_DECODER_DIR is not set (python3 tools/aoti/decoder.py DIR)";
      GTEST_SKIP() << "SLIMCUDA_DECODER_DIR is not set";
    }
    ref_.dir = dir;
    std::ifstream in(ref_.dir + "/reference.json");
    ASSERT_TRUE(in.good()) << ref_.dir << "/reference.json";
    const nlohmann::json j = nlohmann::json::parse(in);
    ref_.steps = j.at("steps");
    ref_.vocab = j.at("vocab");
    ASSERT_EQ(j.at("batch").get<int>(), 1);
    for (const auto& t : j.at("tokens")) ref_.tokens.push_back(t.at(0).get<int64_t>());
    ref_.abs_tol = j.at("tolerance").at("abs");
    ref_.rel_tol = j.at("tolerance").at("rel");
    const std::vector<uint8_t> bytes = read_bytes(ref_.dir + "/" + j.at("logits_file").get<std::string>());
    ASSERT_EQ(bytes.size(), sizeof(float) * ref_.steps * ref_.vocab);
    ref_.logits.resize(bytes.size() / sizeof(float));
    std::memcpy(ref_.logits.data(), bytes.data(), bytes.size());
    ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream_), SLIMCUDA_OK);
    const int64_t one[2] = {1, 1};
    ASSERT_EQ(slimcuda_tensor_empty(2, one, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &ids_), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_empty(1, one, nullptr, SLIMCUDA_INT64, SLIMCUDA_DEVICE_CUDA, 0, 0, &pos_), SLIMCUDA_OK);
  }
  void TearDown() override {
    slimcuda_tensor_delete(ids_);
    slimcuda_tensor_delete(pos_);
    if (stream_ != nullptr) slimcuda_stream_destroy(stream_);
  }

  slimcuda_model* load(const std::string& variant, int32_t graphs, int32_t instances = 0, int32_t want = SLIMCUDA_OK) {
    slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, instances, nullptr, graphs};
    slimcuda_model* m = nullptr;
    const std::string path = ref_.dir + "/" + variant + "/model.pt2";
    EXPECT_EQ(slimcuda_model_load_file_with(path.c_str(), &o, &m), want) << slimcuda_last_error_message();
    return m;
  }

  // One step on `stream` (nullptr: the model's own): the logits of feeding `token` at `pos`.
  std::vector<float> step(slimcuda_model* m, int64_t token, int64_t pos, void* stream) {
    std::vector<float> logits(ref_.vocab);
    const bool on = stream != nullptr;
    EXPECT_EQ(on ? slimcuda_tensor_copy_from_host_on(ids_, &token, 8, SLIMCUDA_INT64, stream)
                 : slimcuda_tensor_copy_from_host(ids_, &token, 8, SLIMCUDA_INT64),
              SLIMCUDA_OK);
    EXPECT_EQ(on ? slimcuda_tensor_copy_from_host_on(pos_, &pos, 8, SLIMCUDA_INT64, stream)
                 : slimcuda_tensor_copy_from_host(pos_, &pos, 8, SLIMCUDA_INT64),
              SLIMCUDA_OK);
    slimcuda_tensor* in[2] = {ids_, pos_};
    slimcuda_tensor* out = nullptr;
    const int32_t rc = on ? slimcuda_model_run_on(m, in, 2, &out, 1, stream) : slimcuda_model_run(m, in, 2, &out, 1);
    EXPECT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
    if (rc != SLIMCUDA_OK) return logits;
    EXPECT_EQ(on ? slimcuda_tensor_copy_to_host_on(out, logits.data(), logits.size() * 4, SLIMCUDA_FLOAT32, stream)
                 : slimcuda_tensor_copy_to_host(out, logits.data(), logits.size() * 4, SLIMCUDA_FLOAT32),
              SLIMCUDA_OK);
    slimcuda_tensor_delete(out);
    return logits;
  }

  // Checks step s's logits against eager's; returns the largest error over the tolerance's
  // allowance (> 1 fails).
  void check(const std::vector<float>& got, int s, const std::string& what) {
    const float* want = ref_.logits.data() + static_cast<size_t>(s) * ref_.vocab;
    double worst = 0;
    int worst_at = 0;
    for (int v = 0; v < ref_.vocab; ++v) {
      const double allowed = ref_.abs_tol + ref_.rel_tol * std::fabs(want[v]);
      const double r = std::fabs(got[v] - want[v]) / allowed;
      if (!(r <= worst)) worst = r, worst_at = v;
    }
    EXPECT_LE(worst, 1.0) << what << ": step " << s << ": logit " << worst_at << " is " << got[worst_at] << ", eager's "
                          << want[worst_at];
    // eager's choice, where its margin is clear of the tolerance
    std::vector<float> sorted(want, want + ref_.vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    const int eager = static_cast<int>(std::max_element(want, want + ref_.vocab) - want);
    const int ours = static_cast<int>(std::max_element(got.begin(), got.end()) - got.begin());
    if (sorted[0] - sorted[1] > 2 * (ref_.abs_tol + ref_.rel_tol * std::fabs(sorted[0]))) {
      EXPECT_EQ(ours, eager) << what << ": step " << s;
      if (s + 1 < ref_.steps) {
        EXPECT_EQ(eager, ref_.tokens[s + 1]) << "the reference's own greedy token";
      }
    }
  }

  // Steps [from, to) of the reference on m.
  void decode(slimcuda_model* m, int from, int to, void* stream, const std::string& what) {
    for (int s = from; s < to; ++s) check(step(m, ref_.tokens[s], s, stream), s, what);
  }

  Reference ref_;
  void* stream_ = nullptr;
  slimcuda_tensor* ids_ = nullptr;
  slimcuda_tensor* pos_ = nullptr;
};

TEST_F(Decode, StateIsTheKvCache) {
  for (const char* variant : {"so", "archive"}) {
    slimcuda_model* m = load(variant, SLIMCUDA_GRAPHS_OFF);
    ASSERT_NE(m, nullptr);
    int32_t instances = 0;
    ASSERT_EQ(slimcuda_model_instances(m, &instances), SLIMCUDA_OK);
    EXPECT_EQ(instances, 1) << variant;
    size_t n = 0;
    ASSERT_EQ(slimcuda_model_num_constants(m, &n), SLIMCUDA_OK);
    int caches = 0, states = 0;
    for (size_t i = 0; i < n; ++i) {
      slimcuda_constant_info c{};
      ASSERT_EQ(slimcuda_model_constant(m, i, &c), SLIMCUDA_OK);
      const std::string name = c.name;
      const bool cache = name.find("_cache") != std::string::npos;
      caches += cache;
      states += c.is_state;
      EXPECT_EQ(c.is_state != 0, cache) << variant << " " << name << " (kind " << c.kind << ")";
      EXPECT_EQ(c.visible, 1) << name;
      if (name == "rope_cos") {
        EXPECT_EQ(c.kind, SLIMCUDA_CONSTANT_BUFFER) << "a read-only buffer, proven so";
      }
    }
    EXPECT_EQ(caches, 4) << variant;  // 2 layers x k, v
    EXPECT_EQ(states, 4) << variant;
    slimcuda_model_free(m);
    EXPECT_EQ(load(variant, SLIMCUDA_GRAPHS_OFF, 4, SLIMCUDA_ERROR_INVALID_ARGUMENT), nullptr);
  }
}

// The decoder's library in a package (which carries no wrapper source, so every buffer is
// state): the default instance count must give it one instance, as for the .pt2, and an
// explicit 4 is refused. The package loader once resolved the default to 4 itself, and every
// package of a model with buffers (BERT's position ids, batch norm's running statistics)
// failed to load with the default.
TEST_F(Decode, PackageOfTheDecoderLoadsWithTheDefaultInstances) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  const nlohmann::json cuda_int64 = {{"dtype", "int64"}, {"device", "cuda"}};
  nlohmann::json ids = cuda_int64, pos = cuda_int64;
  ids["name"] = "ids", ids["sizes"] = {1, 1};
  pos["name"] = "pos", pos["sizes"] = {1};
  const nlohmann::json logits = {
      {"name", "logits"}, {"dtype", "float32"}, {"sizes", {1, ref_.vocab}}, {"device", "cuda"}};
  const nlohmann::json manifest = {
      {"libraries",
       {{{"device", "cuda"},
         {"so", ref_.dir + "/so/model.so"},
         {"methods", {{{"name", "forward"}, {"inputs", {ids, pos}}, {"outputs", {logits}}}}}}}}};
  const std::string manifest_path = dir + "/decoder_manifest.json", package = dir + "/decoder.slimcuda";
  std::ofstream(manifest_path) << manifest.dump();
  ASSERT_EQ(slimcuda_package_pack(manifest_path.c_str(), package.c_str()), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  for (int32_t instances : {0, 1}) {
    slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, instances, nullptr, 0};
    slimcuda_model* m = nullptr;
    ASSERT_EQ(slimcuda_model_load_file_with(package.c_str(), &o, &m), SLIMCUDA_OK) << slimcuda_last_error_message();
    int32_t n = 0;
    ASSERT_EQ(slimcuda_model_instances(m, &n), SLIMCUDA_OK);
    EXPECT_EQ(n, 1) << "asked for " << instances;
    decode(m, 0, ref_.steps, stream_, "package, instances " + std::to_string(instances));
    slimcuda_model_free(m);
  }
  slimcuda_load_options four{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 4, nullptr, 0};
  slimcuda_model* m = nullptr;
  EXPECT_EQ(slimcuda_model_load_file_with(package.c_str(), &four, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("cannot have 4 instances"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(m, nullptr);
}

TEST_F(Decode, MatchesEagerWithAndWithoutGraphs) {
  for (const char* variant : {"so", "archive"}) {
    for (int32_t graphs : {SLIMCUDA_GRAPHS_OFF, SLIMCUDA_GRAPHS_ON}) {
      slimcuda_model* m = load(variant, graphs);
      ASSERT_NE(m, nullptr);
      const std::string what = std::string(variant) + (graphs ? " graphs" : "");
      decode(m, 0, ref_.steps, stream_, what);
      slimcuda_graph_stats g{};
      ASSERT_EQ(slimcuda_model_graph_stats(m, &g), SLIMCUDA_OK);
      if (graphs) {
        EXPECT_EQ(g.captures, 1u) << what;
        EXPECT_EQ(g.replays, static_cast<uint64_t>(ref_.steps)) << what << ": every step a replay";
      }
      slimcuda_model_free(m);
    }
  }
}

// Normal runs (the model's own... here a blocking stream, which graphs never capture) and
// replays (a non-blocking stream) alternate on one load: one state for both containers.
TEST_F(Decode, NormalRunsAndReplaysShareOneState) {
  void* blocking = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_DEFAULT, 0, &blocking), SLIMCUDA_OK);
  for (const char* variant : {"so", "archive"}) {
    slimcuda_model* m = load(variant, SLIMCUDA_GRAPHS_ON);
    ASSERT_NE(m, nullptr);
    decode(m, 0, 3, blocking, std::string(variant) + " normal, before any capture");
    for (int s = 3; s < ref_.steps; ++s) {
      check(step(m, ref_.tokens[s], s, s % 3 == 0 ? blocking : stream_), s, std::string(variant) + " mixed");
    }
    slimcuda_graph_stats g{};
    ASSERT_EQ(slimcuda_model_graph_stats(m, &g), SLIMCUDA_OK);
    EXPECT_GT(g.replays, 0u);
    EXPECT_GT(g.fallbacks, 0u);
    slimcuda_model_free(m);
  }
  slimcuda_stream_destroy(blocking);
}

TEST_F(Decode, TwoLoadsOfOneFileInterleaved) {
  for (const char* variant : {"so", "archive"}) {
    for (int32_t graphs : {SLIMCUDA_GRAPHS_OFF, SLIMCUDA_GRAPHS_ON}) {
      slimcuda_model* a = load(variant, graphs);
      slimcuda_model* b = load(variant, graphs);
      ASSERT_NE(a, nullptr);
      ASSERT_NE(b, nullptr);
      const std::string what = std::string(variant) + (graphs ? " graphs" : "");
      // b starts when a is halfway: each step of one between two of the other.
      const int half = ref_.steps / 2;
      decode(a, 0, half, stream_, what + " a");
      for (int s = 0; s < ref_.steps; ++s) {
        if (half + s < ref_.steps) check(step(a, ref_.tokens[half + s], half + s, stream_), half + s, what + " a");
        check(step(b, ref_.tokens[s], s, stream_), s, what + " b");
      }
      slimcuda_model_free(a);
      slimcuda_model_free(b);
    }
  }
}

TEST_F(Decode, ResetGivesTheSameSequenceAgain) {
  for (const char* variant : {"so", "archive"}) {
    slimcuda_model* m = load(variant, SLIMCUDA_GRAPHS_ON);
    ASSERT_NE(m, nullptr);
    decode(m, 0, ref_.steps, stream_, std::string(variant) + " first");
    ASSERT_EQ(slimcuda_caller_stream_push(stream_), SLIMCUDA_OK);
    EXPECT_EQ(slimcuda_model_reset_state(m), SLIMCUDA_OK) << slimcuda_last_error_message();
    ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    decode(m, 0, ref_.steps, stream_, std::string(variant) + " after reset");
    // The cache read back: position 0 of layer 0's k cache is not zero after a step.
    size_t n = 0;
    ASSERT_EQ(slimcuda_model_num_constants(m, &n), SLIMCUDA_OK);
    for (size_t i = 0; i < n; ++i) {
      slimcuda_constant_info c{};
      ASSERT_EQ(slimcuda_model_constant(m, i, &c), SLIMCUDA_OK);
      if (std::string(c.name) != "blocks_0_k_cache") continue;
      slimcuda_tensor* t = nullptr;
      ASSERT_EQ(slimcuda_tensor_empty(c.ndim, c.sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, -1, 0, &t),
                SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_model_read_constant(m, c.name, t), SLIMCUDA_OK) << slimcuda_last_error_message();
      slimcuda_tensor_info info{};
      ASSERT_EQ(slimcuda_tensor_get_info(t, &info), SLIMCUDA_OK);
      const float* p = static_cast<const float*>(info.data);
      double written = 0;
      for (int64_t k = 0; k < info.numel; ++k) written += std::fabs(p[k]);
      EXPECT_GT(written, 0.0) << "the cache holds the steps' keys";
      ASSERT_EQ(slimcuda_model_reset_state(m), SLIMCUDA_OK);
      ASSERT_EQ(slimcuda_model_read_constant(m, c.name, t), SLIMCUDA_OK);
      written = 0;
      for (int64_t k = 0; k < info.numel; ++k) written += std::fabs(p[k]);
      EXPECT_EQ(written, 0.0) << "reset: the cache as exported (zeros)";
      EXPECT_EQ(slimcuda_model_write_constant(m, "embed_weight", t), SLIMCUDA_ERROR_INVALID_ARGUMENT);
      slimcuda_tensor_delete(t);
    }
    slimcuda_model_free(m);
  }
}

// Weights swapped while decoding (graphs on): halfway, the archive's weights are staged
// again from the file, swapped in and the old set freed; the second half still matches
// eager (the state carried over, the graph captured again on the new weights), and the
// device memory is what it was (the old set gone, one graph as before).
TEST_F(Decode, WeightsSwappedWhileDecoding) {
  slimcuda_model* m = load("archive", SLIMCUDA_GRAPHS_ON);
  ASSERT_NE(m, nullptr);
  const int half = ref_.steps / 2;
  decode(m, 0, half, stream_, "before the swap");
  ASSERT_EQ(slimcuda_stream_synchronize(stream_), SLIMCUDA_OK);
  slimcuda_memory_stats before{}, staged{}, after{};
  ASSERT_EQ(slimcuda_memory_stats_get(0, &before), SLIMCUDA_OK);
  const std::string path = ref_.dir + "/archive/model.pt2";
  ASSERT_EQ(slimcuda_caller_stream_push(stream_), SLIMCUDA_OK);
  const int32_t rc = slimcuda_model_stage_weights_file(m, path.c_str());
  ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
  ASSERT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_stream_synchronize(stream_), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_memory_stats_get(0, &staged), SLIMCUDA_OK);
  EXPECT_GT(staged.allocated_bytes, before.allocated_bytes) << "a second set of weights while staged";
  ASSERT_EQ(slimcuda_model_swap_weights(m), SLIMCUDA_OK) << slimcuda_last_error_message();
  ASSERT_EQ(slimcuda_model_free_inactive_weights(m), SLIMCUDA_OK) << slimcuda_last_error_message();
  decode(m, half, half + 1, stream_, "the first step after the swap");
  ASSERT_EQ(slimcuda_stream_synchronize(stream_), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_memory_stats_get(0, &after), SLIMCUDA_OK);
  const int64_t drift = static_cast<int64_t>(after.allocated_bytes) - static_cast<int64_t>(before.allocated_bytes);
  EXPECT_LE(std::llabs(drift), int64_t{1} << 20) << "before " << before.allocated_bytes << ", staged "
                                                 << staged.allocated_bytes << ", after " << after.allocated_bytes;
  decode(m, half + 1, ref_.steps, stream_, "after the swap");
  slimcuda_graph_stats g{};
  ASSERT_EQ(slimcuda_model_graph_stats(m, &g), SLIMCUDA_OK);
  EXPECT_EQ(g.captures, 1u) << "the graphs made again count anew";
  slimcuda_model_free(m);
}

}  // namespace
}  // namespace slimcuda::testing
