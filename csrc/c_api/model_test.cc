// SPDX-License-Identifier: Apache-2.0
// The model runner with the demo package, from testdata/demo_model.json (go/slimcuda/
// model_test.go runs the same cases), plus C++-only checks the Go API cannot express.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

const bool kOwnsFixture = own_fixture("demo_model.json");

// ThreadSanitizer does not support fork() from a multi-threaded process (the child may die
// at exit without a report); the multi-process part of the concurrency test runs in the
// plain and the ASan builds.
#if defined(__SANITIZE_THREAD__)
constexpr bool kForkIsSupported = false;
#else
constexpr bool kForkIsSupported = true;
#endif

std::vector<uint8_t> demo_bytes() {
  std::ifstream in(demo_package_path(), std::ios::binary);
  EXPECT_TRUE(in.good()) << demo_package_path();
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int32_t device_code(const std::string& d) { return d == "cpu" ? 0 : d == "auto" ? -1 : 1; }

struct Model {
  slimcuda_model* m = nullptr;
  ~Model() { slimcuda_model_free(m); }
};

struct Tensor {
  slimcuda_tensor* t = nullptr;
  ~Tensor() { slimcuda_tensor_delete(t); }
};

// The case's input as a tensor on the model's device: contiguous [batch, 16], or the
// transposed layout (a [batch, 16] view with strides [1, batch]).
void make_input(const Case& c, int32_t device_type, Tensor* base, Tensor* view) {
  const int64_t batch = c.data.at("batch").get<int64_t>();
  const std::vector<float> x = c.data.at("input").get<std::vector<float>>();
  const bool transposed = c.data.value("layout", "contiguous") == "transposed";
  const int64_t sizes[2] = {batch, 16};
  if (!transposed) {
    ASSERT_EQ(slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, device_type, 0, 0, &base->t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(base->t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    return;
  }
  const int64_t tsizes[2] = {16, batch}, strides[2] = {1, batch};
  std::vector<float> xt(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < 16; ++i) xt[i * batch + b] = x[b * 16 + i];
  ASSERT_EQ(slimcuda_tensor_empty(2, tsizes, nullptr, SLIMCUDA_FLOAT32, device_type, 0, 0, &base->t), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_copy_from_host(base->t, xt.data(), xt.size() * 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  ASSERT_EQ(slimcuda_tensor_view(base->t, 2, sizes, strides, 0, &view->t), SLIMCUDA_OK)
      << slimcuda_last_error_message();
}

TEST(DemoModel, Run) {
  const std::vector<uint8_t> pkg = demo_bytes();
  for (const Case& c : cases("demo_model.json", "run")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string device = c.data.at("device").get<std::string>();
    const bool caller_stream = device == "cuda_caller_stream";
    Model model;
    ASSERT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), caller_stream ? 1 : device_code(device), -1, &model.m),
              SLIMCUDA_OK)
        << slimcuda_last_error_message();
    int32_t type = -1, index = -9;
    ASSERT_EQ(slimcuda_model_device(model.m, &type, &index), SLIMCUDA_OK);
    Tensor base, view, out;
    make_input(c, type, &base, &view);
    slimcuda_tensor* in = view.t != nullptr ? view.t : base.t;
    void* stream = nullptr;
    if (caller_stream) {
      ASSERT_EQ(slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, 0, &stream), SLIMCUDA_OK);
    }
    const int32_t rc = caller_stream ? slimcuda_model_run_on(model.m, &in, 1, &out.t, 1, stream)
                                     : slimcuda_model_run(model.m, &in, 1, &out.t, 1);
    ASSERT_EQ(rc, SLIMCUDA_OK) << slimcuda_last_error_message();
    std::vector<float> y(c.data.at("expect_output").size(), -1.0f);
    // On the caller stream the run is only enqueued: read back on the same stream.
    const int32_t read = caller_stream
                             ? slimcuda_tensor_copy_to_host_on(out.t, y.data(), y.size() * 4, SLIMCUDA_FLOAT32, stream)
                             : slimcuda_tensor_copy_to_host(out.t, y.data(), y.size() * 4, SLIMCUDA_FLOAT32);
    ASSERT_EQ(read, SLIMCUDA_OK) << slimcuda_last_error_message();
    const std::vector<float> want = c.data.at("expect_output").get<std::vector<float>>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << "output " << i;
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(out.t, &info), SLIMCUDA_OK);
    EXPECT_EQ(info.device_type, type) << "outputs live on the model's device";
    if (stream != nullptr) {
      EXPECT_EQ(slimcuda_stream_destroy(stream), SLIMCUDA_OK);
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(DemoModel, RejectsBadInputs) {
  const std::vector<uint8_t> pkg = demo_bytes();
  for (const Case& c : cases("demo_model.json", "run_bad")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Model model;
    ASSERT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), device_code(c.data.at("device")), -1, &model.m), SLIMCUDA_OK);
    int32_t type = -1, index = -1;
    ASSERT_EQ(slimcuda_model_device(model.m, &type, &index), SLIMCUDA_OK);
    const std::string where = c.data.at("input_device").get<std::string>();
    const int32_t input_type = where == "model" ? type : device_code(where);
    const std::vector<int64_t> sizes = c.data.at("sizes").get<std::vector<int64_t>>();
    const int32_t dtype = c.data.at("dtype") == "float64" ? SLIMCUDA_FLOAT64 : SLIMCUDA_FLOAT32;
    Tensor in, out;
    ASSERT_EQ(slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, dtype, input_type, 0, 0,
                                    &in.t),
              SLIMCUDA_OK);
    expect_code(c, slimcuda_model_run(model.m, &in.t, 1, &out.t, 1));
    EXPECT_EQ(out.t, nullptr);
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

TEST(DemoModel, Load) {
  const std::vector<uint8_t> pkg = demo_bytes();
  for (const Case& c : cases("demo_model.json", "load")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    Model model;
    const int32_t rc = slimcuda_model_load(pkg.data(), pkg.size(), device_code(c.data.at("device")), -1, &model.m);
    expect_code(c, rc);
    if (rc != SLIMCUDA_OK) {
      EXPECT_EQ(model.m, nullptr);
      continue;
    }
    int32_t type = -1, index = -9;
    ASSERT_EQ(slimcuda_model_device(model.m, &type, &index), SLIMCUDA_OK);
    EXPECT_EQ(type, c.data.at("expect_device") == "cuda" ? 1 : 0);
    size_t n_in = 0, n_out = 0;
    ASSERT_EQ(slimcuda_model_num_io(model.m, &n_in, &n_out), SLIMCUDA_OK);
    EXPECT_EQ(n_in, 1u);
    EXPECT_EQ(n_out, 1u);
    slimcuda_tensor_spec spec{};
    ASSERT_EQ(slimcuda_model_input_spec(model.m, 0, &spec), SLIMCUDA_OK);
    EXPECT_STREQ(spec.name, "x");
    EXPECT_EQ(spec.dynamism, SLIMCUDA_DYNAMIC_BOUNDED);
    ASSERT_EQ(spec.ndim, 2);
    EXPECT_EQ(spec.sizes[0], 64);
    EXPECT_EQ(spec.sizes[1], 16);
    EXPECT_EQ(slimcuda_model_input_spec(model.m, 1, &spec), SLIMCUDA_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(slimcuda_model_output_spec(model.m, 0, &spec), SLIMCUDA_OK);
    EXPECT_STREQ(spec.name, "y");
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

// Host memory tagged as CUDA (a blob with device_type CUDA) is refused by the pointer check.
TEST(DemoModel, RejectsHostMemoryTaggedCuda) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> pkg = demo_bytes();
  Model model;
  ASSERT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), 1, 0, &model.m), SLIMCUDA_OK);
  std::vector<float> host(4 * 16, 1.0f);
  const int64_t sizes[2] = {4, 16};
  AtenTensorHandle fake = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(host.data(), 2, sizes, nullptr, 0, 6, 1, 0, &fake), 0);
  slimcuda_tensor* in = reinterpret_cast<slimcuda_tensor*>(fake);
  slimcuda_tensor* out = nullptr;
  EXPECT_EQ(slimcuda_model_run(model.m, &in, 1, &out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("not that device's memory"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(fake), 0);
}

TEST(DemoModel, ArgumentChecks) {
  const std::vector<uint8_t> pkg = demo_bytes();
  slimcuda_model* m = nullptr;
  EXPECT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), 5, 0, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_load(nullptr, 100, 0, 0, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_load_file("/nonexistent/model.slimcuda", 0, 0, &m), SLIMCUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(m, nullptr);
  Model model;
  ASSERT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, &model.m), SLIMCUDA_OK);
  slimcuda_tensor* out[2] = {nullptr, nullptr};
  EXPECT_EQ(slimcuda_model_run(model.m, nullptr, 0, out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);  // 0 inputs
  slimcuda_tensor* null_input = nullptr;
  EXPECT_EQ(slimcuda_model_run(model.m, &null_input, 1, out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_run(nullptr, &null_input, 1, out, 1), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_free(nullptr), SLIMCUDA_OK);
}

// The files of this process's temp directory whose name says slimcuda.
std::vector<std::string> our_temp_files() {
  std::vector<std::string> out;
  const char* dir = std::getenv("TMPDIR");
  const std::string d = dir && *dir ? dir : "/tmp";
  if (DIR* h = opendir(d.c_str())) {
    while (dirent* e = readdir(h)) {
      if (std::string(e->d_name).find("slimcuda-model") != std::string::npos) out.push_back(e->d_name);
    }
    closedir(h);
  }
  return out;
}

// 256 concurrent loads of one package: threads in this process, then several processes
// at once. All succeed and run, and no file of ours is left in the temp directory (loads
// go through memfd: no path exists at all).
TEST(DemoModel, ConcurrentLoadsNeverCollide) {
  const std::vector<uint8_t> pkg = demo_bytes();
  const std::vector<std::string> before = our_temp_files();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 256; ++t) {
    threads.emplace_back([&] {
      slimcuda_model* m = nullptr;
      if (slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, &m) != SLIMCUDA_OK) return;
      const int64_t sizes[2] = {1, 16};
      slimcuda_tensor *in = nullptr, *out = nullptr;
      float x[16] = {0}, y[8] = {0};
      if (slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in) == SLIMCUDA_OK &&
          slimcuda_tensor_copy_from_host(in, x, sizeof x, SLIMCUDA_FLOAT32) == SLIMCUDA_OK &&
          slimcuda_model_run(m, &in, 1, &out, 1) == SLIMCUDA_OK &&
          slimcuda_tensor_copy_to_host(out, y, sizeof y, SLIMCUDA_FLOAT32) == SLIMCUDA_OK) {
        ++ok;
      }
      slimcuda_tensor_delete(in);
      slimcuda_tensor_delete(out);
      slimcuda_model_free(m);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 256);

  // Several processes at once, each loading the package 8 times.
  const int kProcesses = kForkIsSupported ? 8 : 0;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fails = 0;
      for (int i = 0; i < 8; ++i) {
        slimcuda_model* m = nullptr;
        fails += slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, &m) != SLIMCUDA_OK;
        slimcuda_model_free(m);
      }
      _exit(fails);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child process failed to load";
  }
  EXPECT_EQ(our_temp_files(), before) << "a load left a file behind";
}

