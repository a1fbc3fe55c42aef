// SPDX-License-Identifier: Apache-2.0
// The proxy executor's parts on the host: schemas, the node reader (untrusted input), the
// registry, binding nodes to ops, and calls through the shim with CPU tensors.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/proxy/extern_nodes.h"
#include "csrc/proxy/op_schema.h"
#include "csrc/proxy/proxy_executor.h"
#include "csrc/proxy/registry.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

TEST(OpSchema, ParsesPyTorchSchemas) {
  OpSchema s;
  ASSERT_EQ(parse_op_schema("torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor", &s),
            Error::Ok);
  EXPECT_EQ(s.target(), "torchvision::nms");
  ASSERT_EQ(s.args.size(), 3u);
  EXPECT_EQ(s.args[2].type, SchemaType::Float);
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_EQ(s.returns[0].type, SchemaType::Tensor);

  ASSERT_EQ(parse_op_schema("aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
                            "(Tensor values, Tensor indices)",
                            &s),
            Error::Ok);
  EXPECT_EQ(s.target(), "aten::sort.stable");
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_TRUE(s.args[1].keyword && s.args[1].optional && s.args[1].type == SchemaType::Bool);
  EXPECT_TRUE(s.args[2].def.present);
  EXPECT_EQ(s.args[2].def.number, -1.0);
  EXPECT_EQ(s.returns.size(), 2u);
  EXPECT_EQ(s.returns[1].name, "indices");

  ASSERT_EQ(parse_op_schema("aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> "
                            "Tensor",
                            &s),
            Error::Ok);
  EXPECT_EQ(s.args[1].type, SchemaType::OptionalTensorList);
  ASSERT_EQ(parse_op_schema("aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
                            "float[]? scale_factors) -> Tensor",
                            &s),
            Error::Ok);
  EXPECT_EQ(s.args[1].type, SchemaType::IntList);
  EXPECT_TRUE(s.args[1].optional);
  EXPECT_EQ(s.args[3].type, SchemaType::FloatList);
  ASSERT_EQ(parse_op_schema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", &s),
            Error::Ok);
  EXPECT_TRUE(s.args[0].mutated);
  EXPECT_TRUE(s.returns[0].mutated);
  EXPECT_EQ(s.args[2].type, SchemaType::Scalar);
  ASSERT_EQ(parse_op_schema("aten::conv(Tensor x, int[2] stride=[1, 1], str pad='same') -> ()", &s), Error::Ok);
  EXPECT_EQ(s.args[1].def.numbers, (std::vector<double>{1, 1}));
  EXPECT_EQ(s.args[2].def.text, "same");
  EXPECT_TRUE(s.returns.empty());
  // Alias sets that flow into a wildcard or join (views, in-place list ops).
  ASSERT_EQ(parse_op_schema("aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
                            "Tensor(a)[]",
                            &s),
            Error::Ok)
      << last_error_message();
  EXPECT_EQ(s.args[0].type, SchemaType::Tensor);
  EXPECT_FALSE(s.args[0].mutated);
  EXPECT_EQ(s.returns[0].type, SchemaType::TensorList);
  ASSERT_EQ(parse_op_schema("ns::op(Tensor(a|b!) x, Tensor(b! -> *)[] ys) -> ()", &s), Error::Ok)
      << last_error_message();
  EXPECT_TRUE(s.args[0].mutated);
  EXPECT_EQ(s.args[1].type, SchemaType::TensorList);
}

TEST(OpSchema, RefusesWhatItDoesNotKnow) {
  OpSchema s;
  for (const char* bad : {"nms(Tensor a) -> Tensor", "ns::op(Widget a) -> Tensor", "ns::op(Tensor a -> Tensor",
                          "ns::op(Tensor a) Tensor", "ns::op(Tensor a) -> Tensor extra more", "ns::op(int[][] a) -> ()",
                          "ns::op(Tensor) -> ()", "ns::op(int a=) -> ()"}) {
    EXPECT_EQ(parse_op_schema(bad, &s), Error::InvalidArgument) << bad;
    EXPECT_NE(std::string(last_error_message()).find("op schema"), std::string::npos) << bad;
  }
}

