// SPDX-License-Identifier: Apache-2.0
// Loading PyTorch .pt2 archives through the C ABI, from testdata/pt2.json (go/slimcuda/
// load_test.go runs the same cases): the valid archives load and run (from a file and from
// memory), every malformed one gets its code and message, a real CPU export matches eager
// PyTorch, a wrong input is refused before the library runs, and a load leaves no file in
// TMPDIR.
// Weights in the archive (docs/weights.md): the binary_blob export matches eager through
// the "real" cases; the malformed-weights rows are "load" cases; a CUDA binary_blob export
// made on the GPU machine (SLIMCUDA_PT2_CUDA_WEIGHTS) loads on a caller stream, runs on
// another, and two loads hold one copy in the caching allocator's stats.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("pt2.json");

struct Model {
  slimcuda_model* m = nullptr;
  ~Model() { slimcuda_model_free(m); }
};

struct Tensor {
  slimcuda_tensor* t = nullptr;
  ~Tensor() { slimcuda_tensor_delete(t); }
};

std::string pt2(const std::string& name) { return fixture_relative("pt2.json", "pt2/" + name); }

slimcuda_load_options options_of(const Case& c) {
  slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF};
  o.device_type = c.data.value("device_type", -1);
  if (c.data.contains("model_name")) o.model_name = c.data.at("model_name").get_ref<const std::string&>().c_str();
  return o;
}

