// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for what the proxy executor reads from an untrusted .pt2 before any
// call runs: the extern-kernel node file (parse_extern_nodes), each parsed node bound to op
// schemas of every argument kind (bind_node), and the call sites of a generated source
// (proxy_call_sites). Any bytes must give Ok or InvalidProgram, never a crash, a sanitizer
// report or a leak; what an Ok binding says must agree with itself. The first byte picks
// the reader (even: node file, odd: wrapper source). Built and run by tools/fuzz/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "csrc/proxy/binding.h"
#include "csrc/proxy/call_sites.h"
#include "csrc/proxy/extern_nodes.h"
#include "csrc/proxy/op_schema.h"
#include "csrc/proxy/registry.h"

namespace {

using slimcuda::Error;
using namespace slimcuda::proxy;

// Schemas as PyTorch writes them, between them every type and default a binding handles.
constexpr const char* kSchemas[] = {
    "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt "
    "pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "aten::_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) "
    "-> Tensor",
    "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
    "indices)",
    "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
    "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> "
    "Tensor(a)",
    "aten::_foreach_add.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]",
    "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
    "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
    "aten::_fused_adam_(Tensor(a!)[] self, bool[] flags, float lr) -> ()",
    "aten::maybe(Tensor x) -> Tensor?",
};

std::vector<RegisteredOp> schemas() {
  std::vector<RegisteredOp> ops;
  for (const char* text : kSchemas) {
    RegisteredOp op;
    if (parse_op_schema(text, &op.schema) != Error::Ok) __builtin_trap();  // ours: must parse
    ops.push_back(std::move(op));
  }
  return ops;
}

void check_binding(const BoundNode& b, const OpSchema& schema) {
  if (b.args.size() != schema.args.size() || b.return_tensors.size() != schema.returns.size()) __builtin_trap();
  int in_tensors = 0, in_ints = 0, out_tensors = 0;
  for (const ArgPlan& p : b.args) {
    if (p.tensors < 0 || p.ints < 0) __builtin_trap();
    in_tensors += p.tensors;
    in_ints += p.ints;
  }
  for (int n : b.return_tensors) out_tensors += n;
  if (in_tensors != b.input_tensors || in_ints != b.input_ints || out_tensors != b.output_tensors) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<RegisteredOp> ops = schemas();
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    for (const CallSite& c : proxy_call_sites(text)) {
      // A literal has at most nine digits.
      if (c.node < 0 || c.ints < 0 || c.tensors < 0 || c.node > 999999999 || c.ints > 999999999) __builtin_trap();
    }
    return 0;
  }
  std::vector<ExternNode> nodes;
  const Error e = parse_extern_nodes(text, &nodes);
  if (e != Error::Ok && e != Error::InvalidProgram) __builtin_trap();
  if (e != Error::Ok) return 0;
  if (nodes.size() > kMaxExternNodes) __builtin_trap();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].inputs.size() > kMaxNodeArgs || nodes[i].outputs.size() > kMaxNodeArgs) __builtin_trap();
    for (const RegisteredOp& op : ops) {
      BoundNode b;
      const Error bound = bind_node(nodes[i], i, op, &b);
      if (bound != Error::Ok && bound != Error::InvalidProgram) __builtin_trap();
      if (bound == Error::Ok) check_binding(b, op.schema);
    }
  }
  return 0;
}
