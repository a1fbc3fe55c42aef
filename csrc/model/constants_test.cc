// SPDX-License-Identifier: Apache-2.0
// Weights kept outside a model's library (constants.h, weights_cache.h, weight_source.h):
// the CPU path end to end with the test models of models/testing (weights_pairs: user-
// managed pairs; weights_copy: the container copies), one copy shared by several loads
// and by concurrent loads, every malformed-weights case with its message and no memory
// left behind; the CUDA path (pinned staging on the caller's stream, the caching
// allocator's stats, > 4 GiB) against an in-process container on the GPU.
#include "csrc/model/constants.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/cuda/device.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/memory/device_allocator.h"
#include "csrc/memory/device_memory.h"
#include "csrc/model/archive_constants.h"
#include "csrc/model/model.h"
#include "csrc/model/test_run.h"
#include "csrc/model/weights_cache.h"
#include "csrc/package/model_package.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

// A test package by name ("weights_pairs").
std::vector<uint8_t> test_package(const std::string& want) {
  const std::string path = test_package_path(want);
  return path.empty() ? std::vector<uint8_t>{} : read_bytes(path);
}

// Counts the CPU allocator's live bytes and allocations (the weights' host memory).
class CountingCpu final : public DeviceAllocator {
 public:
  CountingCpu() : inner_(get_device_allocator(DeviceType::CPU)) { register_device_allocator(this); }
  ~CountingCpu() override { register_device_allocator(inner_); }
  CountingCpu(const CountingCpu&) = delete;
  CountingCpu& operator=(const CountingCpu&) = delete;

  Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept override {
    Result<void*> r = inner_->allocate(nbytes, alignment, ctx);
    if (r.ok() && r.value() != nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      sizes_[r.value()] = nbytes;
      live_ += nbytes;
      ++allocations_;
    }
    return r;
  }
  Error deallocate(void* ptr, int device) noexcept override {
    if (ptr != nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      live_ -= sizes_[ptr];
      sizes_.erase(ptr);
    }
    return inner_->deallocate(ptr, device);
  }
  Error copy_host_to_device(void* d, const void* s, size_t n, const StreamContext& c) noexcept override {
    return inner_->copy_host_to_device(d, s, n, c);
  }
  Error copy_device_to_host(void* d, const void* s, size_t n, const StreamContext& c) noexcept override {
    return inner_->copy_device_to_host(d, s, n, c);
  }
  DeviceType device_type() const noexcept override { return DeviceType::CPU; }

  size_t live() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_;
  }
  size_t allocations() {
    std::lock_guard<std::mutex> lock(mu_);
    return allocations_;
  }

 private:
  DeviceAllocator* inner_;
  std::mutex mu_;
  std::map<void*, size_t> sizes_;
  size_t live_ = 0, allocations_ = 0;
};

// A source that counts its reads and can fail the n-th one; no view, so uploads read.
class CountingSource final : public WeightSource {
 public:
  CountingSource(std::vector<uint8_t> bytes, std::string identity, int fail_at = -1)
      : bytes_(std::move(bytes)), identity_(std::move(identity)), fail_at_(fail_at) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  Error read(uint64_t offset, size_t n, void* dst) const noexcept override {
    const int k = reads_++;
    if (k == fail_at_) return set_last_error(Error::AccessFailed, "the disk went away");
    if (offset > bytes_.size() || n > bytes_.size() - offset) return Error::InvalidProgram;
    std::memcpy(dst, bytes_.data() + offset, n);
    return Error::Ok;
  }
  std::string identity() const override { return identity_; }
  int reads() const { return reads_; }

 private:
  std::vector<uint8_t> bytes_;
  std::string identity_;
  int fail_at_;
  mutable std::atomic<int> reads_{0};
};

// The test models' weights as an AOTInductor binary_blob: layer_w ([2, 3] float32: 1..6)
// padded to 64 bytes, then layer_b (0.5) padded to 64, as PyTorch pads CPU constants.
std::vector<uint8_t> blob_bytes() {
  std::vector<uint8_t> b(128, 0);
  const float w[6] = {1, 2, 3, 4, 5, 6}, bias = 0.5f;
  std::memcpy(b.data(), w, sizeof w);
  std::memcpy(b.data() + 64, &bias, sizeof bias);
  return b;
}
// x + sum_k w[k] * (k + 1) + b with the weights above.
constexpr float kWeightsTerm = 91.5f;
// The host memory they take once attached: layer_w at 0, layer_b at the next 256 bytes.
constexpr size_t kAttachedBytes = 256 + 64;

// A temporary file, removed with the object.
struct TempFile {
  std::string path;
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    const char* dir = std::getenv("TEST_TMPDIR");
    path = std::string(dir != nullptr ? dir : "/tmp") + "/weights-XXXXXX";
    const int fd = mkstemp(path.data());
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~TempFile() { unlink(path.c_str()); }
};