TEST(Registry, EveryEntryParsesAndTargetsAreUnique) {
  ASSERT_EQ(registry_error(), "");
  const auto& ops = proxy_ops();
  ASSERT_FALSE(ops.empty());
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_LT(ops[i - 1].schema.target(), ops[i].schema.target());
  for (const auto& op : ops) {
    EXPECT_NE(op.kernel, nullptr) << op.schema.target();
    EXPECT_EQ(find_proxy_op(op.schema.target()), &op);
  }
  EXPECT_NE(find_proxy_op("transformers::grouped_mm_fallback"), nullptr);
  EXPECT_NE(find_proxy_op("aten::_unique2"), nullptr);
  EXPECT_NE(find_proxy_op("aten::unique_consecutive"), nullptr);
  EXPECT_NE(find_proxy_op("aten::unique_dim"), nullptr);
  EXPECT_EQ(find_proxy_op("transformers::grouped_mm_fallback.out"), nullptr);
  EXPECT_EQ(find_proxy_op("nobody::nothing"), nullptr);
}

// What PyTorch 2.11 wrote for torchvision.ops.nms (a CPU export, 2026-12-03).
const char* kNmsNodes =
    R"({"nodes": [{"name": "buf0", "node": {"target": "torchvision::nms", "inputs": [)"
    R"({"name": "dets", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1},)"
    R"({"name": "scores", "arg": {"as_tensor": {"name": "arg1_1"}}, "kind": 1},)"
    R"({"name": "iou_threshold", "arg": {"as_float": 0.5}, "kind": 1}],)"
    R"("outputs": [{"as_tensor": {"name": "buf1"}}], "metadata": {}, "is_hop_single_tensor_return": null,)"
    R"("name": null}}]})";

// transformers' MoE grouped GEMM, as a Mixtral export writes it.
std::string grouped_nodes(const std::string& inputs = R"({"name": "input", "arg": {"as_tensor": {"name": "buf45"}}},)"
                                                      R"({"name": "weight", "arg": {"as_tensor": {"name": "w"}}},)"
                                                      R"({"name": "offs", "arg": {"as_tensor": {"name": "buf44"}}})",
                          const std::string& target = "transformers::grouped_mm_fallback") {
  return R"({"nodes": [{"name": "buf47", "node": {"target": ")" + target + R"(", "inputs": [)" + inputs +
         R"(], "outputs": [{"as_tensor": {"name": "buf47"}}], "metadata": {}}}]})";
}

TEST(ExternNodes, ReadsWhatPyTorchWrites) {
  std::vector<ExternNode> nodes;
  ASSERT_EQ(parse_extern_nodes(kNmsNodes, &nodes), Error::Ok) << last_error_message();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].target, "torchvision::nms");
  EXPECT_EQ(nodes[0].name, "buf0");
  ASSERT_EQ(nodes[0].inputs.size(), 3u);
  EXPECT_EQ(nodes[0].inputs[0].form, ArgForm::Tensor);
  EXPECT_EQ(nodes[0].inputs[2].form, ArgForm::Float);
  EXPECT_EQ(nodes[0].inputs[2].float_value, 0.5);
  ASSERT_EQ(nodes[0].outputs.size(), 1u);
  EXPECT_EQ(nodes[0].outputs[0].form, ArgForm::Tensor);
}