// Runs y = model(x) on one float32 [1] tensor.
void run_one(slimcuda_model* m, float x, float want) {
  const int64_t sizes[1] = {1};
  Tensor in, out;
  ASSERT_EQ(slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, 0, 0, &in.t), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(in.t, &x, sizeof x, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_model_run(m, &in.t, 1, &out.t, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  float y = -1;
  ASSERT_EQ(slimcuda_tensor_copy_to_host(out.t, &y, sizeof y, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  EXPECT_EQ(y, want);
}

// A run of one float32 [1] input that must fail with e's code and message.
void run_fails(slimcuda_model* m, const nlohmann::json& e) {
  const int64_t sizes[1] = {1};
  Tensor in;
  slimcuda_tensor* out = nullptr;
  ASSERT_EQ(slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, 0, 0, &in.t), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_model_run(m, &in.t, 1, &out, 1), code_of(error_from_name(e.at("expect").get<std::string>())));
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find(e.at("message").get<std::string>()), std::string::npos)
      << slimcuda_last_error_message();
}

TEST(Pt2, LoadFromFileAndMemory) {
  for (const Case& c : cases("pt2.json", "load")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string path = fixture_relative("pt2.json", c.data.at("file"));
    const slimcuda_load_options o = options_of(c);
    for (const bool from_file : {true, false}) {
      SCOPED_TRACE(from_file ? "file" : "memory");
      Model model;
      const std::vector<uint8_t> bytes = read_bytes(path);
      expect_code(c, from_file ? slimcuda_model_load_file_with(path.c_str(), &o, &model.m)
                               : slimcuda_model_load_with(bytes.data(), bytes.size(), &o, &model.m));
      EXPECT_EQ(model.m != nullptr, c.data.at("expect") == "Ok") << "a model exactly when the load succeeds";
      if (model.m != nullptr && c.data.contains("run")) {
        run_one(model.m, c.data.at("run").at("x").get<float>(), c.data.at("run").at("y").get<float>());
      }
      if (model.m != nullptr && c.data.contains("run_error")) run_fails(model.m, c.data.at("run_error"));
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(Pt2, RealCpuExportMatchesEager) {
  for (const Case& c : cases("pt2.json", "real")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string path = fixture_relative("pt2.json", c.data.at("file"));
    std::ifstream ref_in(fixture_relative("pt2.json", c.data.at("reference")));
    ASSERT_TRUE(ref_in.good());
    const nlohmann::json ref = nlohmann::json::parse(ref_in);
    Model model;
    ASSERT_EQ(slimcuda_model_load_file(path.c_str(), -1, -1, &model.m), SLIMCUDA_OK) << slimcuda_last_error_message();
    size_t n_in = 0, n_out = 0;
    ASSERT_EQ(slimcuda_model_num_io(model.m, &n_in, &n_out), SLIMCUDA_OK);
    ASSERT_EQ(n_in, 2u);
    ASSERT_EQ(n_out, 1u);
    // The archive's own input checks give the specs: x float32 [2, 4], z float32 [2, 3].
    const int64_t want_sizes[2][2] = {{2, 4}, {2, 3}};
    for (size_t i = 0; i < 2; ++i) {
      slimcuda_tensor_spec spec{};
      ASSERT_EQ(slimcuda_model_input_spec(model.m, i, &spec), SLIMCUDA_OK);
      EXPECT_EQ(spec.dtype, SLIMCUDA_FLOAT32);
      EXPECT_EQ(spec.dynamism, SLIMCUDA_STATIC);
      ASSERT_EQ(spec.ndim, 2);
      EXPECT_EQ(spec.sizes[0], want_sizes[i][0]);
      EXPECT_EQ(spec.sizes[1], want_sizes[i][1]);
      EXPECT_EQ(spec.device_type, SLIMCUDA_DEVICE_CPU);
    }
    slimcuda_tensor_spec out_spec{};
    ASSERT_EQ(slimcuda_model_output_spec(model.m, 0, &out_spec), SLIMCUDA_OK);
    EXPECT_EQ(out_spec.dtype, SLIMCUDA_SPEC_UNKNOWN) << "the archive states nothing about outputs";

    const std::vector<float> x = ref.at("x").get<std::vector<float>>(), z = ref.at("z").get<std::vector<float>>(),
                             want = ref.at("y").get<std::vector<float>>();
    Tensor tx, tz, ty;
    ASSERT_EQ(slimcuda_tensor_empty(2, want_sizes[0], nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &tx.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_empty(2, want_sizes[1], nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &tz.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(tx.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(tz.t, z.data(), z.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    slimcuda_tensor* in[2] = {tx.t, tz.t};
    ASSERT_EQ(slimcuda_model_run(model.m, in, 2, &ty.t, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
    std::vector<float> y(want.size(), -1);
    ASSERT_EQ(slimcuda_tensor_copy_to_host(ty.t, y.data(), y.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << "output " << i;

    // Wrong inputs are refused by slimcuda, before the library runs: shape, dtype, layout.
    Tensor wrong_shape, wrong_dtype, transposed_base, transposed;
    const int64_t wide[2] = {2, 5}, t_sizes[2] = {4, 2}, t_strides[2] = {1, 2};
    ASSERT_EQ(slimcuda_tensor_empty(2, wide, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &wrong_shape.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_empty(2, want_sizes[0], nullptr, SLIMCUDA_FLOAT64, 0, 0, 0, &wrong_dtype.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_empty(2, t_sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &transposed_base.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_view(transposed_base.t, 2, want_sizes[0], t_strides, 0, &transposed.t), SLIMCUDA_OK);
    struct Bad {
      slimcuda_tensor* x;
      const char* message;
    } bad[] = {{wrong_shape.t, "shape [2, 5], want [2, 4]"},
               {wrong_dtype.t, "dtype float64, want float32"},
               {transposed.t, "do not follow the declared dim order"}};
    for (const Bad& b : bad) {
      slimcuda_tensor* args[2] = {b.x, tz.t};
      slimcuda_tensor* out = nullptr;
      EXPECT_EQ(slimcuda_model_run(model.m, args, 2, &out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT) << b.message;
      EXPECT_NE(std::string(slimcuda_last_error_message()).find(b.message), std::string::npos)
          << slimcuda_last_error_message();
      EXPECT_EQ(out, nullptr);
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// The wrapper source's checks are what a run enforces: a [2] input to the synthetic model
// (x: float32 [1]) is refused; without the source only the device is checked and the
// library itself sees the input.
TEST(Pt2, InputSpecsComeFromTheWrapperSource) {
  Model with, without;
  ASSERT_EQ(slimcuda_model_load_file(pt2("valid.pt2").c_str(), -1, -1, &with.m), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_model_load_file(pt2("valid_no_source.pt2").c_str(), -1, -1, &without.m), SLIMCUDA_OK);
  slimcuda_tensor_spec spec{};
  ASSERT_EQ(slimcuda_model_input_spec(with.m, 0, &spec), SLIMCUDA_OK);
  EXPECT_EQ(spec.dtype, SLIMCUDA_FLOAT32);
  ASSERT_EQ(spec.ndim, 1);
  EXPECT_EQ(spec.sizes[0], 1);
  ASSERT_EQ(slimcuda_model_input_spec(without.m, 0, &spec), SLIMCUDA_OK);
  EXPECT_EQ(spec.dtype, SLIMCUDA_SPEC_UNKNOWN);
  EXPECT_EQ(spec.dynamism, SLIMCUDA_SPEC_UNKNOWN);
  EXPECT_EQ(spec.ndim, 0);
  EXPECT_EQ(spec.device_type, SLIMCUDA_DEVICE_CPU);

  const int64_t two[1] = {2};
  Tensor in;
  ASSERT_EQ(slimcuda_tensor_empty(1, two, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t), SLIMCUDA_OK);
  slimcuda_tensor* out = nullptr;
  EXPECT_EQ(slimcuda_model_run(with.m, &in.t, 1, &out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("shape [2], want [1]"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(out, nullptr);
}

// Options of the size before model_name (0.2's struct) still load: as NULL.
TEST(Pt2, OlderOptionsStructStillReads) {
  struct {
    int32_t struct_size, device_type, device_index, instances;
  } v1{SLIMCUDA_LOAD_OPTIONS_V1_SIZE, -1, -1, 0};
  static_assert(sizeof(v1) == SLIMCUDA_LOAD_OPTIONS_V1_SIZE, "0.2's layout");
  Model ok, ambiguous;
  EXPECT_EQ(slimcuda_model_load_file_with(pt2("valid.pt2").c_str(), reinterpret_cast<const slimcuda_load_options*>(&v1),
                                          &ok.m),
            SLIMCUDA_OK)
      << slimcuda_last_error_message();
  EXPECT_EQ(slimcuda_model_load_file_with(pt2("two_models.pt2").c_str(),
                                          reinterpret_cast<const slimcuda_load_options*>(&v1), &ambiguous.m),
            SLIMCUDA_ERROR_INVALID_ARGUMENT);
  v1.struct_size = 20;
  EXPECT_EQ(slimcuda_model_load_file_with(pt2("valid.pt2").c_str(), reinterpret_cast<const slimcuda_load_options*>(&v1),
                                          &ambiguous.m),
            SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("struct_size 20"), std::string::npos);
}

// A .pt2 is recognised by its bytes: the same archive under a package's name loads as one.
TEST(Pt2, RecognisedByContentNotName) {
  const std::vector<uint8_t> bytes = read_bytes(pt2("valid.pt2"));
  const char* dir = std::getenv("TEST_TMPDIR");
  ASSERT_NE(dir, nullptr);
  const std::string path = std::string(dir) + "/renamed.slimcuda";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  Model model;
  ASSERT_EQ(slimcuda_model_load_file(path.c_str(), -1, -1, &model.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  run_one(model.m, 1, 2);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  return names;
}

// Loading a .pt2 (from a file, from memory, a compressed library too)
// and running it writes nothing into TMPDIR (nor /tmp: we point TMPDIR at a private folder,
// which is where anything temporary of ours would go).
// Sets an environment variable for a scope, and the library's setting of the same name
// (the library reads its environment once, so setenv alone would not reach it), and
// restores both however the scope ends: a failed ASSERT returns early and must not leave
// TMPDIR pointing elsewhere.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ok_ = setenv(name, value.c_str(), 1) == 0 && slimcuda_config_set(name, value.c_str()) == SLIMCUDA_OK;
  }
  ~ScopedEnv() {
    (void)slimcuda_config_set(name_, nullptr);
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  bool ok() const { return ok_; }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false, ok_ = false;
};

TEST(Pt2, LoadLeavesNoFileInTmpdir) {
  const char* base = std::getenv("TEST_TMPDIR");
  ASSERT_NE(base, nullptr);
  const std::string dir = std::string(base) + "/private_tmpdir";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const ScopedEnv tmpdir("TMPDIR", dir);
  ASSERT_TRUE(tmpdir.ok());
  for (const char* name : {"valid.pt2", "compressed_library.pt2", "real_cpu_linear.pt2"}) {
    SCOPED_TRACE(name);
    Model from_file, from_memory;
    ASSERT_EQ(slimcuda_model_load_file(pt2(name).c_str(), -1, -1, &from_file.m), SLIMCUDA_OK)
        << slimcuda_last_error_message();
    const std::vector<uint8_t> bytes = read_bytes(pt2(name));
    ASSERT_EQ(slimcuda_model_load(bytes.data(), bytes.size(), -1, -1, &from_memory.m), SLIMCUDA_OK);
    EXPECT_EQ(files_in(dir), std::vector<std::string>{}) << "while loaded";
  }
  EXPECT_EQ(files_in(dir), std::vector<std::string>{}) << "after unloading";
}

// Every prefix of a valid archive: an error or a success, never a crash (ASan watches in
// the fuzzer build; here the loader must merely answer).
TEST(Pt2, EveryTruncationIsHandled) {
  const std::vector<uint8_t> bytes = read_bytes(pt2("valid.pt2"));
  int ok = 0;
  for (size_t n = 0; n < bytes.size(); n += 97) {
    Model m;
    const int32_t rc = slimcuda_model_load(bytes.data(), n, 0, -1, &m.m);
    EXPECT_NE(rc, SLIMCUDA_ERROR_INTERNAL) << n << ": " << slimcuda_last_error_message();
    ok += rc == SLIMCUDA_OK;
  }
  EXPECT_EQ(ok, 0) << "a zip without its central directory's end never loads";
}

// The demo model's reference (testdata/demo_model.json, case run_cpu_batch_4: the same
// numbers on either device).
struct Reference {
  std::vector<float> x, y;
};
Reference demo_reference() {
  std::ifstream in(fixture_relative("pt2.json", "demo_model.json"));
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const nlohmann::json& c : doc.at("cases")) {
    if (c.at("name") == "run_cpu_batch_4") {
      return {c.at("input").get<std::vector<float>>(), c.at("expect_output").get<std::vector<float>>()};
    }
  }
  ADD_FAILURE() << "no case run_cpu_batch_4 in demo_model.json";
  return {};
}

// The demo's library in a .pt2 for `device` (//models/demo:demo_pt2), loaded from the file:
// the device comes from the archive's metadata, x's bounds from its wrapper source; a batch
// of 4 matches the reference, a batch above the bound is refused before the library runs.
void run_demo_pt2(const char* env, int32_t device_type, bool caller_stream) {
  const char* path = std::getenv(env);
  ASSERT_NE(path, nullptr) << env;
  Model model;
  ASSERT_EQ(slimcuda_model_load_file(runfile(path).c_str(), -1, -1, &model.m), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  int32_t type = -1, index = -9;
  ASSERT_EQ(slimcuda_model_device(model.m, &type, &index), SLIMCUDA_OK);
  EXPECT_EQ(type, device_type) << "the device of AOTI_DEVICE_KEY";
  slimcuda_tensor_spec spec{};
  ASSERT_EQ(slimcuda_model_input_spec(model.m, 0, &spec), SLIMCUDA_OK);
  EXPECT_EQ(spec.dynamism, SLIMCUDA_DYNAMIC_BOUNDED);
  ASSERT_EQ(spec.ndim, 2);
  EXPECT_EQ(spec.sizes[0], 64) << "the upper bound";
  EXPECT_EQ(spec.sizes[1], 16);
  EXPECT_EQ(spec.device_type, device_type);

  const Reference ref = demo_reference();
  ASSERT_EQ(ref.x.size(), 64u);
  const int64_t sizes[2] = {4, 16};
  Tensor x, y;
  ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, device_type, 0, 0, &x.t), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(x.t, ref.x.data(), ref.x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  void* stream = nullptr;
  if (caller_stream) {
    ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
  }
  const int32_t rc = caller_stream ? slimcuda_model_run_on(model.m, &x.t, 1, &y.t, 1, stream)
                                   : slimcuda_model_run(model.m, &x.t, 1, &y.t, 1);
  ASSERT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
  std::vector<float> got(ref.y.size(), -1);
  ASSERT_EQ(caller_stream ? slimcuda_tensor_copy_to_host_on(y.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32, stream)
                          : slimcuda_tensor_copy_to_host(y.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32),
            SLIMCUDA_OK);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref.y[i], 1e-6) << "output " << i;
  if (stream != nullptr) {
    EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
  }

  const int64_t too_many[2] = {65, 16};
  Tensor big;
  ASSERT_EQ(slimcuda_tensor_empty(2, too_many, nullptr, SLIMCUDA_FLOAT32, device_type, 0, 0, &big.t), SLIMCUDA_OK);
  slimcuda_tensor* out = nullptr;
  EXPECT_EQ(slimcuda_model_run(model.m, &big.t, 1, &out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(slimcuda_last_error_message()).find("shape [65, 16], want at most [64, 16] and at least [1, 16]"),
      std::string::npos)
      << slimcuda_last_error_message();
  if (device_type == SLIMCUDA_DEVICE_CUDA) {
    // A CUDA model takes device memory only: a host tensor is refused too.
    Tensor host;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, 0, 0, &host.t),
              SLIMCUDA_OK);
    EXPECT_EQ(slimcuda_model_run(model.m, &host.t, 1, &out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  }
}

TEST(Pt2Demo, CpuArchiveRuns) { run_demo_pt2("SLIMCUDA_DEMO_CPU_PT2", SLIMCUDA_DEVICE_CPU, false); }

TEST(Pt2Demo, CudaArchiveRunsOnItsStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  run_demo_pt2("SLIMCUDA_DEMO_CUDA_PT2", SLIMCUDA_DEVICE_CUDA, false);
}

TEST(Pt2Demo, CudaArchiveRunsOnTheCallerStream) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  run_demo_pt2("SLIMCUDA_DEMO_CUDA_PT2", SLIMCUDA_DEVICE_CUDA, true);
}

// Without a GPU a CUDA archive is refused with the CUDA layer's code, never a crash.
TEST(Pt2Demo, CudaArchiveWithoutGpuFailsCleanly) {
  SLIMCUDA_SKIP_WITH_A_GPU();
  const char* path = std::getenv("SLIMCUDA_DEMO_CUDA_PT2");
  ASSERT_NE(path, nullptr);
  Model model;
  const int32_t rc = slimcuda_model_load_file(runfile(path).c_str(), -1, -1, &model.m);
  EXPECT_NE(rc, SLIMCUDA_OK);
  EXPECT_EQ(model.m, nullptr);
  EXPECT_STRNE(slimcuda_last_error_message(), "");
}

// The weights of a CUDA binary_blob export (tools/aoti/export_weights_example.py DIR cuda:
// DIR/model.pt2, x.bin [4, 16] and eager's y.bin [4, 8]); SLIMCUDA_PT2_CUDA_WEIGHTS names
// DIR/model.pt2. Skips without a GPU or without the export, fails for either under
// SLIMCUDA_REQUIRE_GPU=1.
class Pt2CudaWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    SLIMCUDA_REQUIRE_GPU_OR_SKIP();
    const char* path = std::getenv("SLIMCUDA_PT2_CUDA_WEIGHTS");
    if (path == nullptr || *path == '\0') {
      if (gpu_required()) {
        FAIL() << "SLIMCUDA_PT2_CUDA_WEIGHTS is not set (tools/aoti/export_weights_example.py DIR cuda, then "
                  "SLIMCUDA_PT2_CUDA_WEIGHTS=DIR/model.pt2)";
      }
      GTEST_SKIP() << "SLIMCUDA_PT2_CUDA_WEIGHTS is not set";
    }
    path_ = path;
    const std::string dir = path_.substr(0, path_.find_last_of('/') + 1);
    const std::vector<uint8_t> x = read_bytes(dir + "x.bin"), y = read_bytes(dir + "y.bin");
    ASSERT_EQ(x.size(), 4u * 16 * 4);
    ASSERT_EQ(y.size(), 4u * 8 * 4);
    x_.resize(4 * 16);
    y_.resize(4 * 8);
    std::memcpy(x_.data(), x.data(), x.size());
    std::memcpy(y_.data(), y.data(), y.size());
  }

  // Loads with `load_stream` selected (nullptr: none), then runs on `run_stream` (nullptr:
  // the model's own) and compares with eager.
  void load_and_run(Model* model, void* load_stream, void* run_stream) {
    if (load_stream != nullptr) {
      ASSERT_EQ(slimcuda_caller_stream_push(load_stream), SLIMCUDA_OK);
    }
    const int32_t rc = slimcuda_model_load_file(path_.c_str(), -1, -1, &model->m);
    if (load_stream != nullptr) {
      ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    }
    ASSERT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
    int32_t type = -1, index = -1;
    ASSERT_EQ(slimcuda_model_device(model->m, &type, &index), SLIMCUDA_OK);
    ASSERT_EQ(type, SLIMCUDA_DEVICE_CUDA) << "SLIMCUDA_PT2_CUDA_WEIGHTS must be a CUDA export";
    const int64_t sizes[2] = {4, 16};
    Tensor tx, ty;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA, index, 0, &tx.t),
              SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(tx.t, x_.data(), x_.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    const int32_t run = run_stream != nullptr ? slimcuda_model_run_on(model->m, &tx.t, 1, &ty.t, 1, run_stream)
                                              : slimcuda_model_run(model->m, &tx.t, 1, &ty.t, 1);
    ASSERT_EQ(run, SLIMCUDA_OK) << slimcuda_last_error_message();
    std::vector<float> got(y_.size(), -1);
    ASSERT_EQ(run_stream != nullptr
                  ? slimcuda_tensor_copy_to_host_on(ty.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32, run_stream)
                  : slimcuda_tensor_copy_to_host(ty.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32),
              SLIMCUDA_OK);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], y_[i], 1e-4) << "output " << i;
  }

  std::string path_;
  std::vector<float> x_, y_;
};

TEST_F(Pt2CudaWeights, LoadsOnItsStreamAndMatchesEager) {
  Model model;
  load_and_run(&model, nullptr, nullptr);
}

// Uploaded on one caller stream, run on another: the load returns with the weights on the
// device, whichever stream runs next.
TEST_F(Pt2CudaWeights, LoadedOnACallerStreamRunsOnAnother) {
  void* load_stream = nullptr;
  void* run_stream = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &load_stream), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &run_stream), SLIMCUDA_OK);
  {
    Model model;
    load_and_run(&model, load_stream, run_stream);
  }
  {
    Model model;
    load_and_run(&model, load_stream, nullptr);
  }
  EXPECT_EQ(slimcuda_stream_destroy(load_stream), SLIMCUDA_OK);
  EXPECT_EQ(slimcuda_stream_destroy(run_stream), SLIMCUDA_OK);
}

// Two loads of one .pt2 on one GPU: the second allocates no second copy of the weights
// (the blob's size is what one copy takes at least); all of it goes with the last model.
TEST_F(Pt2CudaWeights, TwoLoadsShareOneCopy) {
  // export_weights_example.py writes the blob beside the archive: one copy takes at least that.
  const uint64_t blob = read_bytes(path_.substr(0, path_.find_last_of('/') + 1) + "weights.blob").size();
  ASSERT_GT(blob, 0u);
  slimcuda_memory_stats before{}, one{}, two{}, after{};
  ASSERT_EQ(slimcuda_memory_stats_get(0, &before), SLIMCUDA_OK);
  {
    Model a, b;
    ASSERT_EQ(slimcuda_model_load_file(path_.c_str(), -1, -1, &a.m), SLIMCUDA_OK) << slimcuda_last_error_message();
    ASSERT_EQ(slimcuda_memory_stats_get(0, &one), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_model_load_file(path_.c_str(), -1, -1, &b.m), SLIMCUDA_OK) << slimcuda_last_error_message();
    ASSERT_EQ(slimcuda_memory_stats_get(0, &two), SLIMCUDA_OK);
    EXPECT_GE(one.allocated_bytes - before.allocated_bytes, blob) << "the first load uploads the weights";
    EXPECT_LT(two.allocated_bytes - one.allocated_bytes, blob) << "the second load shares them";
  }
  ASSERT_EQ(slimcuda_memory_stats_get(0, &after), SLIMCUDA_OK);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "freed with the last model";
}

// With CUDA graphs on, the capture container gets the weights attached to the model's own
// (shared, not uploaded again): a run on a caller's non-blocking stream is captured, the
// next replayed, both matching eager.
TEST_F(Pt2CudaWeights, CudaGraphsCaptureWithArchiveWeights) {
  // One instance: one slot, so one capture.
  slimcuda_load_options o{
      static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 1, nullptr, SLIMCUDA_GRAPHS_STRICT};
  Model model;
  ASSERT_EQ(slimcuda_model_load_file_with(path_.c_str(), &o, &model.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  void* stream = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
  const int64_t sizes[2] = {4, 16};
  for (int i = 0; i < 2; ++i) {
    Tensor tx, ty;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA, 0, 0, &tx.t),
              SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host_on(tx.t, x_.data(), x_.size() * 4, SLIMCUDA_FLOAT32, stream), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_model_run_on(model.m, &tx.t, 1, &ty.t, 1, stream), SLIMCUDA_OK) << slimcuda_last_error_message();
    std::vector<float> got(y_.size(), -1);
    ASSERT_EQ(slimcuda_tensor_copy_to_host_on(ty.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32, stream), SLIMCUDA_OK);
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], y_[k], 1e-4) << "run " << i << " output " << k;
  }
  slimcuda_graph_stats stats{};
  ASSERT_EQ(slimcuda_model_graph_stats(model.m, &stats), SLIMCUDA_OK);
  EXPECT_EQ(stats.captures, 1u);
  EXPECT_EQ(stats.replays, 2u) << "strict mode: the captured run is replayed, then the next";
  EXPECT_EQ(stats.fallbacks, 0u);
  EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
}

// A CUDA export with a CPU constant (tools/aoti/export_weights_example.py DIR cuda mixed:
// PyTorch's mixed-device constants, as torchvision's detectors have; x.bin [4, 16], eager's
// y.bin [4, 32]); SLIMCUDA_PT2_CUDA_MIXED names DIR/model.pt2. The container takes a CPU
// constant only from the blob (Model::load_constants_from_blob): two loads of the file each
// match eager, with and without a caller stream, and graphs on fall back (no second
// container). Before, every load was refused ("mixed-device constants are not supported",
// then the container's own "update_constant_buffer does not support mixed device constants").
TEST(Pt2MixedDevice, CpuConstantOfACudaModelLoadsAndMatchesEager) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const char* path = std::getenv("SLIMCUDA_PT2_CUDA_MIXED");
  if (path == nullptr || *path == '\0') {
    if (gpu_required()) {
      FAIL() << "SLIMCUDA_PT2_CUDA_MIXED is not set (tools/aoti/export_weights_example.py DIR cuda mixed, then "
                "SLIMCUDA_PT2_CUDA_MIXED=DIR/model.pt2)";
    }
    GTEST_SKIP() << "SLIMCUDA_PT2_CUDA_MIXED is not set";
  }
  const std::string file = path;
  const std::string dir = file.substr(0, file.find_last_of('/') + 1);
  const std::vector<uint8_t> xb = read_bytes(dir + "x.bin"), yb = read_bytes(dir + "y.bin");
  ASSERT_EQ(xb.size(), 4u * 16 * 4);
  ASSERT_EQ(yb.size(), 4u * 32 * 4);
  std::vector<float> x(4 * 16), y(4 * 32);
  std::memcpy(x.data(), xb.data(), xb.size());
  std::memcpy(y.data(), yb.data(), yb.size());
  void* stream = nullptr;
  ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
  Model a, b;
  ASSERT_EQ(slimcuda_model_load_file(path, -1, -1, &a.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  slimcuda_load_options o{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 1, nullptr, SLIMCUDA_GRAPHS_ON};
  ASSERT_EQ(slimcuda_model_load_file_with(path, &o, &b.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  const int64_t sizes[2] = {4, 16};
  for (int i = 0; i < 4; ++i) {
    void* on = i % 2 == 0 ? stream : nullptr;
    Model& m = i < 2 ? a : b;
    Tensor tx, ty;
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA, 0, 0, &tx.t),
              SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(tx.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    const int32_t rc = on != nullptr ? slimcuda_model_run_on(m.m, &tx.t, 1, &ty.t, 1, on)
                                     : slimcuda_model_run(m.m, &tx.t, 1, &ty.t, 1);
    ASSERT_EQ(rc, SLIMCUDA_OK) << "run " << i << ": " << slimcuda_last_error_message();
    std::vector<float> got(y.size(), -1);
    ASSERT_EQ(on != nullptr ? slimcuda_tensor_copy_to_host_on(ty.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32, on)
                            : slimcuda_tensor_copy_to_host(ty.t, got.data(), got.size() * 4, SLIMCUDA_FLOAT32),
              SLIMCUDA_OK);
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], y[k], 1e-4) << "run " << i << " output " << k;
  }
  slimcuda_graph_stats stats{};
  ASSERT_EQ(slimcuda_model_graph_stats(b.m, &stats), SLIMCUDA_OK);
  EXPECT_EQ(stats.replays, 0u) << "no capture container can hold the container's own weights";
  EXPECT_EQ(stats.fallbacks, 2u);
  EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
}

// A CPU model's weights are uploaded by the CPU (no stream): a caller stream selected for
// the load changes nothing, and the model runs as without one.
TEST(Pt2Weights, CpuBlobExportIgnoresTheCallerStreamAtLoad) {
  if (has_gpu()) {
    void* stream = nullptr;
    ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_caller_stream_push(stream), SLIMCUDA_OK);
    Model model;
    const int32_t rc = slimcuda_model_load_file(pt2("weights_blob_linear.pt2").c_str(), -1, -1, &model.m);
    ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    EXPECT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
    EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
  } else {
    ASSERT_EQ(slimcuda_caller_stream_push(nullptr), SLIMCUDA_OK);  // the legacy stream: a selection
    Model model;
    const int32_t rc = slimcuda_model_load_file(pt2("weights_blob_linear.pt2").c_str(), -1, -1, &model.m);
    ASSERT_EQ(slimcuda_caller_stream_pop(), SLIMCUDA_OK);
    EXPECT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
  }
}

}  // namespace
}  // namespace slimcuda::testing