std::unique_ptr<Model> load_model(const std::string& name) {
  const std::vector<uint8_t> bytes = test_package(name);
  ModelPackage package;
  EXPECT_EQ(ModelPackage::parse(bytes.data(), bytes.size(), &package), Error::Ok) << last_error_message();
  std::unique_ptr<Model> m;
  EXPECT_EQ(Model::load(package, 0, -1, 1, &m), Error::Ok) << last_error_message();
  return m;
}

// The entries of the blob above, mapped from `file`.
std::vector<ConstantEntry> blob_entries(const Model& m, const std::string& file) {
  std::shared_ptr<MappedFileSource> source;
  EXPECT_EQ(MappedFileSource::open(file, &source), Error::Ok) << last_error_message();
  std::vector<ContainerConstant> constants;
  EXPECT_EQ(m.container_constants(&constants), Error::Ok) << last_error_message();
  std::vector<ConstantEntry> entries;
  EXPECT_EQ(entries_from_blob(constants, {{{2, 3}, {}, 0}, {{1}, {}, 0}}, source, &entries), Error::Ok)
      << last_error_message();
  return entries;
}

float run(Model& m, float x) { return run_test_model(m, x); }

// --- The CPU path end to end ---------------------------------------------------------------

TEST(Constants, ContainerReportsItsConstants) {
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  std::vector<ContainerConstant> c;
  ASSERT_EQ(m->container_constants(&c), Error::Ok) << last_error_message();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].name, "layer_w");
  EXPECT_EQ(c[0].original_fqn, "layer.w");
  EXPECT_EQ(c[0].data_size, 64u);
  EXPECT_EQ(c[0].dtype, 6);
  EXPECT_FALSE(c[0].from_folded);
  EXPECT_TRUE(c[2].from_folded);
}

TEST(Constants, ModelWithoutConstantsApiIsNotSupported) {
  std::unique_ptr<Model> m = load_model("constant_1");
  ASSERT_NE(m, nullptr);
  std::vector<ContainerConstant> c;
  EXPECT_EQ(m->container_constants(&c), Error::NotSupported);
  EXPECT_NE(std::string(last_error_message()).find("constants API"), std::string::npos) << last_error_message();
  EXPECT_EQ(m->attach_constants({}, "", StreamContext::unselected(0)), Error::NotSupported);
}

TEST(Constants, RunWithoutWeightsFailsCleanly) {
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  float x = 1;
  SlimTensor* in = nullptr;
  const int64_t sizes[1] = {1};
  ASSERT_EQ(from_blob(&x, 1, sizes, nullptr, 0, 6, 0, 0, &in), Error::Ok);
  SlimTensor* out = nullptr;
  EXPECT_EQ(m->run(&in, 1, &out, 1, StreamContext::unselected(0)), Error::InvalidProgram);
  delete in;
}

TEST(Constants, BlobFromMappedFileRunsThroughUserManagedPairs) {
  CountingCpu counting;
  TempFile file(blob_bytes());
  {
    std::unique_ptr<Model> m = load_model("weights_pairs");
    ASSERT_NE(m, nullptr);
    const size_t before = counting.live();
    ASSERT_EQ(m->attach_constants(blob_entries(*m, file.path), "weights_pairs", StreamContext::unselected(0)),
              Error::Ok)
        << last_error_message();
    ASSERT_TRUE(m->constants().has_value());
    EXPECT_EQ(m->constants()->path, ConstantsPath::UserManagedPairs);
    EXPECT_FALSE(m->constants()->shared);
    EXPECT_EQ(m->constants()->bytes, kAttachedBytes);
    EXPECT_EQ(counting.live() - before, m->constants()->bytes);
    EXPECT_FLOAT_EQ(run(*m, 1), 1 + kWeightsTerm);
    EXPECT_FLOAT_EQ(run(*m, -2), -2 + kWeightsTerm);
    EXPECT_EQ(m->attach_constants({}, "", StreamContext::unselected(0)), Error::InvalidState);
  }
  EXPECT_EQ(counting.live(), 0u) << "the weights outlived their model";
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
}

TEST(Constants, ContainerThatCopiesGetsThemAndOursAreReleased) {
  CountingCpu counting;
  TempFile file(blob_bytes());
  std::unique_ptr<Model> m = load_model("weights_copy");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->attach_constants(blob_entries(*m, file.path), "weights_copy", StreamContext::unselected(0)), Error::Ok)
      << last_error_message();
  EXPECT_EQ(m->constants()->path, ConstantsPath::ContainerCopy);
  EXPECT_EQ(counting.live(), 0u) << "the container copied: our copy must be gone";
  EXPECT_FLOAT_EQ(run(*m, 1), 1 + kWeightsTerm);
}

