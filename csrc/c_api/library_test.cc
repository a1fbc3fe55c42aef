// SPDX-License-Identifier: Apache-2.0
// ModelLibrary and the loader end to end with the test models of models/testing: every load
// is its own object (different packages at once, in sequence, from many threads, after a
// library that cannot be unloaded), the fallback without /proc, the fd limit, borrowed
// outputs that outlive their model, and what loading does and does not run.
#include "csrc/model/library.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/package/elf_check.h"
#include "csrc/package/library_hash.h"
#include "csrc/package/model_package.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kForkIsSupported = false;  // TSan: fork() from a multi-threaded process
#else
constexpr bool kForkIsSupported = true;
#endif

// The test packages by name ("constant_3"), from $SLIMCUDA_TEST_MODELS.
std::map<std::string, std::vector<uint8_t>> test_packages() {
  std::map<std::string, std::vector<uint8_t>> out;
  const char* list = std::getenv("SLIMCUDA_TEST_MODELS");
  EXPECT_NE(list, nullptr) << "SLIMCUDA_TEST_MODELS is not set";
  if (list == nullptr) return out;
  std::istringstream in(list);
  for (std::string p; in >> p;) {
    std::string name = p.substr(p.find_last_of('/') + 1);
    name = name.substr(0, name.find('.'));
    out[name] = read_bytes(runfile(p));
  }
  return out;
}

// Whether /proc/self/fd/N is the name of an object loaded now (a library earlier tests left
// loaded, say: -z nodelete). Tests that dlopen fd paths themselves avoid those numbers.
bool names_a_loaded_object(int fd) {
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::pair<const std::string*, bool> seen{&path, false};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* arg) {
        auto* s = static_cast<std::pair<const std::string*, bool>*>(arg);
        s->second = s->second || (info->dlpi_name != nullptr && *s->first == info->dlpi_name);
        return 0;
      },
      &seen);
  return seen.second;
}

struct Model {
  slimcuda_model* m = nullptr;
  Model() = default;
  Model(Model&& o) noexcept : m(o.m) { o.m = nullptr; }
  ~Model() { slimcuda_model_free(m); }
};

struct Tensor {
  slimcuda_tensor* t = nullptr;
  ~Tensor() { slimcuda_tensor_delete(t); }
};

int32_t load(const std::vector<uint8_t>& pkg, Model* m) {
  return slimcuda_model_load(pkg.data(), pkg.size(), 0, 0, &m->m);
}

