// SPDX-License-Identifier: Apache-2.0
// A model's state (state.h): which constants the wrapper source proves read-only, and the
// CPU test models of models/testing/stateful_model.cc end to end — each load its own state
// (also when two loads share the weights uploaded from one archive), reset, reading and
// writing constants by name, the one-instance rule, and a library that keeps its state
// where slimcuda cannot reach it. The CUDA side (graphs, a real decoder) is
// csrc/c_api/decode_test.cc.
#include "csrc/model/state.h"

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/model/model.h"
#include "csrc/model/test_run.h"
#include "csrc/package/model_package.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

// The shapes PyTorch 2.11 emits, as measured on the H200 (docs/state.md): launcher
// definitions, a cache written by a kernel (out_ptr0) and read by attention, tables read by
// kernels, weights read by mm_out through views, a buffer kept as a view in a variable.
constexpr const char* kWrapper = R"src(
template <typename in_ptr0_type_, typename in_ptr1_type_, typename out_ptr0_type_, typename kernels_type_>
static inline void call_triton_poi_fused_index_copy_1(
    const in_ptr0_type_& in_ptr0,
    const in_ptr1_type_& in_ptr1,
    const out_ptr0_type_& out_ptr0,
    int64_t xnumel,
    int32_t device_idx_) {
    /* def triton_poi_fused_index_copy_1(in_ptr0, in_ptr1, out_ptr0, xnumel):
         tl.store(out_ptr0 + x0, tmp0)  # k_cache rope_cos */
}
template <typename in_out_ptr0_type_, typename in_ptr0_type_, typename kernels_type_>
static inline void call_triton_poi_fused_add_2(
    const in_out_ptr0_type_& in_out_ptr0,
    const in_ptr0_type_& in_ptr0,
    int64_t xnumel) {
}
AOTInductorModel::AOTInductorModel() {
    constants_info_[1].name = "rope_cos";
    constants_info_[1].original_fqn = "rope_cos";
}
void AOTInductorModel::run_impl(AtenTensorHandle* input_handles) {
    [[maybe_unused]] auto& qkv_weight = constants_->at(0);
    [[maybe_unused]] auto& rope_cos = constants_->at(1);
    [[maybe_unused]] auto& k_cache = constants_->at(2);
    [[maybe_unused]] auto& counter = constants_->at(3);
    [[maybe_unused]] auto& aliased = constants_->at(4);
    [[maybe_unused]] auto& unused_table = constants_->at(5);
    // Topologically Sorted Source Nodes: [k_cache, counter, aliased]
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_mm_out(buf2, wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(buf1, 2, a, b, 0L)), wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(qkv_weight, 2, c, d, 0L))));
    call_triton_poi_fused_index_copy_1(rope_cos, buf2, k_cache, 128L, this->device_idx_);
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda__scaled_dot_product_cudnn_attention(buf5, k_cache, k_cache, nullptr, &buf8_handle));
    call_triton_poi_fused_add_2(counter, rope_cos, 4L);
    auto buf9 = wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(aliased, 1, e, f, 0L));
    AOTI_TORCH_WARN("counter and aliased are fine in a string");
}
)src";

TEST(State, WrapperProvesOnlyReads) {
  const std::set<std::string> proven = wrapper_read_only_constants(kWrapper);
  // Read by mm_out after its result, and by a kernel's in_ptr: read-only (its name in the
  // constructor's string literals is no use of it).
  EXPECT_EQ(proven.count("qkv_weight"), 1u);
  EXPECT_EQ(proven.count("rope_cos"), 1u);
  // Never used in the run: nothing writes it.
  EXPECT_EQ(proven.count("unused_table"), 1u);
  // A kernel's out_ptr0 (attention reading it too changes nothing), an in_out_ptr, a view
  // kept in a variable: not proven.
  EXPECT_EQ(proven.count("k_cache"), 0u);
  EXPECT_EQ(proven.count("counter"), 0u);
  EXPECT_EQ(proven.count("aliased"), 0u);
  EXPECT_EQ(proven.size(), 3u);
}