TEST(Constants, StridedViewWithStorageOffsetReachesTheModelAsGiven) {
  // layer_w as the transpose of a [3, 2] storage starting 2 elements in: w[i][j] at 2 + i + 2j.
  std::vector<uint8_t> bytes(128, 0);
  const float storage[8] = {-1, -1, 1, 4, 2, 5, 3, 6};  // w = [[1,2,3],[4,5,6]] through the view
  std::memcpy(bytes.data(), storage, sizeof storage);
  const float bias = 0.5f;
  std::memcpy(bytes.data() + 64, &bias, sizeof bias);
  auto source = std::make_shared<MemorySource>(bytes.data(), bytes.size());
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  std::vector<ConstantEntry> entries(2);
  entries[0] = {"layer.w", -1, {2, 3}, {1, 2}, 2, source, 0, 64};  // by FQN
  entries[1] = {"layer_b", 6, {1}, {}, 0, source, 64, 4};
  ASSERT_EQ(m->attach_constants(entries, "", StreamContext::unselected(0)), Error::Ok) << last_error_message();
  EXPECT_FLOAT_EQ(run(*m, 0), kWeightsTerm);
}

TEST(Constants, TwoLoadsShareOneCopyUntilTheLastIsFreed) {
  CountingCpu counting;
  TempFile file(blob_bytes());
  std::unique_ptr<Model> a = load_model("weights_pairs");
  std::unique_ptr<Model> b = load_model("weights_pairs");
  ASSERT_TRUE(a && b);
  const size_t before = counting.live();
  const size_t allocations = counting.allocations();
  ASSERT_EQ(a->attach_constants(blob_entries(*a, file.path), "id", StreamContext::unselected(0)), Error::Ok);
  ASSERT_EQ(b->attach_constants(blob_entries(*b, file.path), "id", StreamContext::unselected(0)), Error::Ok);
  EXPECT_FALSE(a->constants()->shared);
  EXPECT_TRUE(b->constants()->shared);
  EXPECT_EQ(counting.allocations() - allocations, 1u) << "one allocation for both loads";
  EXPECT_EQ(counting.live() - before, kAttachedBytes) << "one copy";
  EXPECT_EQ(WeightsCache::instance().live(), 1u);
  a.reset();
  EXPECT_EQ(counting.live() - before, kAttachedBytes) << "b still uses them";
  EXPECT_FLOAT_EQ(run(*b, 1), 1 + kWeightsTerm);
  b.reset();
  EXPECT_EQ(counting.live(), 0u);
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
}

TEST(Constants, DifferentIdentitiesOrNoIdentityAreNotShared) {
  CountingCpu counting;
  TempFile file(blob_bytes());
  std::unique_ptr<Model> a = load_model("weights_pairs");
  std::unique_ptr<Model> b = load_model("weights_pairs");
  std::unique_ptr<Model> c = load_model("weights_pairs");
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(a->attach_constants(blob_entries(*a, file.path), "one", StreamContext::unselected(0)), Error::Ok);
  ASSERT_EQ(b->attach_constants(blob_entries(*b, file.path), "two", StreamContext::unselected(0)), Error::Ok);
  ASSERT_EQ(c->attach_constants(blob_entries(*c, file.path), "", StreamContext::unselected(0)), Error::Ok);
  EXPECT_FALSE(b->constants()->shared);
  EXPECT_FALSE(c->constants()->shared);
  EXPECT_EQ(counting.live(), 3 * kAttachedBytes);
}