// Runs a test model on x and returns y (NaN on failure, with a gtest failure).
float run(const Model& m, float x) {
  const int64_t sizes[1] = {1};
  Tensor in, out;
  if (slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t) != SLIMCUDA_OK ||
      slimcuda_tensor_copy_from_host(in.t, &x, 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK) {
    ADD_FAILURE() << slimcuda_last_error_message();
    return NAN;
  }
  if (slimcuda_model_run(m.m, &in.t, 1, &out.t, 1) != SLIMCUDA_OK) {
    ADD_FAILURE() << slimcuda_last_error_message();
    return NAN;
  }
  float y = NAN;
  EXPECT_EQ(slimcuda_tensor_copy_to_host(out.t, &y, 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  return y;
}

TEST(ModelLibrary, DifferentPackagesLoadedAtOnceEachRunTheirOwnLibrary) {
  auto pkgs = test_packages();
  std::vector<Model> models(8);
  for (int k = 1; k <= 8; ++k) {
    ASSERT_EQ(load(pkgs["constant_" + std::to_string(k)], &models[k - 1]), SLIMCUDA_OK)
        << slimcuda_last_error_message();
  }
  for (int k = 1; k <= 8; ++k) EXPECT_EQ(run(models[k - 1], 0.5f), 0.5f + k) << "constant_" << k;
}

// One thread, one load after another, each run right after it loads: while a first model
// stays loaded (the reproduction: A, then B and C with A alive, all ran A), and
// with nothing else loaded.
TEST(ModelLibrary, InSequenceEachLoadRunsItsOwnLibrary) {
  auto pkgs = test_packages();
  for (int round = 0; round < 3; ++round) {
    Model first;
    ASSERT_EQ(load(pkgs["constant_1"], &first), SLIMCUDA_OK) << slimcuda_last_error_message();
    EXPECT_EQ(run(first, 1.0f), 2.0f);
    for (int k = 2; k <= 8; ++k) {
      Model m;
      ASSERT_EQ(load(pkgs["constant_" + std::to_string(k)], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
      EXPECT_EQ(run(m, 1.0f), 1.0f + k) << "round " << round << ", constant_" << k << " while constant_1 is loaded";
    }
    EXPECT_EQ(run(first, 1.0f), 2.0f);
  }
  for (int round = 0; round < 3; ++round) {
    for (int k = 1; k <= 8; ++k) {
      Model m;
      ASSERT_EQ(load(pkgs["constant_" + std::to_string(k)], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
      EXPECT_EQ(run(m, 1.0f), 1.0f + k) << "round " << round << ", constant_" << k;
    }
  }
}

// A library that stays loaded after its model is freed keeps its path; the next load must
// still get its own library.
TEST(ModelLibrary, LibrariesThatCannotBeUnloadedDoNotCaptureLaterLoads) {
  auto pkgs = test_packages();
  for (const char* sticky : {"nodelete", "unique_symbol"}) {
    SCOPED_TRACE(sticky);
    const float want = std::string(sticky) == "nodelete" ? 100.0f : 200.0f;
    for (int round = 0; round < 3; ++round) {
      {
        Model m;
        ASSERT_EQ(load(pkgs[sticky], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
        EXPECT_EQ(run(m, 0.0f), want);
      }
      for (int k = 1; k <= 3; ++k) {
        Model m;
        ASSERT_EQ(load(pkgs["constant_" + std::to_string(k)], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
        EXPECT_EQ(run(m, 0.0f), static_cast<float>(k)) << "a load after " << sticky << " ran another library";
      }
    }
  }
}

// Another component of the process loads one file through two /proc/self/fd paths: glibc
// answers the second with the object it has and records that path as an alias of it, which
// dl_iterate_phdr does not show (it gives an object's first name only). A load that then
// gets the alias's fd number must still be its own object, not that one.
TEST(ModelLibrary, AnAliasPathOfAnotherObjectDoesNotCaptureALoad) {
  auto pkgs = test_packages();
  const std::vector<uint8_t> so = test_library();  // constant_1's library
  int a = memfd_create("other-component", MFD_CLOEXEC);
  ASSERT_GE(a, 0);
  ASSERT_EQ(write(a, so.data(), so.size()), static_cast<ssize_t>(so.size()));
  while (names_a_loaded_object(a)) {
    const int moved = fcntl(a, F_DUPFD_CLOEXEC, a + 1);
    close(a);
    a = moved;
  }
  void* first = dlopen(("/proc/self/fd/" + std::to_string(a)).c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(first, nullptr) << dlerror();
  // b: the lowest free number whose path names nothing loaded (numbers below it held open),
  // so the next memfd, the loader's, gets it once it is closed.
  std::vector<int> held;
  int b = dup(a);
  for (; b >= 0 && names_a_loaded_object(b); b = dup(a)) held.push_back(b);
  ASSERT_GE(b, 0);
  void* alias = dlopen(("/proc/self/fd/" + std::to_string(b)).c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_EQ(alias, first) << "glibc loaded the same file twice; the alias this test needs is not there";
  close(b);
  for (int k = 2; k <= 4; ++k) {
    Model m;
    ASSERT_EQ(load(pkgs["constant_" + std::to_string(k)], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
    EXPECT_EQ(run(m, 0.0f), static_cast<float>(k)) << "a load took the alias's path and ran another library";
  }
  dlclose(alias);
  dlclose(first);
  close(a);
  for (int fd : held) close(fd);
}

// Threads loading the 8 packages at once, each run checked against its own package. Every
// thread keeps its first model loaded until all threads have loaded theirs, so `threads`
// models are alive at once (loads are serialized and quick: without that hold each thread
// could load, run and free before the next one starts, and no two models would ever be
// alive together); later loads come and go while others run. The count printed says how
// many were alive at most.
void load_concurrently(int threads, int loads_per_thread) {
  auto pkgs = test_packages();
  std::atomic<int> wrong{0}, failed{0}, right{0};
  std::mutex mu;
  std::condition_variable all_loaded;  // and all started
  int started = 0, loaded = 0, most_alive = 0, alive = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (++started == threads) all_loaded.notify_all();
        all_loaded.wait(lock, [&] { return started == threads; });
      }
      for (int i = 0; i < loads_per_thread; ++i) {
        const int k = 1 + (t + i) % 8;
        Model m;
        const bool ok = load(pkgs["constant_" + std::to_string(k)], &m) == SLIMCUDA_OK;
        {
          std::unique_lock<std::mutex> lock(mu);
          alive += ok;
          most_alive = std::max(most_alive, alive);
          if (i == 0) {
            if (++loaded == threads) all_loaded.notify_all();
            all_loaded.wait(lock, [&] { return loaded == threads; });
          }
        }
        if (!ok) {
          ++failed;
          continue;
        }
        const float x = static_cast<float>(t);
        const int64_t sizes[1] = {1};
        Tensor in, out;
        float y = NAN;
        if (slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t) != SLIMCUDA_OK ||
            slimcuda_tensor_copy_from_host(in.t, &x, 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK ||
            slimcuda_model_run(m.m, &in.t, 1, &out.t, 1) != SLIMCUDA_OK ||
            slimcuda_tensor_copy_to_host(out.t, &y, 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK) {
          ++failed;
        } else {
          (y == x + k ? right : wrong)++;
        }
        std::lock_guard<std::mutex> lock(mu);
        --alive;
      }
    });
  }
  for (auto& th : pool) th.join();
  std::printf(
      "%d threads x %d loads of 8 different packages (at most %d models alive at once): %d right, %d wrong, "
      "%d failed\n",
      threads, loads_per_thread, most_alive, right.load(), wrong.load(), failed.load());
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(right.load(), threads * loads_per_thread);
  EXPECT_EQ(most_alive, threads) << "not every model was loaded at once";
}

TEST(ModelLibrary, SixtyFourThreadsLoadingDifferentPackages) { load_concurrently(64, 4); }

TEST(ModelLibrary, TwoHundredFiftySixThreadsLoadingEightPackagesAtOnce) { load_concurrently(256, 2); }

// count_instances fails a Run when more than its num_models are in flight, sleeps x
// microseconds and returns how many were in flight. 16 threads on a model of `instances`:
// the instance slots keep the container from overfilling, and runs do overlap.
//
//   thread 0:  |--run--|      |--run--|
//   thread 1:    |--run--|  |--run--|        at most `instances` at once, never more
//   thread 2:      (waits)|--run--|
float max_in_flight(const std::vector<uint8_t>& pkg, const slimcuda_load_options* opts, int* failures) {
  Model m;
  EXPECT_EQ(slimcuda_model_load_with(pkg.data(), pkg.size(), opts, &m.m), SLIMCUDA_OK) << slimcuda_last_error_message();
  if (m.m == nullptr) return NAN;
  std::atomic<int> failed{0};
  std::mutex mu;
  float seen = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 20; ++r) {
        const int64_t sizes[1] = {1};
        const float x = 300;  // microseconds
        Tensor in, out;
        float y = 0;
        if (slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t) != SLIMCUDA_OK ||
            slimcuda_tensor_copy_from_host(in.t, &x, 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK ||
            slimcuda_model_run(m.m, &in.t, 1, &out.t, 1) != SLIMCUDA_OK ||
            slimcuda_tensor_copy_to_host(out.t, &y, 4, SLIMCUDA_FLOAT32) != SLIMCUDA_OK) {
          ++failed;
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        seen = std::max(seen, y);
      }
    });
  }
  for (auto& th : threads) th.join();
  *failures = failed.load();
  return seen;
}

TEST(ModelInstances, RunsOverlapUpToTheInstanceCountAndNeverOverfillTheContainer) {
  auto pkgs = test_packages();
  const slimcuda_load_options four{
      sizeof(slimcuda_load_options), SLIMCUDA_DEVICE_CPU, -1, 4, nullptr, SLIMCUDA_GRAPHS_OFF};
  int failures = -1;
  const float seen = max_in_flight(pkgs["count_instances"], &four, &failures);
  EXPECT_EQ(failures, 0) << "a run found no free instance in the container";
  EXPECT_LE(seen, 4.0f);
  EXPECT_GE(seen, 2.0f) << "runs on a model of 4 instances never overlapped";
}

TEST(ModelInstances, OneInstanceByDefaultOnTheCpu) {
  auto pkgs = test_packages();
  int failures = -1;
  const float seen = max_in_flight(pkgs["count_instances"], nullptr, &failures);
  EXPECT_EQ(failures, 0) << "a run found no free instance in the container";
  EXPECT_EQ(seen, 1.0f);
}

// An output over the library's own static memory stays
// readable after the model is freed (the output keeps the library and container loaded).
TEST(ModelLibrary, AnOutputBorrowingTheLibraryOutlivesTheModel) {
  auto pkgs = test_packages();
  Tensor out;
  {
    Model m;
    ASSERT_EQ(load(pkgs["static_output"], &m), SLIMCUDA_OK) << slimcuda_last_error_message();
    const int64_t sizes[1] = {1};
    Tensor in;
    const float x = 2.0f;
    ASSERT_EQ(slimcuda_tensor_empty(1, sizes, nullptr, SLIMCUDA_FLOAT32, 0, 0, 0, &in.t), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_tensor_copy_from_host(in.t, &x, 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
    ASSERT_EQ(slimcuda_model_run(m.m, &in.t, 1, &out.t, 1), SLIMCUDA_OK) << slimcuda_last_error_message();
  }
  float y = 0;
  ASSERT_EQ(slimcuda_tensor_copy_to_host(out.t, &y, 4, SLIMCUDA_FLOAT32), SLIMCUDA_OK);
  EXPECT_EQ(y, 302.0f);
}

TEST(ModelLibrary, AContainerThatReportsSuccessWithoutAHandleIsRefused) {
  auto pkgs = test_packages();
  Model m;
  EXPECT_EQ(load(pkgs["null_container"], &m), SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("returned no container"), std::string::npos)
      << slimcuda_last_error_message();
  EXPECT_EQ(m.m, nullptr);
}

// A library that calls shims or SLEEF functions slimcuda lacks fails before dlopen, naming
// each of them (glibc would name the first only), and runs none of its code. A SLEEF function
// libsleef has resolves (libslimcuda links it), so it is not named.
TEST(ModelLibrary, MissingShimsAreAllNamed) {
  auto pkgs = test_packages();
  Model m;
  EXPECT_EQ(load(pkgs["missing_shims"], &m), SLIMCUDA_ERROR_NOT_SUPPORTED);
  const std::string msg = slimcuda_last_error_message();
  EXPECT_NE(msg.find("3 functions this slimcuda does not provide"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aoti_torch_cpu_made_up_op"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aoti_torch_made_up_helper"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Sleef_madeupf_u10"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Sleef_expf_u10"), std::string::npos) << msg;                   // libsleef has it
  EXPECT_EQ(msg.find("aoti_torch_delete_tensor_object"), std::string::npos) << msg;  // it has that one
  EXPECT_EQ(m.m, nullptr);
}

// Checking a package runs none of its code; loading it runs its constructors (said plainly
// in slimcuda.h and docs/contract.md: the code of a package cannot be vetted in-process).
TEST(ModelLibrary, CheckingRunsNoCodeLoadingRunsConstructors) {
  auto pkgs = test_packages();
  const std::string marker = ::testing::TempDir() + "/constructor-ran";
  std::remove(marker.c_str());
  ASSERT_EQ(setenv("SLIMCUDA_TEST_CONSTRUCTOR_FILE", marker.c_str(), 1), 0);
  const std::vector<uint8_t>& pkg = pkgs["constructor_file"];
  ASSERT_EQ(slimcuda_package_check(pkg.data(), pkg.size()), SLIMCUDA_OK) << slimcuda_last_error_message();
  struct stat st {};
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "slimcuda_package_check ran the library's code";
  Model m;
  ASSERT_EQ(load(pkg, &m), SLIMCUDA_OK) << slimcuda_last_error_message();
  EXPECT_EQ(stat(marker.c_str(), &st), 0) << "loading is expected to run the constructor";
  unsetenv("SLIMCUDA_TEST_CONSTRUCTOR_FILE");
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

// Without /proc the loader falls back to an unlinked file with a random name: the library
// loads, is its own object, and nothing stays in TMPDIR.
TEST(ModelLibrary, WithoutProcFallsBackToAnUnlinkedFile) {
  const std::vector<uint8_t> so = test_library();
  const std::string tmp = ::testing::TempDir() + "/no-proc-tmp";
  mkdir(tmp.c_str(), 0700);
  // The library's TMPDIR setting (its environment is read once, so setenv would not reach it).
  ASSERT_EQ(slimcuda_config_set("TMPDIR", tmp.c_str()), SLIMCUDA_OK) << slimcuda_last_error_message();
  std::shared_ptr<ModelLibrary> a, b;
  const Error ea = ModelLibrary::load(so.data(), so.size(), "/nonexistent/fd", &a);
  const Error eb = ModelLibrary::load(so.data(), so.size(), "/nonexistent/fd", &b);
  ASSERT_EQ(slimcuda_config_set("TMPDIR", nullptr), SLIMCUDA_OK);
  ASSERT_EQ(ea, Error::Ok) << last_error_message();
  ASSERT_EQ(eb, Error::Ok) << last_error_message();
  EXPECT_NE(a->handle(), b->handle()) << "two loads of the same bytes must be two objects";
  EXPECT_EQ(a->path().rfind(tmp, 0), 0u) << a->path();
  EXPECT_NE(a->symbol("AOTInductorModelContainerRun"), nullptr);
  EXPECT_TRUE(entries(tmp).empty()) << "a file was left in TMPDIR";
}

// Out of file descriptors is OutOfResources, not a complaint about the package: with none
// left (memfd_create fails), and with exactly one left, which the memfd takes so that the
// dynamic loader's own open of /proc/self/fd/N fails (glibc reports that as a load error).
// With more left the load succeeds.
TEST(ModelLibrary, OutOfFileDescriptorsIsOutOfResources) {
  if (!kForkIsSupported) GTEST_SKIP() << "fork() is not supported under ThreadSanitizer";
  const std::vector<uint8_t> so = test_library();
  for (int spare = 0; spare <= 3; ++spare) {
    SCOPED_TRACE(spare);
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      struct rlimit lim {
        64, 64
      };
      setrlimit(RLIMIT_NOFILE, &lim);
      int last = -1;
      for (int fd; (fd = dup(0)) >= 0;) last = fd;
      for (int k = 0; k < spare; ++k) close(last - k);
      std::shared_ptr<ModelLibrary> lib;
      const Error e = ModelLibrary::load(so.data(), so.size(), &lib);
      const Error want = spare <= 1 ? Error::OutOfResources : Error::Ok;
      if (e != want) std::fprintf(stderr, "spare %d: %s\n", spare, last_error_message());
      _exit(e == want ? 0 : 10 + static_cast<int>(e));
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "the child crashed";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "error code + 10 in the child: " << WEXITSTATUS(status);
  }
}

// ---- the ELF check and the package's library hash -------------------------------------------

TEST(ElfCheck, ARealLibraryPasses) {
  const std::vector<uint8_t> so = test_library();
  EXPECT_EQ(check_elf(so.data(), so.size()), Error::Ok) << last_error_message();
}

// The end of the bytes the loader maps (the section headers after them are never read).
size_t loaded_end(const std::vector<uint8_t>& so) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, so.data(), sizeof eh);
  size_t end = 0;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, so.data() + eh.e_phoff + size_t{i} * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD) end = std::max<size_t>(end, ph.p_offset + ph.p_filesz);
  }
  return end;
}

TEST(ElfCheck, TruncatedLibrariesAreRefused) {
  const std::vector<uint8_t> so = test_library();
  const size_t end = loaded_end(so);
  ASSERT_GT(end, 4096u);
  for (size_t n : {size_t{0}, size_t{4}, size_t{63}, size_t{64}, end / 2, end - 1}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(check_elf(so.data(), n), Error::InvalidProgram);
  }
  EXPECT_NE(std::string(last_error_message()).find("past the end"), std::string::npos) << last_error_message();
  // Every page-size prefix of the mapped bytes too: the loader maps whole pages.
  for (size_t n = 4096; n < end; n += 4096) {
    EXPECT_EQ(check_elf(so.data(), n), Error::InvalidProgram) << n;
  }
  // The section headers after the mapped bytes are not the loader's business.
  EXPECT_EQ(check_elf(so.data(), end), Error::Ok) << last_error_message();
}

// The header alone, from a library's first 64 bytes (a compressed library's first inflated
// bytes): the same verdicts, with the program headers judged against the whole size.
TEST(ElfCheck, TheHeaderAloneIsJudgedFromItsFirstBytes) {
  std::vector<uint8_t> so = test_library();
  EXPECT_EQ(check_elf_header(so.data(), 64, so.size()), Error::Ok) << last_error_message();
  EXPECT_EQ(check_elf_header(so.data(), 63, so.size()), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("too short for an ELF header"), std::string::npos);
  EXPECT_EQ(check_elf_header(so.data(), 64, 64), Error::InvalidProgram) << "its program headers lie past 64 bytes";
  EXPECT_NE(std::string(last_error_message()).find("past the end"), std::string::npos) << last_error_message();
  so[0] = 'x';
  EXPECT_EQ(check_elf_header(so.data(), 64, so.size()), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("bad magic"), std::string::npos) << last_error_message();
}

TEST(ElfCheck, AnotherArchitectureIsNamed) {
  std::vector<uint8_t> so = test_library();
  ASSERT_GE(so.size(), sizeof(Elf64_Ehdr));
  const uint16_t aarch64 = EM_AARCH64;
  std::memcpy(so.data() + offsetof(Elf64_Ehdr, e_machine), &aarch64, 2);
  EXPECT_EQ(check_elf(so.data(), so.size()), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("aarch64"), std::string::npos) << last_error_message();
  // The same through the loader: what is wrong, not "No such file or directory".
  std::shared_ptr<ModelLibrary> lib;
  EXPECT_EQ(ModelLibrary::load(so.data(), so.size(), &lib), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("x86-64"), std::string::npos) << last_error_message();
}

TEST(ElfCheck, MalformedHeadersAreRefused) {
  const std::vector<uint8_t> good = test_library();
  ASSERT_GE(good.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, good.data(), sizeof eh);
  auto with = [&](auto edit) {
    std::vector<uint8_t> b = good;
    edit(b);
    return check_elf(b.data(), b.size());
  };
  EXPECT_EQ(with([](std::vector<uint8_t>& b) { b[0] = 'X'; }), Error::InvalidProgram);
  EXPECT_EQ(with([](std::vector<uint8_t>& b) { b[EI_CLASS] = ELFCLASS32; }), Error::InvalidProgram);
  EXPECT_EQ(with([](std::vector<uint8_t>& b) { b[EI_DATA] = ELFDATA2MSB; }), Error::InvalidProgram);
  EXPECT_EQ(with([](std::vector<uint8_t>& b) {
              const uint16_t exec = ET_EXEC;
              std::memcpy(b.data() + offsetof(Elf64_Ehdr, e_type), &exec, 2);
            }),
            Error::InvalidProgram);
  EXPECT_EQ(with([&](std::vector<uint8_t>& b) {
              const uint64_t far = b.size();
              std::memcpy(b.data() + offsetof(Elf64_Ehdr, e_phoff), &far, 8);
            }),
            Error::InvalidProgram);
  // Each program header in turn with a file size past the end, or a dynamic table moved away.
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const size_t at = eh.e_phoff + size_t{i} * sizeof(Elf64_Phdr);
    Elf64_Phdr ph;
    std::memcpy(&ph, good.data() + at, sizeof ph);
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    SCOPED_TRACE(i);
    EXPECT_EQ(with([&](std::vector<uint8_t>& b) {
                Elf64_Phdr bad = ph;
                bad.p_filesz = b.size();
                bad.p_memsz = b.size() * 2;
                std::memcpy(b.data() + at, &bad, sizeof bad);
              }),
              Error::InvalidProgram);
  }
}

// ---- the dynamic-linking tables: what glibc trusts while it loads -----------------------

// The library's dynamic section and tables, read through its program headers (as the
// loader does) and section headers (to find what is code; the loader never reads those).
struct ElfLayout {
  explicit ElfLayout(const std::vector<uint8_t>& so) : so(so) {
    std::memcpy(&eh, so.data(), sizeof eh);
    for (uint16_t i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, so.data() + eh.e_phoff + size_t{i} * sizeof ph, sizeof ph);
      phdrs.push_back(ph);
      if (ph.p_type == PT_DYNAMIC) dynamic = ph;
    }
    for (uint16_t i = 0; i < eh.e_shnum; ++i) {
      Elf64_Shdr sh;
      std::memcpy(&sh, so.data() + eh.e_shoff + size_t{i} * sizeof sh, sizeof sh);
      shdrs.push_back(sh);
    }
  }
  // The file offset of a virtual address (the first PT_LOAD holding it).
  size_t offset(uint64_t vaddr) const {
    for (const Elf64_Phdr& ph : phdrs) {
      if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
        return ph.p_offset + (vaddr - ph.p_vaddr);
      }
    }
    return std::string::npos;
  }
  // The file offset of the dynamic entry with `tag` (npos when absent).
  size_t entry(int64_t tag) const {
    for (size_t at = dynamic.p_offset; at + sizeof(Elf64_Dyn) <= dynamic.p_offset + dynamic.p_filesz;
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, so.data() + at, sizeof d);
      if (d.d_tag == tag) return at;
      if (d.d_tag == DT_NULL) break;
    }
    return std::string::npos;
  }
  uint64_t value(int64_t tag) const {
    Elf64_Dyn d{};
    if (entry(tag) != std::string::npos) std::memcpy(&d, so.data() + entry(tag), sizeof d);
    return d.d_un.d_val;
  }
  size_t phdr(uint32_t type) const {
    for (size_t i = 0; i < phdrs.size(); ++i) {
      if (phdrs[i].p_type == type) return eh.e_phoff + i * sizeof(Elf64_Phdr);
    }
    return std::string::npos;
  }
  // File ranges glibc reads to link the library: the ELF and program headers, the dynamic
  // section and the symbol, string, hash, version and relocation tables.
  std::vector<std::pair<size_t, size_t>> linking_tables() const {
    std::vector<std::pair<size_t, size_t>> out = {{0, eh.e_phoff + size_t{eh.e_phnum} * sizeof(Elf64_Phdr)}};
    for (const Elf64_Shdr& sh : shdrs) {
      switch (sh.sh_type) {
        case SHT_DYNAMIC:
        case SHT_DYNSYM:
        case SHT_HASH:
        case SHT_GNU_HASH:
        case SHT_GNU_versym:
        case SHT_GNU_verdef:
        case SHT_GNU_verneed:
        case SHT_RELA:
          out.push_back({sh.sh_offset, sh.sh_offset + sh.sh_size});
          break;
        case SHT_STRTAB:
          if (sh.sh_flags & SHF_ALLOC) out.push_back({sh.sh_offset, sh.sh_offset + sh.sh_size});  // .dynstr
          break;
        default:
          break;
      }
    }
    return out;
  }
  // Fields in those tables that place code or the library's data: DT_INIT/DT_FINI's values,
  // functions' values, relocations' targets, and RELATIVE relocations' addends (the init
  // and fini arrays among them). Changed, they hand the library's own code something else
  // to run or read, which the ELF check cannot tell from a valid library.
  std::vector<std::pair<size_t, size_t>> placements() const {
    std::vector<std::pair<size_t, size_t>> out;
    for (const Elf64_Shdr& sh : shdrs) {
      if (sh.sh_type == SHT_RELA) {
        for (size_t at = sh.sh_offset; at + sizeof(Elf64_Rela) <= sh.sh_offset + sh.sh_size; at += sizeof(Elf64_Rela)) {
          Elf64_Rela r;
          std::memcpy(&r, so.data() + at, sizeof r);
          out.push_back({at, at + 8});  // r_offset
          if (ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE) out.push_back({at + 16, at + 24});
        }
      }
      if (sh.sh_type == SHT_DYNSYM) {
        for (size_t at = sh.sh_offset; at + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size; at += sizeof(Elf64_Sym)) {
          Elf64_Sym sym;
          std::memcpy(&sym, so.data() + at, sizeof sym);
          if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC) out.push_back({at + 8, at + 16});
        }
      }
    }
    for (int64_t tag : {DT_INIT, DT_FINI}) {
      if (entry(tag) != std::string::npos) out.push_back({entry(tag) + 8, entry(tag) + 16});
    }
    return out;
  }

  const std::vector<uint8_t>& so;
  Elf64_Ehdr eh{};
  Elf64_Phdr dynamic{};
  std::vector<Elf64_Phdr> phdrs;
  std::vector<Elf64_Shdr> shdrs;
};

template <typename T>
void put(std::vector<uint8_t>& b, size_t at, T v) {
  ASSERT_NE(at, std::string::npos);
  ASSERT_LE(at + sizeof v, b.size());
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T>
T get(const std::vector<uint8_t>& b, size_t at) {
  T v{};
  if (at != std::string::npos && at + sizeof v <= b.size()) std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// What `call` does in a child process: "killed by signal N", "ld.so exit 127" (glibc's
// "Inconsistency detected by ld.so" stops the process), or "exit N" (`call` may _exit; 0
// when it returns).
std::string fate_in_child(const std::function<void()>& call) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    call();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) == 127) return "ld.so exit 127";
  return "exit " + std::to_string(WEXITSTATUS(status));
}

// dlopen of the bytes as they are, no check in between (what the loader did before), from
// an fd whose path names no loaded object (else dlopen returns that object).
void dlopen_unchecked(const std::vector<uint8_t>& so) {
  int fd = memfd_create("unchecked", 0);
  if (fd < 0 || write(fd, so.data(), so.size()) != static_cast<ssize_t>(so.size())) _exit(3);
  while (names_a_loaded_object(fd)) fd = fcntl(fd, F_DUPFD, fd + 1);
  (void)dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL);
}

