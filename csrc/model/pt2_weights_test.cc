// SPDX-License-Identifier: Apache-2.0
// The .pt2 loader's weights wiring (attach_pt2_weights) on the CPU, against the real
// exports of testdata/pt2/: what each format gives (binary_blob, pickle_weights, in the
// library, none), that two loads of one archive share one
// copy (from a file and from memory), and the wrapper source's include_weights flag.
// The C ABI's view of the same archives: csrc/c_api/pt2_load_test.cc.
#include "csrc/model/pt2_weights.h"

#include <atomic>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/memory/device_allocator.h"
#include "csrc/model/weights_cache.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

std::string pt2(const std::string& name) { return fixture_relative("pt2.json", "pt2/" + name); }

// The bytes the CPU allocator hands out while it lives (the weights' host memory of a CPU
// model), forwarding to the real one.
class CpuBytes final : public DeviceAllocator {
 public:
  CpuBytes() : inner_(get_device_allocator(DeviceType::CPU)) { register_device_allocator(this); }
  ~CpuBytes() override { register_device_allocator(inner_); }
  CpuBytes(const CpuBytes&) = delete;
  CpuBytes& operator=(const CpuBytes&) = delete;

  Result<void*> allocate(size_t nbytes, size_t alignment, const StreamContext& ctx) noexcept override {
    Result<void*> r = inner_->allocate(nbytes, alignment, ctx);
    if (r.ok()) allocated_ += nbytes;
    return r;
  }
  Error deallocate(void* ptr, int device) noexcept override { return inner_->deallocate(ptr, device); }
  Error copy_host_to_device(void* d, const void* s, size_t n, const StreamContext& c) noexcept override {
    return inner_->copy_host_to_device(d, s, n, c);
  }
  Error copy_device_to_host(void* d, const void* s, size_t n, const StreamContext& c) noexcept override {
    return inner_->copy_device_to_host(d, s, n, c);
  }
  DeviceType device_type() const noexcept override { return DeviceType::CPU; }
  size_t allocated() const noexcept { return allocated_.load(); }

 private:
  DeviceAllocator* inner_;
  std::atomic<size_t> allocated_{0};
};

// One archive's model loaded (not run) and its weights attached.
struct Loaded {
  std::unique_ptr<Pt2Archive> archive;
  std::unique_ptr<Model> model;
  Pt2WeightsFormat format = Pt2WeightsFormat::InLibrary;
};

Error load(std::unique_ptr<Pt2Archive> archive, Loaded* out) {
  Pt2Model pm;
  SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(*archive, nullptr, &pm));
  ArchiveSpan so;
  SLIMCUDA_RETURN_IF_ERROR(archive->view(*pm.library, &so));
  SLIMCUDA_RETURN_IF_ERROR(
      Model::load_library(so.data, so.size, DeviceType::CPU, -1, 1, nullptr, nullptr, &out->model));
  const Error e = attach_pt2_weights(*archive, pm, nullptr, "hash-of-the-library", out->model.get(),
                                     StreamContext::unselected(-1), &out->format);
  out->archive = std::move(archive);
  return e;
}

Error load_file(const std::string& name, Loaded* out) {
  std::unique_ptr<Pt2Archive> archive;
  SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open(pt2(name).c_str(), &archive));
  return load(std::move(archive), out);
}

TEST(Pt2Weights, BinaryBlobIsAttachedFromTheArchive) {
  Loaded l;
  ASSERT_EQ(load_file("weights_blob_linear.pt2", &l), Error::Ok) << last_error_message();
  EXPECT_EQ(l.format, Pt2WeightsFormat::BinaryBlob);
  ASSERT_TRUE(l.model->constants().has_value());
  EXPECT_EQ(l.model->constants()->path, ConstantsPath::UserManagedPairs) << "PyTorch 2.11's libraries have Pairs";
  EXPECT_FALSE(l.model->constants()->shared);
  EXPECT_GE(l.model->constants()->bytes, 48u) << "linear.weight: 3 x 4 float32";
}