TEST(ExternNodes, RefusesMalformedFiles) {
  struct Bad {
    std::string text;
    Error expect;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {"not json", Error::InvalidProgram, "not JSON"},
      {"[]", Error::InvalidProgram, "not {\"nodes\""},
      {R"({"nodes": 3})", Error::InvalidProgram, "not {\"nodes\""},
      {R"({"nodes": [3]})", Error::InvalidProgram, "node 0 (?): node: not a node"},
      {R"({"nodes": [{"node": {"inputs": [], "outputs": []}}]})", Error::InvalidProgram, "target: missing"},
      {R"({"nodes": [{"node": {"target": 7, "inputs": [], "outputs": []}}]})", Error::InvalidProgram, "not a string"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": {}, "outputs": []}}]})", Error::InvalidProgram,
       "not a list"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": [{"name": "x", "arg": {"as_widget": 1}}],)"
       R"( "outputs": []}}]})",
       Error::InvalidProgram, "unknown argument form as_widget"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": [{"name": "x", "arg": {"as_int": 1.5}}],)"
       R"( "outputs": []}}]})",
       Error::InvalidProgram, "not an integer"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": [{"name": "x", "arg": {"as_tensor": {}}}],)"
       R"( "outputs": []}}]})",
       Error::InvalidProgram, "a tensor without a name"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": [{"name": "x", "arg": {"as_int": 1, "as_float": 2}}],)"
       R"( "outputs": []}}]})",
       Error::InvalidProgram, "exactly one form"},
      {R"({"nodes": [{"node": {"target": "a::b", "inputs": [{"name": "x", "arg": {"as_custom_obj": {}}}],)"
       R"( "outputs": []}}]})",
       Error::NotSupported, "as_custom_obj are not supported"},
      {std::string(300 << 10, ' '), Error::InvalidProgram, "bytes (at most"},
      {std::string(64, '[') + std::string(64, ']'), Error::InvalidProgram, "deeper"},
  };
  for (const Bad& b : cases) {
    std::vector<ExternNode> nodes;
    EXPECT_EQ(parse_extern_nodes(b.text, &nodes), b.expect) << b.text.substr(0, 80);
    EXPECT_NE(std::string(last_error_message()).find(b.message), std::string::npos)
        << b.text.substr(0, 80) << " -> " << last_error_message();
  }
}

Error create(const std::string& json, std::shared_ptr<const ProxyExecutor>* e, const std::string& source = "") {
  return ProxyExecutor::create(json, source, nullptr, e);
}

TEST(ProxyExecutor, NamesEveryOpTheRegistryLacks) {
  const std::string two = R"({"nodes": [)"
                          R"({"node": {"target": "vendor::fused_thing", "inputs": [], "outputs": []}},)"
                          R"({"node": {"target": "aten::mystery.out", "inputs": [], "outputs": []}},)"
                          R"({"node": {"target": "vendor::fused_thing", "inputs": [], "outputs": []}}]})";
  std::shared_ptr<const ProxyExecutor> e;
  EXPECT_EQ(create(two, &e), Error::NotSupported);
  const std::string msg = last_error_message();
  EXPECT_NE(msg.find("2 ops through the proxy executor that slimcuda does not implement: aten::mystery.out, "
                     "vendor::fused_thing"),
            std::string::npos)
      << msg;
  EXPECT_EQ(e, nullptr);
}