// Each case is one malformation of a real library's dynamic-linking tables that passed the
// shape checks, seen in random corruptions of the test library that crashed dlopen or
// stopped the process in an ld.so assertion on glibc 2.36. Alone, 16 of the 19 do that
// (what dlopen does with each is printed); the other three damage the library's own
// pointers. Each is refused now, with its reason.
TEST(ElfCheck, MalformedDynamicTablesAreRefused) {
  const std::vector<uint8_t> good = test_library();
  const ElfLayout l(good);
  ASSERT_EQ(check_elf(good.data(), good.size()), Error::Ok) << last_error_message();
  constexpr int64_t kIgnoredTag = 0x70000000;  // DT_LOPROC: no meaning on x86-64, glibc skips it
  const size_t rela = l.offset(l.value(DT_RELA)), jmprel = l.offset(l.value(DT_JMPREL));
  const size_t symtab = l.offset(l.value(DT_SYMTAB)), versym = l.offset(l.value(DT_VERSYM));
  const size_t verneed = l.offset(l.value(DT_VERNEED)), gnu_hash = l.offset(l.value(DT_GNU_HASH));
  ASSERT_NE(rela, std::string::npos);
  ASSERT_NE(jmprel, std::string::npos);
  ASSERT_NE(verneed, std::string::npos);
  ASSERT_NE(gnu_hash, std::string::npos);
  // The first imported symbol (index >= 1, undefined).
  size_t imported = std::string::npos;
  for (size_t k = 1; imported == std::string::npos && k < 64; ++k) {
    if (get<uint16_t>(good, symtab + k * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_shndx)) == SHN_UNDEF) {
      imported = symtab + k * sizeof(Elf64_Sym);
    }
  }
  const struct {
    const char* description;
    std::function<void(std::vector<uint8_t>&)> edit;
    const char* message;
  } cases[] = {
      {"DT_RELAENT missing", [&](auto& b) { put<int64_t>(b, l.entry(DT_RELAENT), kIgnoredTag); },
       "without its entry size or type"},
      {"DT_RELAENT wrong", [&](auto& b) { put<uint64_t>(b, l.entry(DT_RELAENT) + 8, 25); }, "DT_RELAENT is 25"},
      {"DT_PLTREL missing", [&](auto& b) { put<int64_t>(b, l.entry(DT_PLTREL), kIgnoredTag); },
       "without its entry size or type"},
      {"DT_INIT_ARRAYSZ missing", [&](auto& b) { put<int64_t>(b, l.entry(DT_INIT_ARRAYSZ), kIgnoredTag); },
       "init array is malformed"},
      {"DT_VERSYM missing", [&](auto& b) { put<int64_t>(b, l.entry(DT_VERSYM), kIgnoredTag); },
       "without a symbol version table"},
      {"symbol table moved by 4 bytes",
       [&](auto& b) { put<uint64_t>(b, l.entry(DT_SYMTAB) + 8, l.value(DT_SYMTAB) + 4); }, "is not 8-byte aligned"},
      {"GNU hash bloom size not a power of two", [&](auto& b) { put<uint32_t>(b, gnu_hash + 8, 3); },
       "DT_GNU_HASH table"},
      {"DT_RELACOUNT past the relative ones",
       [&](auto& b) { put<uint64_t>(b, l.entry(DT_RELACOUNT) + 8, l.value(DT_RELASZ) / 24); },
       "within the DT_RELACOUNT relative ones"},
      {"relocation into read-only memory", [&](auto& b) { put<uint64_t>(b, rela, l.value(DT_STRTAB)); },
       "outside the library's writable memory"},
      {"relocation far outside the library", [&](auto& b) { put<uint64_t>(b, jmprel, uint64_t{0xa4} << 40); },
       "outside the library's writable memory"},
      {"relocation into the dynamic section", [&](auto& b) { put<uint64_t>(b, jmprel, l.dynamic.p_vaddr + 8); },
       "into its dynamic section"},
      {"GOT entry unaligned", [&](auto& b) { put<uint64_t>(b, jmprel, get<uint64_t>(b, jmprel) - 4); },
       "writes a GOT entry at unaligned"},
      {"relocation names a symbol far past the table",
       [&](auto& b) { put<uint64_t>(b, jmprel + 8, ELF64_R_INFO(0xffffff, R_X86_64_JUMP_SLOT)); },
       "dynamic symbol 16777215 lies outside"},
      {"symbol version index past those defined", [&](auto& b) { put<uint16_t>(b, versym + 2, 0x7d00); },
       "has version index 32000"},
      {"needed versions of a file not needed",
       [&](auto& b) {
         put<uint32_t>(b, verneed + 4, get<uint32_t>(b, verneed + 4) + 1);  // vn_file: "ibstdc++.so.6"
       },
       "which it does not list as needed"},
      {"version need chain past the end", [&](auto& b) { put<uint32_t>(b, verneed + 12, 0x10000000); },
       "a version need lies outside"},
      {"imported symbol hidden", [&](auto& b) { put<uint8_t>(b, imported + 5, STV_HIDDEN); },
       "is not of default visibility"},
      {"RELRO over a gigabyte", [&](auto& b) { put<uint64_t>(b, l.phdr(PT_GNU_RELRO) + 40, uint64_t{1} << 30); },
       "RELRO segment"},
      {"PT_PHDR elsewhere",
       [&](auto& b) {
         put<uint64_t>(b, l.phdr(PT_PHDR) + 16, get<uint64_t>(b, l.phdr(PT_PHDR) + 16) + (uint64_t{0x5e} << 32));
       },
       "PT_PHDR does not describe"},
  };
  int killed = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.description);
    std::vector<uint8_t> b = good;
    c.edit(b);
    ASSERT_NE(b, good);
    EXPECT_EQ(check_elf(b.data(), b.size()), Error::InvalidProgram);
    EXPECT_NE(std::string(last_error_message()).find(c.message), std::string::npos) << last_error_message();
    if (kForkIsSupported) {
      const std::string fate = fate_in_child([&] { dlopen_unchecked(b); });
      killed += fate.rfind("exit ", 0) != 0;
      std::printf("%-45s refused: %s; unchecked, dlopen %s\n", c.description, last_error_message(), fate.c_str());
    }
  }
  std::printf("%d of %zu malformations kill the process when given to dlopen unchecked\n", killed,
              sizeof cases / sizeof cases[0]);
}