// One model, 64 threads, 1,000 runs each (CPU: no streams), every output bit-exact against
// a single-threaded reference. Each thread has its own input (a different batch row
// pattern) so a run that got another thread's tensors would show.
TEST(DemoModel, SixtyFourThreadsRunOneModelBitExact) {
  constexpr int kThreads = 64, kRuns = 1000;
  const std::vector<uint8_t> pkg = demo_bytes();
  Model model;
  const slimcuda_load_options opts{
      sizeof(slimcuda_load_options), SLIMCUDA_DEVICE_CPU, -1, 4, nullptr, SLIMCUDA_GRAPHS_OFF};
  ASSERT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &opts, &model.m), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  int32_t instances = 0;
  ASSERT_EQ(slimcuda_model_instances(model.m, &instances), SLIMCUDA_OK);
  EXPECT_EQ(instances, 4);
  const int64_t sizes[2] = {2, 16};
  auto input_of = [](int t) {
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i) x[i] = static_cast<float>((t * 37 + i * 11) % 17) / 8.0f - 1.0f;
    return x;
  };
  auto run_once = [&](const std::vector<float>& x, std::vector<float>* y) {
    Tensor in, out;
    if (slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t) != SLIMCUDA_OK ||
        slimcuda_tensor_copy_from_host(in.t, x.data(), x.size() * 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK ||
        slimcuda_model_run(model.m, &in.t, 1, &out.t, 1) != SLIMCUDA_OK ||
        slimcuda_tensor_copy_to_host(out.t, y->data(), y->size() * 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK) {
      return false;
    }
    return true;
  };
  std::vector<std::vector<float>> want(kThreads, std::vector<float>(16));
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(run_once(input_of(t), &want[t])) << slimcuda_last_error_message();
  std::atomic<int> failures{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> x = input_of(t);
      std::vector<float> y(16);
      for (int r = 0; r < kRuns; ++r) {
        if (!run_once(x, &y)) {
          ++failures;
          return;
        }
        if (std::memcmp(y.data(), want[t].data(), y.size() * 4) != 0) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Load options: checked, and the default instance count resolved at load.
TEST(DemoModel, LoadOptions) {
  const std::vector<uint8_t> pkg = demo_bytes();
  {
    Model model;  // NULL options: every default; CPU: 1 instance, CUDA: 4
    ASSERT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), nullptr, &model.m), SLIMCUDA_OK);
    int32_t type = -1, index = 0, instances = 0;
    ASSERT_EQ(slimcuda_model_device(model.m, &type, &index), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_model_instances(model.m, &instances), SLIMCUDA_OK);
    EXPECT_EQ(instances, type == SLIMCUDA_DEVICE_CPU ? 1 : 4);
    EXPECT_EQ(slimcuda_model_instances(model.m, nullptr), SLIMCUDA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(slimcuda_model_instances(nullptr, &instances), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  }
  const struct {
    const char* description;
    slimcuda_load_options opts;
  } bad[] = {
      {"struct_size 0", {0, 0, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF}},
      {"struct_size too large", {sizeof(slimcuda_load_options) + 4, 0, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF}},
      {"negative instances", {sizeof(slimcuda_load_options), 0, -1, -1, nullptr, SLIMCUDA_GRAPHS_OFF}},
      {"65 instances", {sizeof(slimcuda_load_options), 0, -1, 65, nullptr, SLIMCUDA_GRAPHS_OFF}},
      {"device type 5", {sizeof(slimcuda_load_options), 5, -1, 1, nullptr, SLIMCUDA_GRAPHS_OFF}},
  };
  for (const auto& c : bad) {
    slimcuda_model* m = nullptr;
    EXPECT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), &c.opts, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT)
        << c.description;
    EXPECT_EQ(m, nullptr) << c.description;
  }
  slimcuda_model* m = nullptr;
  const slimcuda_load_options max{sizeof(slimcuda_load_options), 0, -1, 64, nullptr, SLIMCUDA_GRAPHS_OFF};
  ASSERT_EQ(slimcuda_model_load_file_with(demo_package_path().c_str(), &max, &m), SLIMCUDA_OK)
      << slimcuda_last_error_message();
  int32_t instances = 0;
  EXPECT_EQ(slimcuda_model_instances(m, &instances), SLIMCUDA_OK);
  EXPECT_EQ(instances, 64);
  slimcuda_model_free(m);
  EXPECT_EQ(slimcuda_model_load_file_with(nullptr, nullptr, &m), SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(slimcuda_model_load_file_with("/nonexistent/model.slimcuda", nullptr, &m), SLIMCUDA_ERROR_NOT_FOUND);
}

// A failed load (bytes that are not a library) leaves nothing behind either.
TEST(DemoModel, FailedLoadLeavesNothing) {
  const std::vector<std::string> before = our_temp_files();
  std::vector<uint8_t> pkg = demo_bytes();
  slimcuda_model* m = nullptr;
  // Damage the libraries' ELF magic inside the package: the verifier accepts the bytes, the
  // libraries' hashes refuse them.
  const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  int damaged = 0;
  for (size_t i = 0; i + 4 <= pkg.size(); ++i) {
    if (std::equal(elf, elf + 4, pkg.begin() + static_cast<std::ptrdiff_t>(i))) {
      pkg[i + 1] = 'X';
      ++damaged;
    }
  }
  ASSERT_GE(damaged, 1);
  EXPECT_EQ(slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, &m), SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("do not match the package's hash"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(our_temp_files(), before);
}

}  // namespace
}  // namespace slimcuda::testing