// Eight loads attach at once: one upload (the source is read once per constant), one copy.
TEST(Constants, ConcurrentLoadsUploadOnce) {
  CountingCpu counting;
  auto source = std::make_shared<CountingSource>(blob_bytes(), "counting");
  constexpr int kLoads = 8;
  std::vector<std::unique_ptr<Model>> models(kLoads);
  for (auto& m : models) {
    m = load_model("weights_pairs");
    ASSERT_NE(m, nullptr);
  }
  const size_t before = counting.live();
  std::vector<ConstantEntry> entries(2);
  entries[0] = {"layer_w", -1, {2, 3}, {}, 0, source, 0, 64};
  entries[1] = {"layer_b", -1, {1}, {}, 0, source, 64, 64};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kLoads; ++i) {
    threads.emplace_back([&, i] {
      if (models[i]->attach_constants(entries, "concurrent", StreamContext::unselected(0)) != Error::Ok) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(source->reads(), 2) << "one read per constant: one upload";
  EXPECT_EQ(counting.live() - before, kAttachedBytes);
  int shared = 0;
  for (auto& m : models) {
    shared += m->constants()->shared ? 1 : 0;
    EXPECT_FLOAT_EQ(run(*m, 1), 1 + kWeightsTerm);
  }
  EXPECT_EQ(shared, kLoads - 1);
}

// --- Malformed weights: a clear error, nothing allocated or left behind --------------------

struct BadCase {
  const char* description;
  std::vector<ConstantEntry> (*entries)(const std::shared_ptr<const WeightSource>&);
  const char* message;
};

const BadCase kBadCases[] = {
    {"unknown name",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64},
                                         {"layer_x", -1, {1}, {}, 0, s, 0, 4}};
     },
     "constant 'layer_x' the model does not have"},
    {"missing constant",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 64}};
     },
     "lack constant 'layer_b' (layer.b)"},
    {"given twice (name and FQN)",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer.w", -1, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "given twice"},
    {"dtype other than the model's",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", 5, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "dtype 5 given, the model's is 6"},
    {"sizes whose product overflows",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {int64_t{1} << 40, int64_t{1} << 40}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "overflow"},
    {"strides that overflow",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {3, 3}, {INT64_MAX, 1}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "overflow"},
    {"negative size",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, -3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "sizes [2,-3]"},
    {"view past its bytes",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {5, 4}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "reach 80 bytes; its storage has 64"},
    {"more bytes than the model's constant holds",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 128},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "128 bytes given; the model's constant holds 64"},
    {"bytes past the source's end",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 100, 64}};
     },
     "needs bytes [100, +64) of a weights source of 128 bytes"},
    {"offset so large the end wraps",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, UINT64_MAX - 8, 64}};
     },
     "of a weights source of 128 bytes"},
    {"too many dimensions",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, std::vector<int64_t>(30, 1), {}, 0, s, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "30 dimensions"},
    {"no source",
     [](const std::shared_ptr<const WeightSource>& s) {
       return std::vector<ConstantEntry>{{"layer_w", -1, {2, 3}, {}, 0, nullptr, 0, 64},
                                         {"layer_b", -1, {1}, {}, 0, s, 64, 64}};
     },
     "no source"},
};

TEST(Constants, MalformedWeightsAreInvalidProgramAndAllocateNothing) {
  CountingCpu counting;
  const std::vector<uint8_t> bytes = blob_bytes();
  auto source = std::make_shared<MemorySource>(bytes.data(), bytes.size(), "memory");
  for (const BadCase& c : kBadCases) {
    SCOPED_TRACE(c.description);
    std::unique_ptr<Model> m = load_model("weights_pairs");
    ASSERT_NE(m, nullptr);
    const size_t allocations = counting.allocations();
    EXPECT_EQ(m->attach_constants(c.entries(source), "bad", StreamContext::unselected(0)), Error::InvalidProgram);
    EXPECT_NE(std::string(last_error_message()).find(c.message), std::string::npos) << last_error_message();
    EXPECT_EQ(counting.allocations(), allocations) << "checks come before any allocation";
    EXPECT_FALSE(m->constants().has_value());
  }
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
}

TEST(Constants, BlobShorterThanTheConstantsNeed) {
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  std::vector<uint8_t> bytes = blob_bytes();
  bytes.resize(100);  // layer_b needs [64, 128)
  TempFile file(bytes);
  std::shared_ptr<MappedFileSource> source;
  ASSERT_EQ(MappedFileSource::open(file.path, &source), Error::Ok);
  std::vector<ContainerConstant> constants;
  ASSERT_EQ(m->container_constants(&constants), Error::Ok);
  std::vector<ConstantEntry> entries;
  EXPECT_EQ(entries_from_blob(constants, {{{2, 3}, {}, 0}, {{1}, {}, 0}}, source, &entries), Error::InvalidProgram);
  EXPECT_NE(
      std::string(last_error_message()).find("the weights blob has 100 bytes; constant 'layer_b' needs [64, +64)"),
      std::string::npos)
      << last_error_message();
  // The shapes must match the non-folded constants one to one.
  const std::vector<uint8_t> full = blob_bytes();
  auto whole = std::make_shared<MemorySource>(full.data(), full.size());
  EXPECT_EQ(entries_from_blob(constants, {{{2, 3}, {}, 0}}, whole, &entries), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("1 shapes for more non-folded constants ('layer_b' has none)"),
            std::string::npos)
      << last_error_message();
  EXPECT_EQ(entries_from_blob(constants, {{{2, 3}, {}, 0}, {{1}, {}, 0}, {{1}, {}, 0}}, whole, &entries),
            Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("3 shapes for 2 non-folded constants"), std::string::npos)
      << last_error_message();
}