// pickle_weights: the storage of data/weights/weight_0 (a torch.save zip inside the
// archive) in place; a second load shares it, from a file and from memory.
TEST(Pt2Weights, PickleWeightsAreAttachedFromTheArchive) {
  Loaded a, b;
  ASSERT_EQ(load_file("weights_pickle_linear.pt2", &a), Error::Ok) << last_error_message();
  EXPECT_EQ(a.format, Pt2WeightsFormat::PickleWeights);
  ASSERT_TRUE(a.model->constants().has_value());
  EXPECT_FALSE(a.model->constants()->shared);
  EXPECT_GE(a.model->constants()->bytes, 48u);
  ASSERT_EQ(load_file("weights_pickle_linear.pt2", &b), Error::Ok) << last_error_message();
  EXPECT_TRUE(b.model->constants()->shared);
  const std::vector<uint8_t> bytes = read_bytes(pt2("weights_pickle_linear.pt2"));
  Loaded c, d;
  std::unique_ptr<Pt2Archive> first, second;
  ASSERT_EQ(Pt2Archive::open_memory(bytes.data(), bytes.size(), &first), Error::Ok);
  ASSERT_EQ(Pt2Archive::open_memory(bytes.data(), bytes.size(), &second), Error::Ok);
  ASSERT_EQ(load(std::move(first), &c), Error::Ok) << last_error_message();
  ASSERT_EQ(load(std::move(second), &d), Error::Ok) << last_error_message();
  EXPECT_FALSE(c.model->constants()->shared) << "a memory archive's identity is not the file's";
  EXPECT_TRUE(d.model->constants()->shared);
}

TEST(Pt2Weights, WeightsInTheLibraryNeedNothing) {
  Loaded l;
  ASSERT_EQ(load_file("real_cpu_linear.pt2", &l), Error::Ok) << last_error_message();
  EXPECT_EQ(l.format, Pt2WeightsFormat::InLibrary);
  EXPECT_FALSE(l.model->constants().has_value());
}

TEST(Pt2Weights, NoWeightsAnywhereIsRefused) {
  Loaded l;
  EXPECT_EQ(load_file("no_weights_linear.pt2", &l), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("package_constants_in_so=False"), std::string::npos)
      << last_error_message();
  EXPECT_EQ(l.format, Pt2WeightsFormat::None);
}

// Two loads of one file, then of the same bytes from memory: one copy each way (the file's
// identity, then the blob's hash); a third load after both are gone uploads again.
TEST(Pt2Weights, TwoLoadsShareOneCopy) {
  const size_t live = WeightsCache::instance().live();
  {
    CpuBytes bytes;
    Loaded a, b;
    ASSERT_EQ(load_file("weights_blob_linear.pt2", &a), Error::Ok) << last_error_message();
    const size_t one = bytes.allocated();
    ASSERT_EQ(load_file("weights_blob_linear.pt2", &b), Error::Ok) << last_error_message();
    EXPECT_FALSE(a.model->constants()->shared);
    EXPECT_TRUE(b.model->constants()->shared) << "the second load of one file shares the first's weights";
    EXPECT_GE(one, a.model->constants()->bytes) << "the first load allocated the weights";
    EXPECT_EQ(bytes.allocated(), one) << "the second allocated nothing";
    EXPECT_EQ(WeightsCache::instance().live(), live + 1);
  }
  EXPECT_EQ(WeightsCache::instance().live(), live) << "gone with the last model";
  const std::vector<uint8_t> bytes = read_bytes(pt2("weights_blob_linear.pt2"));
  const std::vector<uint8_t> copy = bytes;  // other memory, the same bytes
  Loaded a, b;
  std::unique_ptr<Pt2Archive> first, second;
  ASSERT_EQ(Pt2Archive::open_memory(bytes.data(), bytes.size(), &first), Error::Ok);
  ASSERT_EQ(Pt2Archive::open_memory(copy.data(), copy.size(), &second), Error::Ok);
  EXPECT_TRUE(first->identity().empty()) << "bytes in memory have no file to name them";
  ASSERT_EQ(load(std::move(first), &a), Error::Ok) << last_error_message();
  ASSERT_EQ(load(std::move(second), &b), Error::Ok) << last_error_message();
  EXPECT_FALSE(a.model->constants()->shared);
  EXPECT_TRUE(b.model->constants()->shared) << "the same blob bytes in memory: shared by their hash";
}