TEST(ProxyExecutor, RefusesNodesThatDisagreeWithTheSchema) {
  struct Bad {
    std::string json;
    const char* message;
  };
  const std::string in = R"({"name": "input", "arg": {"as_tensor": {"name": "a"}}},)";
  const std::string w = R"({"name": "weight", "arg": {"as_tensor": {"name": "w"}}},)";
  const std::vector<Bad> cases = {
      {grouped_nodes(in + w.substr(0, w.size() - 1)), "argument 'offs': missing, and it has no default"},
      {grouped_nodes(in + w + R"({"name": "offs", "arg": {"as_float": 1.0}})"), "given as as_float"},
      {grouped_nodes(in + w + R"({"name": "offs", "arg": {"as_none": true}})"), "given as as_none"},
      {grouped_nodes(in + w + R"({"name": "offs", "arg": {"as_tensor": {"name": "o"}}},)" +
                     R"({"name": "bias", "arg": {"as_tensor": {"name": "b"}}})"),
       "argument 'bias': not an argument of the op"},
      {grouped_nodes(in + in + w + R"({"name": "offs", "arg": {"as_tensor": {"name": "o"}}})"), "given twice"},
  };
  for (const Bad& b : cases) {
    std::shared_ptr<const ProxyExecutor> e;
    EXPECT_EQ(create(b.json, &e), Error::InvalidProgram) << b.json;
    EXPECT_NE(std::string(last_error_message()).find(b.message), std::string::npos) << last_error_message();
  }
  std::string two_outputs = grouped_nodes();
  two_outputs.replace(two_outputs.find("\"outputs\": ["), 12, R"("outputs": [{"as_tensor": {"name": "x"}}, )");
  std::shared_ptr<const ProxyExecutor> e;
  EXPECT_EQ(create(two_outputs, &e), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("2 outputs where"), std::string::npos) << last_error_message();
}

TEST(ProxyExecutor, ChecksTheLibrarysCallsAgainstTheNodes) {
  std::shared_ptr<const ProxyExecutor> e;
  const std::string call =
      "aoti_torch_proxy_executor_call_function(proxy_executor, 0, 0, std::array<int64_t, 0>{}.data(), 4, "
      "std::array<AtenTensorHandle, 4>{buf45, wrap(reinterpret(w, 3, a, b, 0L)), buf44, buf47}.data());";
  EXPECT_EQ(create(grouped_nodes(), &e, "x;\n    " + call + "\n"), Error::Ok) << last_error_message();
  const std::vector<CallSite> sites = proxy_call_sites(call);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].tensors, 4);
  std::string three = call;
  three.replace(three.find(", 4, "), 5, ", 3, ");
  EXPECT_EQ(create(grouped_nodes(), &e, three), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("the library passes 0 ints and 3 tensors"), std::string::npos)
      << last_error_message();
  std::string node1 = call;
  node1.replace(node1.find("proxy_executor, 0,"), 18, "proxy_executor, 1,");
  EXPECT_EQ(create(grouped_nodes(), &e, node1), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("calls extern-kernel node 1; its node file has 1"),
            std::string::npos)
      << last_error_message();
}

// A contiguous float CPU tensor owning its values.
struct Host {
  std::vector<float> f;
  std::vector<int32_t> i;
  std::unique_ptr<SlimTensor> t;
};
Host floats(std::vector<float> v, std::vector<int64_t> sizes) {
  Host h;
  h.f = std::move(v);
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
  h.t = std::make_unique<SlimTensor>(Storage::borrow(h.f.data(), h.f.size() * 4, Device{}), sizes, strides,
                                     ScalarType::Float, 0);
  return h;
}
Host ints(std::vector<int32_t> v) {
  Host h;
  h.i = std::move(v);
  h.t = std::make_unique<SlimTensor>(Storage::borrow(h.i.data(), h.i.size() * 4, Device{}),
                                     std::vector<int64_t>{static_cast<int64_t>(h.i.size())}, std::vector<int64_t>{1},
                                     ScalarType::Int, 0);
  return h;
}
AtenTensorHandle h(const Host& x) { return reinterpret_cast<AtenTensorHandle>(x.t.get()); }