TEST(Constants, ContainerThatRefusesReleasesTheWeights) {
  CountingCpu counting;
  const std::vector<uint8_t> bytes = blob_bytes();
  auto source = std::make_shared<MemorySource>(bytes.data(), bytes.size(), "memory");
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  // Our checks pass (6 floats fit the 64 bytes); the model wants [2, 3], not [6].
  std::vector<ConstantEntry> entries = {{"layer_w", -1, {6}, {}, 0, source, 0, 64},
                                        {"layer_b", -1, {1}, {}, 0, source, 64, 64}};
  EXPECT_EQ(m->attach_constants(entries, "refused", StreamContext::unselected(0)), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("the container refused its constants"), std::string::npos)
      << last_error_message();
  EXPECT_EQ(counting.live(), 0u);
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
  EXPECT_FALSE(m->constants().has_value());
}

TEST(Constants, FailedReadReleasesTheWeights) {
  CountingCpu counting;
  auto source = std::make_shared<CountingSource>(blob_bytes(), "failing", /*fail_at=*/1);
  std::unique_ptr<Model> m = load_model("weights_pairs");
  ASSERT_NE(m, nullptr);
  std::vector<ConstantEntry> entries = {{"layer_w", -1, {2, 3}, {}, 0, source, 0, 64},
                                        {"layer_b", -1, {1}, {}, 0, source, 64, 64}};
  EXPECT_EQ(m->attach_constants(entries, "failing", StreamContext::unselected(0)), Error::AccessFailed);
  EXPECT_NE(std::string(last_error_message()).find("the disk went away"), std::string::npos) << last_error_message();
  EXPECT_EQ(counting.live(), 0u);
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
}

TEST(Constants, MappedFileErrors) {
  std::shared_ptr<MappedFileSource> s;
  EXPECT_EQ(MappedFileSource::open("/nonexistent/weights.blob", &s), Error::NotFound);
  EXPECT_EQ(MappedFileSource::open("/", &s), Error::InvalidArgument);
  TempFile file(blob_bytes());
  ASSERT_EQ(MappedFileSource::open(file.path, &s), Error::Ok);
  EXPECT_EQ(s->size(), 128u);
  EXPECT_NE(s->view(), nullptr);
  EXPECT_EQ(s->identity().rfind("file:", 0), 0u);
  uint8_t buf[8];
  EXPECT_EQ(s->read(124, 8, buf), Error::InvalidProgram);
  EXPECT_EQ(s->read(UINT64_MAX, 8, buf), Error::InvalidProgram);
  EXPECT_EQ(s->read(64, 4, buf), Error::Ok);
  float b = 0;
  std::memcpy(&b, buf, 4);
  EXPECT_EQ(b, 0.5f);
}

// --- A real PyTorch export ------------------------------------------------------------------

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