TEST(State, CpuKernelConstPointersAreReads) {
  const std::set<std::string> proven = wrapper_read_only_constants(R"src(
    [[maybe_unused]] auto& bn_mean = constants_->at(0);
    [[maybe_unused]] auto& running = constants_->at(1);
    cpp_fused_0((const float*)(bn_mean.data_ptr()), (float*)(buf0.data_ptr()));
    cpp_fused_1((const float*)(buf0.data_ptr()), (float*)(running.data_ptr()));
)src");
  EXPECT_EQ(proven, std::set<std::string>{"bn_mean"});
}

TEST(State, KindsAndProofDecide) {
  const std::set<std::string> proven = {"rope_cos"};
  ContainerConstant c;
  c.name = "w";
  c.kind = ConstantKind::Parameter;
  EXPECT_FALSE(is_state(c, nullptr));
  c.kind = ConstantKind::Folded;
  EXPECT_FALSE(is_state(c, nullptr));
  c.kind = ConstantKind::Buffer;
  EXPECT_TRUE(is_state(c, nullptr)) << "a buffer nothing proves read-only is state";
  EXPECT_TRUE(is_state(c, &proven));
  c.name = "rope_cos";
  EXPECT_FALSE(is_state(c, &proven));
  c.kind = ConstantKind::Unknown;
  EXPECT_TRUE(is_state(c, nullptr));
  c.from_folded = true;
  EXPECT_FALSE(is_state(c, nullptr));
}

std::unique_ptr<Model> load(const std::string& name, int instances, Error want = Error::Ok) {
  const std::vector<uint8_t> bytes = read_bytes(test_package_path(name));
  ModelPackage package;
  EXPECT_EQ(ModelPackage::parse(bytes.data(), bytes.size(), &package), Error::Ok) << last_error_message();
  std::unique_ptr<Model> m;
  EXPECT_EQ(Model::load(package, 0, -1, instances, &m), want) << last_error_message();
  return m;
}

float run(Model& m, float x) { return run_test_model(m, x); }

// y after a run adding x to a counter that was c: (c + x) * 2 + 1.
constexpr float after(float c, float x) { return (c + x) * 2 + 1; }

TEST(State, PackageModelFindsItsState) {
  std::unique_ptr<Model> m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->stateful());
  EXPECT_EQ(m->instances(), 1) << "a model with state runs one call at a time";
  const auto& t = m->constants_table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].info.name, "scale");
  EXPECT_EQ(t[0].info.kind, ConstantKind::Parameter);
  EXPECT_FALSE(t[0].state);
  EXPECT_TRUE(t[1].state) << "counter";
  EXPECT_TRUE(t[2].state) << "a package has no wrapper source: an unproven buffer is state";
  for (const auto& c : t) ASSERT_NE(c.tensor, nullptr) << c.info.name;
  EXPECT_EQ(t[1].tensor->sizes(), std::vector<int64_t>{1});
  EXPECT_EQ(after(10, 1), run(*m, 1));
  EXPECT_EQ(after(11, 2), run(*m, 2));
}

TEST(State, StatelessModelsKeepTheirInstances) {
  std::unique_ptr<Model> m = load("weights_pairs", 4);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->stateful());
  EXPECT_EQ(m->instances(), 4);
  EXPECT_EQ(m->reset_state(StreamContext::unselected(0)), Error::Ok) << "nothing to reset";
}

TEST(State, MoreInstancesThanOneAreRefused) {
  std::unique_ptr<Model> m = load("stateful", 4, Error::InvalidArgument);
  EXPECT_EQ(m, nullptr);
  const std::string why = last_error_message();
  EXPECT_NE(why.find("'counter'"), std::string::npos) << why;
  EXPECT_NE(why.find("4 instances"), std::string::npos) << why;
  EXPECT_NE(load("stateful", 1), nullptr);
}