TEST(ProxyExecutor, RunsTheGroupedGemmOfAMixtureOfExperts) {
  std::shared_ptr<const ProxyExecutor> e;
  ASSERT_EQ(create(grouped_nodes(), &e), Error::Ok) << last_error_message();
  // 5 rows of 2: rows 0-1 to expert 0, none to expert 1, rows 2-3 to expert 2; row 4 past
  // the last offset stays zero.
  Host input = floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  Host weight = floats({1, 0, 0, 0, 1, 0,   // expert 0: [[1,0,0],[0,1,0]]
                        9, 9, 9, 9, 9, 9,   // expert 1: unused
                        0, 1, 1, 1, 0, 1},  // expert 2: [[0,1,1],[1,0,1]]
                       {3, 2, 3});
  Host offs = ints({2, 2, 4});
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(&out), 0);
  EXPECT_EQ(reinterpret_cast<SlimTensor*>(out)->numel(), 0);
  AtenTensorHandle args[4] = {h(input), h(weight), h(offs), out};
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(
                reinterpret_cast<AOTIProxyExecutorHandle>(e->handle()), 0, 0, nullptr, 4, args),
            0)
      << last_error_message();
  const auto* o = reinterpret_cast<SlimTensor*>(out);
  ASSERT_EQ(o->sizes(), (std::vector<int64_t>{5, 3}));
  const auto* p = static_cast<const float*>(o->data_ptr());
  const std::vector<float> want = {1, 2, 0, 3, 4, 0, 6, 5, 11, 8, 7, 15, 0, 0, 0};
  EXPECT_EQ(std::vector<float>(p, p + 15), want);
  SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(out);
}

TEST(ProxyExecutor, RunsTorchvisionNmsAsAnExportCallsIt) {
  std::shared_ptr<const ProxyExecutor> e;
  ASSERT_EQ(create(kNmsNodes, &e), Error::Ok) << last_error_message();
  // Box 1 overlaps box 0 (IoU 1/1.1 > 0.5) and scores lower: suppressed.
  Host dets = floats({0, 0, 1, 1, 0, 0, 1, 1.1f, 2, 2, 3, 3}, {3, 4});
  Host scores = floats({0.9f, 0.8f, 0.7f}, {3});
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(&out), 0);
  AtenTensorHandle args[3] = {h(dets), h(scores), out};
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(
                reinterpret_cast<AOTIProxyExecutorHandle>(e->handle()), 0, 0, nullptr, 3, args),
            0)
      << last_error_message();
  const auto* o = reinterpret_cast<SlimTensor*>(out);
  ASSERT_EQ(o->dtype(), ScalarType::Long);
  ASSERT_EQ(o->sizes(), (std::vector<int64_t>{2}));
  const auto* p = static_cast<const int64_t*>(o->data_ptr());
  EXPECT_EQ(std::vector<int64_t>(p, p + 2), (std::vector<int64_t>{0, 2}));
  SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(out);
}

// What PyTorch 2.11 wrote for torch.unique and torch.unique_consecutive (a CPU export,
// 2026-12-06, tools/ops/make_select_export.py's model).
const char* kUniqueNodes =
    R"({"nodes": [{"name": "buf0", "node": {"target": "aten::_unique2", "inputs": [)"
    R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1},)"
    R"({"name": "sorted", "arg": {"as_bool": true}, "kind": 1},)"
    R"({"name": "return_inverse", "arg": {"as_bool": true}, "kind": 1},)"
    R"({"name": "return_counts", "arg": {"as_bool": true}, "kind": 1}],)"
    R"("outputs": [{"as_tensor": {"name": "buf1"}}, {"as_tensor": {"name": "buf2"}}, {"as_tensor": {"name": "buf3"}}],)"
    R"("metadata": {}, "is_hop_single_tensor_return": null, "name": null}},)"
    R"({"name": "buf8", "node": {"target": "aten::unique_consecutive", "inputs": [)"
    R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1},)"
    R"({"name": "return_inverse", "arg": {"as_bool": true}, "kind": 1},)"
    R"({"name": "return_counts", "arg": {"as_bool": true}, "kind": 1},)"
    R"({"name": "dim", "arg": {"as_none": true}, "kind": 1}],)"
    R"("outputs": [{"as_tensor": {"name": "buf9"}}, {"as_tensor": {"name": "buf10"}}, {"as_tensor": {"name": "buf11"}}],)"
    R"("metadata": {}, "is_hop_single_tensor_return": null, "name": null}}]})";