// Random corruptions of what glibc reads to link the library (ELF and program headers,
// the dynamic section, symbol, string, hash, version and relocation tables; ElfLayout finds
// them), outside the fields that place code and data (ElfLayout::placements), each packed
// with a recomputed hash (a package written from a damaged library): every one is refused
// by the ELF check or by the loader, or loads, and none kills the process (256 of the 1000
// did with the shape checks alone, glibc 2.36). Corrupted code, or a placement moved
// within the library, still can: the library's own code then runs on something else (an
// ASan build's global registration reads relocated descriptors), which nothing
// in-process can tell from a valid library.
TEST(ElfCheck, CorruptedTablesNeverKillTheLoader) {
  if (!kForkIsSupported) GTEST_SKIP() << "fork() is not supported under ThreadSanitizer";
  const std::vector<uint8_t> good = test_library();
  const ElfLayout l(good);
  const auto tables = l.linking_tables(), placements = l.placements();
  ASSERT_GE(tables.size(), 8u) << "no section headers to find the tables by";
  const auto in = [](const std::vector<std::pair<size_t, size_t>>& ranges, size_t at) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return at >= r.first && at < r.second; });
  };
  const size_t end = loaded_end(good);
  std::mt19937 rng(20261201);
  int refused_by_check = 0, refused_by_loader = 0, loaded = 0, killed = 0;
  for (int i = 0; i < 1000; ++i) {
    std::vector<uint8_t> b = good;
    for (int f = 0, flips = 1 + static_cast<int>(rng() % 8); f < flips;) {
      const size_t at = rng() % end;
      if (!in(tables, at) || in(placements, at)) continue;
      b[at] ^= static_cast<uint8_t>(1 + rng() % 255);
      ++f;
    }
    if (check_elf(b.data(), b.size()) != Error::Ok) {
      ++refused_by_check;
      continue;
    }
    const std::string fate = fate_in_child([&] {
      std::shared_ptr<ModelLibrary> lib;
      _exit(ModelLibrary::load(b.data(), b.size(), &lib) == Error::Ok ? 0 : 1);
    });
    if (fate == "exit 0") {
      ++loaded;
    } else if (fate == "exit 1") {
      ++refused_by_loader;
    } else {
      ++killed;
      ADD_FAILURE() << "corruption " << i << ": " << fate;
    }
  }
  std::printf(
      "1000 corruptions of the linking tables' structure: %d refused by the ELF check, %d refused by the loader, %d "
      "loaded, %d "
      "killed the process\n",
      refused_by_check, refused_by_loader, loaded, killed);
  EXPECT_EQ(killed, 0);
}