TEST(State, ResetReadAndWrite) {
  std::unique_ptr<Model> m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  const StreamContext cpu = StreamContext::unselected(0);
  EXPECT_EQ(after(10, 3), run(*m, 3));
  float v = 0;
  const int64_t one[1] = {1};
  SlimTensor* dst = nullptr;
  ASSERT_EQ(from_blob(&v, 1, one, nullptr, 0, 6, 0, 0, &dst), Error::Ok);
  std::unique_ptr<SlimTensor> owned(dst);
  ASSERT_EQ(m->read_constant("counter", *dst, cpu), Error::Ok) << last_error_message();
  EXPECT_EQ(v, 13);
  ASSERT_EQ(m->reset_state(cpu), Error::Ok) << last_error_message();
  ASSERT_EQ(m->read_constant("counter", *dst, cpu), Error::Ok);
  EXPECT_EQ(v, 10) << "reset puts the state back to its value at load";
  EXPECT_EQ(after(10, 3), run(*m, 3)) << "the same answer again after a reset";
  v = 100;
  ASSERT_EQ(m->write_constant("counter", *dst, cpu), Error::Ok) << last_error_message();
  EXPECT_EQ(after(100, 1), run(*m, 1));
  // Weights are read-only; names must exist; sizes must match.
  EXPECT_EQ(m->write_constant("scale", *dst, cpu), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("read-only parameter"), std::string::npos) << last_error_message();
  EXPECT_EQ(m->write_constant("nope", *dst, cpu), Error::NotFound);
  EXPECT_EQ(m->read_constant(nullptr, *dst, cpu), Error::NotFound);
  ASSERT_EQ(m->read_constant("scale", *dst, cpu), Error::Ok);
  EXPECT_EQ(v, 2);
  EXPECT_EQ(m->read_constant("table", *dst, cpu), Error::InvalidArgument) << "table is [2]";
  EXPECT_EQ(after(101, 1), run(*m, 1)) << "failed calls changed nothing";
}

TEST(State, TwoLoadsNeverSeeEachOthersWrites) {
  std::unique_ptr<Model> a = load("stateful", 0), b = load("stateful", 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(after(10, 1), run(*a, 1));
  EXPECT_EQ(after(10, 5), run(*b, 5));
  EXPECT_EQ(after(11, 1), run(*a, 1));
  ASSERT_EQ(b->reset_state(StreamContext::unselected(0)), Error::Ok);
  EXPECT_EQ(after(12, 1), run(*a, 1)) << "b's reset is b's";
  EXPECT_EQ(after(10, 1), run(*b, 1));
}

// The archive's path: two loads of one model share the weights uploaded once (one
// identity, one source), and each still has its own state. Before state was a part of
// the runtime, the second load's runs wrote the first one's counter.
class BytesSource final : public WeightSource {
 public:
  explicit BytesSource(std::vector<uint8_t> b) : bytes_(std::move(b)) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  const uint8_t* view() const noexcept override { return bytes_.data(); }
  std::string identity() const override { return "state_test:blob"; }
  Error read(uint64_t offset, size_t n, void* dst) const noexcept override {
    std::memcpy(dst, bytes_.data() + offset, n);
    return Error::Ok;
  }

 private:
  std::vector<uint8_t> bytes_;
};

std::unique_ptr<Model> load_archive_like(const std::shared_ptr<const WeightSource>& blob) {
  const std::vector<uint8_t> bytes = read_bytes(test_package_path("stateful_archive"));
  ModelPackage package;
  EXPECT_EQ(ModelPackage::parse(bytes.data(), bytes.size(), &package), Error::Ok);
  const LibrarySpec* lib = package.library(DeviceType::CPU);
  EXPECT_NE(lib, nullptr);
  if (lib == nullptr) return nullptr;
  std::unique_ptr<Model> m;
  EXPECT_EQ(Model::load_library(lib->so.data(), lib->so.size(), DeviceType::CPU, -1, 0, &lib->methods[0], nullptr, &m),
            Error::Ok)
      << last_error_message();
  if (m == nullptr) return nullptr;
  std::vector<ContainerConstant> constants;
  EXPECT_EQ(m->container_constants(&constants), Error::Ok);
  std::vector<ConstantEntry> entries;
  EXPECT_EQ(entries_from_blob(constants, {{{1}, {}, 0}, {{1}, {}, 0}, {{2}, {}, 0}}, blob, &entries), Error::Ok)
      << last_error_message();
  EXPECT_EQ(m->attach_constants(entries, "state_test:model", StreamContext::unselected(0)), Error::Ok)
      << last_error_message();
  EXPECT_EQ(m->prepare_state(nullptr, StreamContext::unselected(0)), Error::Ok) << last_error_message();
  return m;
}

// The stateful model's constants as a binary_blob: scale 2, counter 10, table {1, 3}, each
// padded to 64 bytes.
std::shared_ptr<const WeightSource> archive_blob() {
  std::vector<uint8_t> blob(3 * 64, 0);
  const float scale = 2, counter = 10, table[2] = {1, 3};
  std::memcpy(blob.data(), &scale, 4);
  std::memcpy(blob.data() + 64, &counter, 4);
  std::memcpy(blob.data() + 128, table, 8);
  return std::make_shared<BytesSource>(std::move(blob));
}

TEST(State, LoadsSharingArchiveWeightsHaveTheirOwnState) {
  auto source = archive_blob();
  std::unique_ptr<Model> a = load_archive_like(source), b = load_archive_like(source);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->constants().has_value() && b->constants().has_value());
  EXPECT_TRUE(b->constants()->shared) << "the weights are one upload";
  EXPECT_TRUE(a->stateful());
  // Interleaved: each conversation sees its own counter.
  EXPECT_EQ(after(10, 1), run(*a, 1));
  EXPECT_EQ(after(10, 1), run(*b, 1));
  EXPECT_EQ(after(11, 1), run(*a, 1));
  EXPECT_EQ(after(11, 1), run(*b, 1));
  ASSERT_EQ(a->reset_state(StreamContext::unselected(0)), Error::Ok) << last_error_message();
  EXPECT_EQ(after(10, 1), run(*a, 1)) << "reset to the archive's values, which no run wrote";
  EXPECT_EQ(after(12, 1), run(*b, 1));
  // A third load after all those runs starts from the archive's values too.
  std::unique_ptr<Model> c = load_archive_like(source);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(after(10, 1), run(*c, 1));
}