std::vector<int64_t> longs(const SlimTensor* t) {
  const auto* p = static_cast<const int64_t*>(t->data_ptr());
  return std::vector<int64_t>(p, p + t->numel());
}

TEST(ProxyExecutor, RunsUniqueAsAnExportCallsIt) {
  std::shared_ptr<const ProxyExecutor> e;
  ASSERT_EQ(create(kUniqueNodes, &e), Error::Ok) << last_error_message();
  auto handle = reinterpret_cast<AOTIProxyExecutorHandle>(e->handle());
  Host x = floats({3, 1, 1, 2, 3, 3}, {6});
  for (int node = 0; node < 2; ++node) {
    AtenTensorHandle out[3] = {nullptr, nullptr, nullptr};
    for (AtenTensorHandle& o : out) ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(&o), 0);
    AtenTensorHandle args[4] = {h(x), out[0], out[1], out[2]};
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(handle, node, 0, nullptr, 4, args), 0)
        << last_error_message();
    const auto* values = reinterpret_cast<SlimTensor*>(out[0]);
    const auto* inverse = reinterpret_cast<SlimTensor*>(out[1]);
    const auto* counts = reinterpret_cast<SlimTensor*>(out[2]);
    ASSERT_EQ(values->dtype(), ScalarType::Float);
    const auto* v = static_cast<const float*>(values->data_ptr());
    if (node == 0) {  // torch.unique: sorted values
      EXPECT_EQ(std::vector<float>(v, v + values->numel()), (std::vector<float>{1, 2, 3}));
      EXPECT_EQ(longs(inverse), (std::vector<int64_t>{2, 0, 0, 1, 2, 2}));
      EXPECT_EQ(longs(counts), (std::vector<int64_t>{2, 1, 3}));
    } else {  // torch.unique_consecutive: runs in order
      EXPECT_EQ(std::vector<float>(v, v + values->numel()), (std::vector<float>{3, 1, 2, 3}));
      EXPECT_EQ(longs(inverse), (std::vector<int64_t>{0, 1, 1, 2, 3, 3}));
      EXPECT_EQ(longs(counts), (std::vector<int64_t>{1, 2, 1, 2}));
    }
    for (AtenTensorHandle o : out) SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(o);
  }
}