// A model exported by PyTorch with package_constants_in_so=False and
// package_constants_on_disk_format="binary_blob", unpacked by
// tools/aoti/export_weights_example.py into $SLIMCUDA_PT2_EXPORT_DIR (the test needs
// PyTorch to make its input, so it runs only where that was done): its library loaded by
// slimcuda, the shapes from the wrapper source, the weights from the mmap'ed blob, the
// output against eager PyTorch's.
TEST(Constants, RealExportWithBinaryBlobMatchesEager) {
  const char* dir_env = std::getenv("SLIMCUDA_PT2_EXPORT_DIR");
  if (dir_env == nullptr || *dir_env == '\0') {
    // The GPU run (tools/gpu/run.sh) makes the export with the machine's PyTorch and sets it:
    // there, its absence is a failure, not a reason to check nothing.
    if (gpu_required()) FAIL() << "SLIMCUDA_REQUIRE_GPU=1 but SLIMCUDA_PT2_EXPORT_DIR is not set";
    GTEST_SKIP() << "needs PyTorch's export: set SLIMCUDA_PT2_EXPORT_DIR (tools/aoti/export_weights_example.py)";
  }
  const std::string dir = dir_env;
  const std::string device_key = read_text(dir + "/device");
  const bool cuda = device_key.rfind("cuda", 0) == 0;
  if (cuda) SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const std::vector<uint8_t> x_bytes = read_bytes(dir + "/x.bin"), y_bytes = read_bytes(dir + "/y.bin");
  ASSERT_EQ(x_bytes.size(), 4u * 16 * 4);
  ASSERT_EQ(y_bytes.size(), 4u * 8 * 4);
  ModelPackage package;
  LibrarySpec lib;
  lib.device_type = cuda ? DeviceType::CUDA : DeviceType::CPU;
  lib.so = read_bytes(dir + "/model.so");
  const Device any{lib.device_type, -1};
  lib.methods.push_back(MethodSpec{"forward",
                                   {TensorSpec{"x", ScalarType::Float, {4, 16}, {}, {}, Dynamism::Static, any}},
                                   {TensorSpec{"y", ScalarType::Float, {4, 8}, {}, {}, Dynamism::Static, any}}});
  package.libraries.push_back(std::move(lib));
  std::unique_ptr<Model> m;
  ASSERT_EQ(Model::load(package, cuda ? 1 : 0, -1, 2, &m), Error::Ok) << last_error_message();

  const std::string wrapper = read_text(dir + "/wrapper.cpp");
  std::vector<WrapperConstant> declared;
  ASSERT_EQ(parse_wrapper_constants(wrapper.data(), wrapper.size(), &declared), Error::Ok) << last_error_message();
  std::vector<ContainerConstant> constants;
  ASSERT_EQ(m->container_constants(&constants), Error::Ok) << last_error_message();
  std::vector<ConstantShape> shapes;
  ASSERT_EQ(blob_shapes(constants, declared, m->device().type, &shapes), Error::Ok) << last_error_message();
  std::shared_ptr<MappedFileSource> blob;
  ASSERT_EQ(MappedFileSource::open(dir + "/weights.blob", &blob), Error::Ok) << last_error_message();
  std::vector<ConstantEntry> entries;
  ASSERT_EQ(entries_from_blob(constants, shapes, blob, &entries), Error::Ok) << last_error_message();
  ASSERT_EQ(m->attach_constants(entries, "real-export", StreamContext::unselected(0)), Error::Ok)
      << last_error_message();
  EXPECT_EQ(m->constants()->path, ConstantsPath::UserManagedPairs);

  std::shared_ptr<Storage> x_storage;
  const Device device = m->device();
  ASSERT_EQ(Storage::allocate(x_bytes.size(), device, StreamContext::unselected(device.index), &x_storage), Error::Ok);
  if (cuda) {
    ASSERT_EQ(cudaMemcpy(x_storage->data(), x_bytes.data(), x_bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  } else {
    std::memcpy(x_storage->data(), x_bytes.data(), x_bytes.size());
  }
  SlimTensor x(x_storage, {4, 16}, {16, 1}, ScalarType::Float, 0);
  SlimTensor* in = &x;
  for (int round = 0; round < 2; ++round) {  // the second run after the container's constant folding
    SlimTensor* out = nullptr;
    ASSERT_EQ(m->run(&in, 1, &out, 1, StreamContext::unselected(device.index)), Error::Ok) << last_error_message();
    std::vector<float> y(32), want(32);
    if (cuda) {
      ASSERT_EQ(cudaMemcpy(y.data(), out->data_ptr(), 128, cudaMemcpyDeviceToHost), cudaSuccess);
    } else {
      std::memcpy(y.data(), out->data_ptr(), 128);
    }
    std::memcpy(want.data(), y_bytes.data(), 128);
    for (int i = 0; i < 32; ++i) EXPECT_NEAR(y[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << i;
    delete out;
  }
}

// --- The CUDA path, against an in-process container ----------------------------------------

// A container of three float32 constants whose sizes the test picks; it keeps the tensors
// it is given (user-managed), as AOTInductor's does.
struct FakeContainer {
  std::vector<ContainerConstant> constants;
  std::map<std::string, void*> given;
};
FakeContainer* g_fake = nullptr;

int32_t fake_count(void*, size_t* n) {
  *n = g_fake->constants.size();
  return 0;
}
int32_t fake_name(void*, size_t i, const char** s) {
  *s = g_fake->constants[i].name.c_str();
  return 0;
}
int32_t fake_dtype(void*, size_t i, int32_t* d) {
  *d = g_fake->constants[i].dtype;
  return 0;
}
int32_t fake_size(void*, size_t i, size_t* n) {
  *n = static_cast<size_t>(g_fake->constants[i].data_size);
  return 0;
}
int32_t fake_pairs(void*, const ContainerConstantsApi::Pair* pairs, size_t n, bool, bool) {
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<SlimTensor*>(pairs[i].handle)->device().type != DeviceType::CUDA) return 1;
    g_fake->given[pairs[i].name] = pairs[i].handle;
  }
  return 0;
}

ContainerConstantsApi fake_api() {
  ContainerConstantsApi api;
  api.num_constants = fake_count;
  api.name = fake_name;
  api.dtype = fake_dtype;
  api.data_size = fake_size;
  api.update_user_managed_pairs = fake_pairs;
  return api;
}

class CudaConstants : public ::testing::Test {
 protected:
  void SetUp() override {
    SLIMCUDA_REQUIRE_GPU_OR_SKIP();
    g_fake = &fake_;
  }
  void TearDown() override { g_fake = nullptr; }

  // Constants of these byte sizes (float32, 1-D), their bytes a pattern from `seed`.
  void make(const std::vector<uint64_t>& sizes, std::vector<uint8_t>* bytes, std::vector<ConstantEntry>* entries,
            bool with_view, const std::string& identity) {
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    // A pattern that differs at every byte of a 1 MiB block, and every 4 KiB page starting
    // with its own page number: a byte that lands in the wrong place shows (filled by
    // blocks, so 4.5 GiB take a moment, not a minute).
    bytes->resize(total);
    std::vector<uint8_t> block(size_t{1} << 20);
    for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    for (uint64_t at = 0; at < total; at += block.size()) {
      std::memcpy(bytes->data() + at, block.data(), static_cast<size_t>(std::min<uint64_t>(block.size(), total - at)));
    }
    for (uint64_t page = 0; page * 4096 + 8 <= total; ++page) std::memcpy(bytes->data() + page * 4096, &page, 8);
    source_ = std::make_shared<MemorySource>(bytes->data(), total, identity, with_view);
    uint64_t offset = 0;
    fake_.constants.clear();
    entries->clear();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string name = "c" + std::to_string(i);
      fake_.constants.push_back({name, "", false, 6, sizes[i]});
      entries->push_back({name, -1, {static_cast<int64_t>(sizes[i] / 4)}, {}, 0, source_, offset, sizes[i]});
      offset += sizes[i];
    }
  }

  // Every constant's device bytes equal its source bytes (`stride`: check every n-th byte).
  void expect_on_device(const std::vector<uint8_t>& bytes, const std::vector<ConstantEntry>& entries,
                        uint64_t stride = 1) {
    for (const ConstantEntry& e : entries) {
      auto* t = static_cast<SlimTensor*>(fake_.given[e.name]);
      ASSERT_NE(t, nullptr) << e.name;
      std::vector<uint8_t> back(static_cast<size_t>(e.nbytes));
      ASSERT_EQ(cudaMemcpy(back.data(), t->data_ptr(), back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      for (uint64_t i = 0; i < e.nbytes; i += stride) {
        ASSERT_EQ(back[i], bytes[e.source_offset + i]) << e.name << " byte " << i;
      }
      ASSERT_EQ(back[e.nbytes - 1], bytes[e.source_offset + e.nbytes - 1]) << e.name;
    }
  }

  FakeContainer fake_;
  std::shared_ptr<MemorySource> source_;
  int dummy_ = 0;  // a non-null container handle
};

TEST_F(CudaConstants, UploadOnTheCallerStreamLandsAndStatsShowOneCopy) {
  device_memory::empty_cache(0);
  const uint64_t base = device_memory::stats(0).allocated_bytes;
  std::vector<uint8_t> bytes;
  std::vector<ConstantEntry> entries;
  // Small and large constants, odd sizes: they share chunks, and one spans many.
  make({4, 1020, 12, (uint64_t{37} << 20) + 12, 256, (uint64_t{5} << 20) + 4}, &bytes, &entries, true, "pattern");
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const ContainerConstantsApi api = fake_api();
  AttachedConstants first, second;
  ASSERT_EQ(attach_constants(api, &dummy_, Device{DeviceType::CUDA, 0}, "fake", entries,
                             StreamContext::selected(stream, 0), nullptr, &first),
            Error::Ok)
      << last_error_message();
  expect_on_device(bytes, entries);
  const uint64_t one = device_memory::stats(0).allocated_bytes - base;
  EXPECT_GE(one, first.bytes);
  EXPECT_GE(first.bytes, bytes.size());
  ASSERT_EQ(attach_constants(api, &dummy_, Device{DeviceType::CUDA, 0}, "fake", entries,
                             StreamContext::selected(stream, 0), nullptr, &second),
            Error::Ok)
      << last_error_message();
  EXPECT_TRUE(second.shared);
  EXPECT_EQ(device_memory::stats(0).allocated_bytes - base, one) << "the second load holds no second copy";
  first.keep_alive.reset();
  EXPECT_EQ(device_memory::stats(0).allocated_bytes - base, one);
  second.keep_alive.reset();
  EXPECT_EQ(device_memory::stats(0).allocated_bytes, base) << "released with the last user";
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudaConstants, UploadWithoutViewReadsThroughTheSourceOnTheModelStream) {
  std::vector<uint8_t> bytes;
  std::vector<ConstantEntry> entries;
  make({(uint64_t{9} << 20) + 8, 4, (uint64_t{3} << 20)}, &bytes, &entries, false, "");
  cudaStream_t model_stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&model_stream, cudaStreamNonBlocking), cudaSuccess);
  AttachedConstants out;
  ASSERT_EQ(attach_constants(fake_api(), &dummy_, Device{DeviceType::CUDA, 0}, "fake", entries,
                             StreamContext::unselected(0), model_stream, &out),
            Error::Ok)
      << last_error_message();
  EXPECT_FALSE(out.shared);
  expect_on_device(bytes, entries);
  out.keep_alive.reset();
  EXPECT_EQ(cudaStreamDestroy(model_stream), cudaSuccess);
}

TEST_F(CudaConstants, FailedUploadLeavesNoDeviceMemory) {
  const uint64_t base = device_memory::stats(0).allocated_bytes;
  std::vector<uint8_t> bytes(size_t{20} << 20);
  auto failing = std::make_shared<CountingSource>(bytes, "failing-gpu", /*fail_at=*/2);
  fake_.constants = {{"a", "", false, 6, uint64_t{8} << 20}, {"b", "", false, 6, uint64_t{12} << 20}};
  std::vector<ConstantEntry> entries = {
      {"a", -1, {int64_t{2} << 20}, {}, 0, failing, 0, uint64_t{8} << 20},
      {"b", -1, {int64_t{3} << 20}, {}, 0, failing, uint64_t{8} << 20, uint64_t{12} << 20}};
  AttachedConstants out;
  EXPECT_EQ(attach_constants(fake_api(), &dummy_, Device{DeviceType::CUDA, 0}, "fake", entries,
                             StreamContext::unselected(0), nullptr, &out),
            Error::AccessFailed);
  EXPECT_NE(std::string(last_error_message()).find("the disk went away"), std::string::npos) << last_error_message();
  EXPECT_EQ(device_memory::stats(0).allocated_bytes, base);
  EXPECT_EQ(WeightsCache::instance().live(), 0u);
}

// Freeing a model's device weights synchronizes the device (runs may still read them); a
// device-wide synchronize while another thread captures a CUDA graph would invalidate that
// capture, so the free waits for the capture to end (the pools hold back the same way).
TEST_F(CudaConstants, FreeingWeightsWaitsForAnotherThreadsCapture) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const StreamContext ctx = StreamContext::selected(stream, 0);
  std::shared_ptr<Storage> weights_memory, scratch;
  ASSERT_EQ(Storage::allocate(1 << 20, Device{DeviceType::CUDA, 0}, ctx, &weights_memory), Error::Ok);
  ASSERT_EQ(Storage::allocate(1 << 20, Device{DeviceType::CUDA, 0}, ctx, &scratch), Error::Ok);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  auto weights = std::make_shared<DeviceWeights>(std::move(weights_memory), std::vector<std::string>{},
                                                 std::vector<std::unique_ptr<SlimTensor>>{});
  std::atomic<bool> freed{false};
  std::thread freer;
  cudaError_t ended = cudaErrorUnknown;
  {
    const cuda::CapturingStream capturing(stream, 0);
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(scratch->data(), 0, 1 << 20, stream), cudaSuccess);
    const uint64_t held_back = cuda::synchronizations_held_back();
    freer = std::thread([&] {
      weights.reset();  // the last reference: ~DeviceWeights
      freed = true;
    });
    // Until the free has been held back by this capture (or, wrongly, has happened); the
    // deadline only catches a hang.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (cuda::synchronizations_held_back() == held_back && !freed.load() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_GT(cuda::synchronizations_held_back(), held_back) << "the free never waited for the capture";
    EXPECT_FALSE(freed.load()) << "the weights were freed (a device-wide synchronize) during the capture";
    cudaGraph_t graph = nullptr;
    ended = cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) {
      EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    }
  }
  freer.join();
  EXPECT_EQ(ended, cudaSuccess) << "the capture was invalidated: " << cudaGetErrorName(ended);
  EXPECT_TRUE(freed.load());
  (void)cudaGetLastError();
  scratch.reset();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudaConstants, CallerStreamOfAnotherDeviceIsRefused) {
  std::vector<uint8_t> bytes;
  std::vector<ConstantEntry> entries;
  make({64}, &bytes, &entries, true, "");
  AttachedConstants out;
  EXPECT_EQ(attach_constants(fake_api(), &dummy_, Device{DeviceType::CUDA, 0}, "", entries,
                             StreamContext::selected(reinterpret_cast<cudaStream_t>(0x10), 1), nullptr, &out),
            Error::InvalidArgument);
}

// More than 4 GiB in one constant and in total: 64-bit sizes all the way down.
TEST_F(CudaConstants, MoreThanFourGiB) {
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const uint64_t big = (uint64_t{9} << 29) + 20;  // 4.5 GiB + 20 bytes
  if (free_bytes < big + (uint64_t{1} << 30)) GTEST_SKIP() << "needs 5.5 GiB of free device memory";
  std::vector<uint8_t> bytes;
  std::vector<ConstantEntry> entries;
  make({64, big}, &bytes, &entries, true, "");
  AttachedConstants out;
  ASSERT_EQ(attach_constants(fake_api(), &dummy_, Device{DeviceType::CUDA, 0}, "", entries,
                             StreamContext::unselected(0), nullptr, &out),
            Error::Ok)
      << last_error_message();
  expect_on_device(bytes, entries, /*stride=*/4099);
}

}  // namespace
}  // namespace slimcuda::testing