TEST(State, StateTheLibraryHidesIsOnePerLoadButNotResettable) {
  std::unique_ptr<Model> a = load("stateful_opaque", 0), b = load("stateful_opaque", 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(a->stateful());
  EXPECT_EQ(a->instances(), 1);
  EXPECT_EQ(after(10, 1), run(*a, 1));
  EXPECT_EQ(after(10, 1), run(*b, 1)) << "each load is its own library object, with its own memory";
  EXPECT_EQ(a->reset_state(StreamContext::unselected(0)), Error::NotSupported);
  EXPECT_NE(std::string(last_error_message()).find("cannot reset"), std::string::npos) << last_error_message();
  EXPECT_EQ(load("stateful_opaque", 2, Error::InvalidArgument), nullptr);
}

TEST(State, PrepareTwiceIsInvalidState) {
  std::unique_ptr<Model> m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->prepare_state(nullptr, StreamContext::unselected(0)), Error::InvalidState);
}

// --- Weights swapped while serving (Model::stage_weights, swap_weights, free_inactive_weights)

std::unique_ptr<SlimTensor> host_tensor(std::vector<float>* v, std::vector<int64_t> sizes, int32_t dtype = 6) {
  SlimTensor* t = nullptr;
  EXPECT_EQ(from_blob(v->data(), static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, 0, dtype, 0, 0, &t),
            Error::Ok);
  return std::unique_ptr<SlimTensor>(t);
}