// unique_consecutive with a dim (an int the generated code passes), and unique_dim.
TEST(ProxyExecutor, UniqueAlongADim) {
  std::string nodes = kUniqueNodes;
  const std::string none = R"({"as_none": true})";
  nodes.replace(nodes.find(none), none.size(), R"({"as_int": 0})");
  const std::string dim_node =
      R"(, {"name": "buf12", "node": {"target": "aten::unique_dim", "inputs": [)"
      R"({"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}, "kind": 1},)"
      R"({"name": "dim", "arg": {"as_int": 1}, "kind": 1},)"
      R"({"name": "sorted", "arg": {"as_bool": true}, "kind": 1},)"
      R"({"name": "return_inverse", "arg": {"as_bool": true}, "kind": 1},)"
      R"({"name": "return_counts", "arg": {"as_bool": true}, "kind": 1}],)"
      R"("outputs": [{"as_tensor": {"name": "buf13"}}, {"as_tensor": {"name": "buf14"}}, {"as_tensor": {"name": "buf15"}}],)"
      R"("metadata": {}}}]})";
  nodes.replace(nodes.size() - 2, 2, dim_node);
  std::shared_ptr<const ProxyExecutor> e;
  ASSERT_EQ(create(nodes, &e), Error::Ok) << last_error_message();
  auto handle = reinterpret_cast<AOTIProxyExecutorHandle>(e->handle());
  // [[2, 1, 2], [2, 1, 2]]: along dim 0 one run of two equal rows; along dim 1 the columns
  // [2, 2], [1, 1], [2, 2], whose sorted distinct ones are [1, 1], [2, 2].
  Host x = floats({2, 1, 2, 2, 1, 2}, {2, 3});
  struct Want {
    int node;
    int64_t dim;
    std::vector<int64_t> sizes;
    std::vector<float> values;
    std::vector<int64_t> inverse, counts;
  };
  for (const Want& w :
       {Want{1, 0, {1, 3}, {2, 1, 2}, {0, 0}, {2}}, Want{2, 1, {2, 2}, {1, 2, 1, 2}, {1, 0, 1}, {1, 2}}}) {
    SCOPED_TRACE(w.node);
    AtenTensorHandle out[3] = {nullptr, nullptr, nullptr};
    for (AtenTensorHandle& o : out) ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(&o), 0);
    AtenTensorHandle args[4] = {h(x), out[0], out[1], out[2]};
    int64_t dim = w.dim;  // an int argument is passed by the generated code, not kept in the node
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(handle, w.node, 1, &dim, 4, args), 0)
        << last_error_message();
    const auto* values = reinterpret_cast<SlimTensor*>(out[0]);
    ASSERT_EQ(values->sizes(), w.sizes);
    const auto* v = static_cast<const float*>(values->data_ptr());
    EXPECT_EQ(std::vector<float>(v, v + values->numel()), w.values);
    EXPECT_EQ(longs(reinterpret_cast<SlimTensor*>(out[1])), w.inverse);
    EXPECT_EQ(longs(reinterpret_cast<SlimTensor*>(out[2])), w.counts);
    for (AtenTensorHandle o : out) SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(o);
  }
}

TEST(ProxyExecutor, BadCallsFailAndThrowSoTheRunFails) {
  std::shared_ptr<const ProxyExecutor> e;
  ASSERT_EQ(create(grouped_nodes(), &e), Error::Ok) << last_error_message();
  auto handle = reinterpret_cast<AOTIProxyExecutorHandle>(e->handle());
  Host input = floats({1, 2}, {1, 2});
  Host weight = floats({1, 2, 3, 4}, {1, 2, 2});
  Host bad_offs = ints({3});  // past the one row
  AtenTensorHandle out = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_uninitialized_tensor)(&out), 0);
  AtenTensorHandle args[4] = {h(input), h(weight), h(bad_offs), out};
  struct Call {
    AOTIProxyExecutorHandle e;
    int node, ints, tensors;
    AtenTensorHandle* args;
    const char* message;
  };
  AtenTensorHandle with_null[4] = {h(input), nullptr, h(bad_offs), out};
  for (const Call& c :
       {Call{handle, 1, 0, 4, args, "node 1 does not exist"}, Call{handle, -1, 0, 4, args, "node -1 does not exist"},
        Call{handle, 0, 0, 3, args, "called with 0 ints and 3 tensors"},
        Call{handle, 0, 1, 4, args, "called with 1 ints"}, Call{handle, 0, 0, 4, nullptr, "null argument array"},
        Call{handle, 0, 0, 4, with_null, "tensor argument 1 is null"},
        Call{nullptr, 0, 0, 4, args, "given no proxy executor"},
        Call{handle, 0, 0, 4, args, "offs[0] = 3 is below the previous offset or past the 1 rows"}}) {
    EXPECT_THROW(
        (void)SLIMCUDA_SHIM(aoti_torch_proxy_executor_call_function)(c.e, c.node, c.ints, nullptr, c.tensors, c.args),
        std::runtime_error)
        << c.message;
    EXPECT_NE(std::string(last_error_message()).find(c.message), std::string::npos) << last_error_message();
  }
  EXPECT_EQ(reinterpret_cast<SlimTensor*>(out)->numel(), 0);  // a failed call leaves the output empty
  SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(out);
}

}  // namespace
}  // namespace slimcuda::proxy