// Corruption inside a package is caught by the hash before any ELF parsing: 300 random
// corruptions of a real library, each packed with the original library's hash.
TEST(LibraryHash, CorruptedLibrariesInAPackageAreRefusedBeforeLoading) {
  auto pkgs = test_packages();
  ModelPackage pkg;
  ASSERT_EQ(ModelPackage::parse(pkgs["constant_1"].data(), pkgs["constant_1"].size(), &pkg), Error::Ok)
      << last_error_message();
  const std::vector<uint8_t> original = pkg.libraries[0].so;
  const LibraryHash hash = library_hash(original.data(), original.size());
  std::mt19937 rng(1234);
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> so = original;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) so[rng() % so.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    if (i % 3 == 0) so.resize(rng() % so.size());  // and some truncations
    if (so == original) continue;
    EXPECT_FALSE(library_hash_matches(so.data(), so.size(), hash.bytes)) << i;
  }
  // Through the reader: the package's hash no longer matches its library.
  std::vector<uint8_t> bytes = pkgs["constant_1"];
  const auto at = std::search(bytes.begin(), bytes.end(), original.begin(), original.begin() + 64);
  ASSERT_NE(at, bytes.end());
  at[original.size() / 2] ^= 0x5a;
  EXPECT_EQ(slimcuda_package_check(bytes.data(), bytes.size()), SLIMCUDA_ERROR_INVALID_PROGRAM);
  EXPECT_NE(std::string(slimcuda_last_error_message()).find("do not match the package's hash"), std::string::npos)
      << slimcuda_last_error_message();
  Model m;
  EXPECT_EQ(load(bytes, &m), SLIMCUDA_ERROR_INVALID_PROGRAM);
}

}  // namespace
}  // namespace slimcuda::testing