// Another model's library (another hash) over the same blob bytes is another key.
TEST(Pt2Weights, AnotherLibraryHashIsNotShared) {
  Loaded a;
  ASSERT_EQ(load_file("weights_blob_linear.pt2", &a), Error::Ok) << last_error_message();
  std::unique_ptr<Pt2Archive> archive;
  ASSERT_EQ(Pt2Archive::open(pt2("weights_blob_linear.pt2").c_str(), &archive), Error::Ok);
  Pt2Model pm;
  ASSERT_EQ(find_pt2_model(*archive, nullptr, &pm), Error::Ok);
  ArchiveSpan so;
  ASSERT_EQ(archive->view(*pm.library, &so), Error::Ok);
  std::unique_ptr<Model> other;
  ASSERT_EQ(Model::load_library(so.data, so.size, DeviceType::CPU, -1, 1, nullptr, nullptr, &other), Error::Ok);
  ASSERT_EQ(
      attach_pt2_weights(*archive, pm, nullptr, "another-hash", other.get(), StreamContext::unselected(-1), nullptr),
      Error::Ok)
      << last_error_message();
  EXPECT_FALSE(other->constants()->shared);
}

// A mapped file is named by its device, inode, size and modification time: two files of
// the same bytes are two names (two copies), one file opened twice is one.
TEST(Pt2Weights, ArchiveIdentityNamesTheFile) {
  std::unique_ptr<Pt2Archive> a, b, other;
  ASSERT_EQ(Pt2Archive::open(pt2("weights_blob_linear.pt2").c_str(), &a), Error::Ok);
  ASSERT_EQ(Pt2Archive::open(pt2("weights_blob_linear.pt2").c_str(), &b), Error::Ok);
  ASSERT_EQ(Pt2Archive::open(pt2("real_cpu_linear.pt2").c_str(), &other), Error::Ok);
  EXPECT_EQ(a->identity().rfind("file:", 0), 0u) << a->identity();
  EXPECT_EQ(a->identity(), b->identity());
  EXPECT_NE(a->identity(), other->identity());
}

TEST(Pt2Weights, ArchiveEntrySourceReadsOnlyItsBytes) {
  const uint8_t bytes[4] = {1, 2, 3, 4};
  const ArchiveEntrySource source(ArchiveSpan{bytes, sizeof bytes}, "id");
  uint8_t out[4] = {};
  EXPECT_EQ(source.read(1, 3, out), Error::Ok);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[2], 4);
  EXPECT_EQ(source.read(2, 3, out), Error::InvalidProgram);
  EXPECT_EQ(source.read(~uint64_t{0}, 2, out), Error::InvalidProgram) << "an offset that wraps";
  EXPECT_EQ(source.view(), bytes);
  EXPECT_EQ(source.identity(), "id");
}

TEST(Pt2Weights, WrapperIncludesWeights) {
  const char* kCtor =
      "AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,\n"
      "                                   std::optional<std::string> cubin_dir)\n"
      "    : AOTInductorModelBase(2,\n 1,\n 1,\n device_str,\n std::move(cubin_dir),\n %s) {\n";
  char text[512];
  std::snprintf(text, sizeof text, kCtor, "false");
  EXPECT_EQ(wrapper_includes_weights(text), std::optional<bool>(false));
  std::snprintf(text, sizeof text, kCtor, "true");
  EXPECT_EQ(wrapper_includes_weights(text), std::optional<bool>(true));
  std::snprintf(text, sizeof text, kCtor, "maybe");
  EXPECT_EQ(wrapper_includes_weights(text), std::nullopt);
  EXPECT_EQ(wrapper_includes_weights(""), std::nullopt);
  EXPECT_EQ(wrapper_includes_weights("AOTInductorModel::AOTInductorModel( : AOTInductorModelBase(1, (2"), std::nullopt)
      << "unbalanced";
}

}  // namespace
}  // namespace slimcuda::testing
