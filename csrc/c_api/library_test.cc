// SPDX-License-Identifier: Apache-2.0
// ModelLibrary and the loader end to end with the test models of models/testing: every load
// is its own object (different packages at once, in sequence, from many threads, after a
// library that cannot be unloaded), the fallback without /proc, the fd limit, borrowed
// outputs that outlive their model, and what loading does and does not run.
#include "csrc/model/library.h"

#include <dirent.h>
#include <elf.h>
#include <stdlib.h>
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

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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

std::vector<uint8_t> library_bytes() {
  const char* p = std::getenv("SLIMCUDA_TEST_LIBRARY");
  EXPECT_NE(p, nullptr) << "SLIMCUDA_TEST_LIBRARY is not set";
  return p == nullptr ? std::vector<uint8_t>{} : read_bytes(runfile(p));
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

// Item 5 of the reliability issue: an output over the library's own static memory stays
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

// Checking a package runs none of its code; loading it runs its constructors (said plainly
// in slimcuda.h and README: the code of a package cannot be vetted in-process).
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
  const std::vector<uint8_t> so = library_bytes();
  const std::string tmp = ::testing::TempDir() + "/no-proc-tmp";
  mkdir(tmp.c_str(), 0700);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ASSERT_EQ(setenv("TMPDIR", tmp.c_str(), 1), 0);
  std::shared_ptr<ModelLibrary> a, b;
  const Error ea = ModelLibrary::load(so.data(), so.size(), "/nonexistent/fd", &a, "test");
  const Error eb = ModelLibrary::load(so.data(), so.size(), "/nonexistent/fd", &b, "test");
  if (old)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
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
  const std::vector<uint8_t> so = library_bytes();
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
      const Error e = ModelLibrary::load(so.data(), so.size(), &lib, "test");
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
  const std::vector<uint8_t> so = library_bytes();
  EXPECT_EQ(check_elf(so.data(), so.size(), "test"), Error::Ok) << last_error_message();
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
  const std::vector<uint8_t> so = library_bytes();
  const size_t end = loaded_end(so);
  ASSERT_GT(end, 4096u);
  for (size_t n : {size_t{0}, size_t{4}, size_t{63}, size_t{64}, end / 2, end - 1}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(check_elf(so.data(), n, "test"), Error::InvalidProgram);
  }
  EXPECT_NE(std::string(last_error_message()).find("past the end"), std::string::npos) << last_error_message();
  // Every page-size prefix of the mapped bytes too: the loader maps whole pages.
  for (size_t n = 4096; n < end; n += 4096) {
    EXPECT_EQ(check_elf(so.data(), n, "test"), Error::InvalidProgram) << n;
  }
  // The section headers after the mapped bytes are not the loader's business.
  EXPECT_EQ(check_elf(so.data(), end, "test"), Error::Ok) << last_error_message();
}

TEST(ElfCheck, AnotherArchitectureIsNamed) {
  std::vector<uint8_t> so = library_bytes();
  ASSERT_GE(so.size(), sizeof(Elf64_Ehdr));
  const uint16_t aarch64 = EM_AARCH64;
  std::memcpy(so.data() + offsetof(Elf64_Ehdr, e_machine), &aarch64, 2);
  EXPECT_EQ(check_elf(so.data(), so.size(), "test"), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("aarch64"), std::string::npos) << last_error_message();
  // The same through the loader: what is wrong, not "No such file or directory".
  std::shared_ptr<ModelLibrary> lib;
  EXPECT_EQ(ModelLibrary::load(so.data(), so.size(), &lib, "test"), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("x86-64"), std::string::npos) << last_error_message();
}

TEST(ElfCheck, MalformedHeadersAreRefused) {
  const std::vector<uint8_t> good = library_bytes();
  ASSERT_GE(good.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, good.data(), sizeof eh);
  auto with = [&](auto edit) {
    std::vector<uint8_t> b = good;
    edit(b);
    return check_elf(b.data(), b.size(), "test");
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

// Corruption inside a package is caught by the hash before any ELF parsing: 300 random
// corruptions of a real library, each packed with the original library's hash.
TEST(LibraryHash, CorruptedLibrariesInAPackageAreRefusedBeforeLoading) {
  auto pkgs = test_packages();
  ModelPackage pkg;
  ASSERT_EQ(ModelPackage::parse(pkgs["constant_1"].data(), pkgs["constant_1"].size(), &pkg, "test"), Error::Ok)
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