TEST(SwapWeights, StagedWeightsServeAfterTheSwapAndTheStateCarriesOver) {
  std::unique_ptr<Model> m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  const StreamContext cpu = StreamContext::unselected(0);
  EXPECT_EQ(after(10, 1), run(*m, 1));  // counter 11, scale 2
  std::vector<float> three = {3};
  auto scale = host_tensor(&three, {1});
  ASSERT_EQ(m->stage_weights({"scale"}, {scale.get()}, cpu), Error::Ok) << last_error_message();
  EXPECT_EQ((11 + 1) * 2 + 1, run(*m, 1)) << "runs go on with the active weights";
  EXPECT_EQ(m->stage_weights({"scale"}, {scale.get()}, cpu), Error::InvalidState) << "one staged at a time";
  ASSERT_EQ(m->swap_weights(), Error::Ok) << last_error_message();
  EXPECT_EQ((12 + 1) * 3 + 1, run(*m, 1)) << "the new scale, and the counter carried over";
  ASSERT_EQ(m->free_inactive_weights(), Error::Ok) << last_error_message();
  EXPECT_EQ((13 + 1) * 3 + 1, run(*m, 1));
  ASSERT_EQ(m->reset_state(cpu), Error::Ok) << last_error_message();
  EXPECT_EQ((10 + 1) * 3 + 1, run(*m, 1)) << "reset after the old weights are freed: the state's own initial values";
  EXPECT_EQ(m->swap_weights(), Error::InvalidState) << "nothing staged";
  std::vector<float> read = {0};
  auto dst = host_tensor(&read, {1});
  ASSERT_EQ(m->read_constant("scale", *dst, cpu), Error::Ok);
  EXPECT_EQ(read[0], 3.0f) << "read_constant sees the swapped weight";
}

TEST(SwapWeights, BadWeightsAreRefusedAndTheActiveOnesStay) {
  std::unique_ptr<Model> m = load("stateful", 0);
  ASSERT_NE(m, nullptr);
  const StreamContext cpu = StreamContext::unselected(0);
  std::vector<float> one = {3}, two = {3, 4};
  std::vector<float> wide_double(2, 0);  // 16 bytes: one float64
  auto scale = host_tensor(&one, {1});
  auto wide = host_tensor(&two, {2});
  auto as_double = host_tensor(&wide_double, {1}, 7);
  struct Bad {
    std::vector<std::string> names;
    std::vector<const SlimTensor*> tensors;
    const char* says;
  };
  const std::vector<Bad> cases = {
      {{}, {}, "0 weights given; the model has 1 (no 'scale')"},
      {{"scale", "scale"}, {scale.get(), scale.get()}, "given twice"},
      {{"counter"}, {scale.get()}, "is the model's state"},
      {{"nope"}, {scale.get()}, "no constant 'nope'"},
      {{"scale"}, {wide.get()}, "sizes [2]"},
      {{"scale"}, {as_double.get()}, "dtype float64"},
      {{"scale"}, {nullptr}, "null tensor"},
      {{"scale"}, {}, "1 names for 0 tensors"},
  };
  for (const Bad& b : cases) {
    EXPECT_EQ(m->stage_weights(b.names, b.tensors, cpu), Error::InvalidArgument) << b.says;
    EXPECT_NE(std::string(last_error_message()).find(b.says), std::string::npos) << last_error_message();
  }
  EXPECT_EQ(after(10, 1), run(*m, 1)) << "the active weights are untouched";
  EXPECT_EQ(m->swap_weights(), Error::InvalidState);
  // A staged set freed before a swap: the next stage works.
  ASSERT_EQ(m->stage_weights({"scale"}, {scale.get()}, cpu), Error::Ok);
  ASSERT_EQ(m->free_inactive_weights(), Error::Ok);
  EXPECT_EQ(after(11, 1), run(*m, 1));
  ASSERT_EQ(m->stage_weights({"scale"}, {scale.get()}, cpu), Error::Ok) << last_error_message();
}

TEST(SwapWeights, ALoadSwapsAloneWhenTheArchiveUploadIsShared) {
  auto source = archive_blob();
  std::unique_ptr<Model> a = load_archive_like(source), b = load_archive_like(source);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<float> five = {5};
  auto t = host_tensor(&five, {1});
  ASSERT_EQ(a->stage_weights({"scale"}, {t.get()}, StreamContext::unselected(0)), Error::Ok) << last_error_message();
  ASSERT_EQ(a->swap_weights(), Error::Ok) << last_error_message();
  ASSERT_EQ(a->free_inactive_weights(), Error::Ok);
  EXPECT_EQ((10 + 1) * 5 + 1, run(*a, 1));
  EXPECT_EQ(after(10, 1), run(*b, 1)) << "b keeps the shared upload";
  ASSERT_EQ(a->reset_state(StreamContext::unselected(0)), Error::Ok);
  EXPECT_EQ((10 + 1) * 5 + 1, run(*a, 1));
}

}  // namespace
}  // namespace slimcuda::testing
