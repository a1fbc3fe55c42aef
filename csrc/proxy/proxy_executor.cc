// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/proxy_executor.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "csrc/cuda/device.h"
#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

Error mismatch(size_t index, const ExternNode& node, const std::string& arg, const char* what) {
  return set_last_error(Error::InvalidProgram, "extern-kernel node %zu (%s): argument '%s': %s", index,
                        node.target.c_str(), arg.c_str(), what);
}

// A node's target names an op's overload; ".default" and no suffix are the same overload.
std::string normalized(const std::string& target) {
  const std::string suffix = ".default";
  if (target.size() > suffix.size() && target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0)
    return target.substr(0, target.size() - suffix.size());
  return target;
}

// The schema's default for an argument the node leaves out.
Error from_default(const SchemaArg& a, ArgPlan* plan) {
  const SchemaDefault& d = a.def;
  if (!d.present || d.none) {
    plan->value.none = true;
    return a.optional || d.none ? Error::Ok : Error::InvalidProgram;
  }
  plan->value.i = static_cast<int64_t>(d.number);
  plan->value.f = d.number;
  plan->value.is_float = a.type == SchemaType::Scalar && d.number != static_cast<double>(plan->value.i);
  plan->value.b = d.boolean;
  plan->value.s = d.text;
  plan->value.floats = d.numbers;
  for (double x : d.numbers) plan->value.ints.push_back(static_cast<int64_t>(x));
  return Error::Ok;
}

// Whether form `f` can fill an argument of type `t`, and what the call passes for it.
bool place(const SchemaArg& a, const NodeArg& n, ArgPlan* plan) {
  ProxyValue& v = plan->value;
  if (n.form == ArgForm::None) {
    v.none = true;
    return a.optional;
  }
  switch (a.type) {
    case SchemaType::Tensor:
      plan->tensors = 1;
      return n.form == ArgForm::Tensor;
    case SchemaType::TensorList:
      plan->tensors = static_cast<int>(n.length);
      return n.form == ArgForm::Tensors;
    case SchemaType::OptionalTensorList:
      if (n.form == ArgForm::Tensors) {
        plan->present.assign(n.length, true);
      } else if (n.form == ArgForm::OptionalTensors) {
        plan->present = n.present;
      } else {
        return false;
      }
      for (bool p : plan->present) plan->tensors += p ? 1 : 0;
      return true;
    case SchemaType::Int:
      plan->ints = 1;
      return n.form == ArgForm::Int || n.form == ArgForm::SymInt;
    case SchemaType::IntList:
      plan->ints = static_cast<int>(n.length);
      return n.form == ArgForm::Ints || n.form == ArgForm::SymInts;
    case SchemaType::Scalar:
      if (n.form == ArgForm::Int || n.form == ArgForm::SymInt) {
        plan->ints = 1;
        return true;
      }
      v.is_float = true;
      v.f = n.form == ArgForm::Bool ? (n.bool_value ? 1.0 : 0.0) : n.float_value;
      return n.form == ArgForm::Float || n.form == ArgForm::Bool;
    case SchemaType::Float:
      v.f = n.float_value;
      return n.form == ArgForm::Float;
    case SchemaType::FloatList:
      v.floats = n.floats;
      return n.form == ArgForm::Floats;
    case SchemaType::Bool:
      v.b = n.bool_value;
      return n.form == ArgForm::Bool;
    case SchemaType::BoolList:
      v.bools = n.bools;
      return n.form == ArgForm::Bools;
    case SchemaType::String:
      v.s = n.string_value;
      return n.form == ArgForm::String;
    case SchemaType::ScalarType:
      v.i = n.int_value;
      return n.form == ArgForm::ScalarType;
    case SchemaType::Layout:
      v.i = n.int_value;
      return n.form == ArgForm::Layout;
    case SchemaType::MemoryFormat:
      v.i = n.int_value;
      return n.form == ArgForm::MemoryFormat;
    case SchemaType::Device:
      v.s = n.string_value;
      v.i = n.int_value;
      return n.form == ArgForm::Device;
    case SchemaType::None:
      return false;
  }
  return false;
}

Error bind_returns(const ExternNode& node, size_t index, const OpSchema& schema, BoundNode* b) {
  if (node.outputs.size() != schema.returns.size()) {
    return set_last_error(Error::InvalidProgram, "extern-kernel node %zu (%s): %zu outputs where %s returns %zu", index,
                          node.target.c_str(), node.outputs.size(), schema.target().c_str(), schema.returns.size());
  }
  for (size_t r = 0; r < schema.returns.size(); ++r) {
    const SchemaArg& ret = schema.returns[r];
    const NodeArg& out = node.outputs[r];
    int n = -1;
    if (ret.type == SchemaType::Tensor && !ret.optional && out.form == ArgForm::Tensor) n = 1;
    if (ret.type == SchemaType::Tensor && ret.optional && out.form == ArgForm::OptionalTensor) n = out.bool_value;
    if (ret.type == SchemaType::TensorList && out.form == ArgForm::Tensors) n = static_cast<int>(out.length);
    if (ret.type == SchemaType::None && out.form == ArgForm::None) n = 0;
    if (n < 0) {
      return set_last_error(Error::InvalidProgram, "extern-kernel node %zu (%s): output %zu is %s, not what %s returns",
                            index, node.target.c_str(), r, arg_form_name(out.form), schema.target().c_str());
    }
    b->return_tensors.push_back(n);
    b->output_tensors += n;
  }
  return Error::Ok;
}

}  // namespace

Error bind_node(const ExternNode& node, size_t index, const RegisteredOp& op, BoundNode* out) {
  const OpSchema& schema = op.schema;
  BoundNode b;
  b.op = &op;
  b.target = node.target;
  std::map<std::string, const NodeArg*> given;
  for (const NodeArg& a : node.inputs) {
    if (!given.emplace(a.name, &a).second) return mismatch(index, node, a.name, "given twice");
  }
  for (const SchemaArg& a : schema.args) {
    ArgPlan plan;
    auto it = given.find(a.name);
    if (it == given.end()) {
      if (from_default(a, &plan) != Error::Ok) return mismatch(index, node, a.name, "missing, and it has no default");
    } else {
      if (!place(a, *it->second, &plan)) {
        return mismatch(
            index, node, a.name,
            (std::string("given as ") + arg_form_name(it->second->form) + ", which its type cannot take").c_str());
      }
      given.erase(it);
    }
    b.input_tensors += plan.tensors;
    b.input_ints += plan.ints;
    b.args.push_back(std::move(plan));
  }
  if (!given.empty()) return mismatch(index, node, given.begin()->first, "not an argument of the op");
  SLIMCUDA_RETURN_IF_ERROR(bind_returns(node, index, schema, &b));
  *out = std::move(b);
  return Error::Ok;
}

namespace {

// The arguments of one call, split at top-level commas (brackets of every kind nest:
// `std::array<int64_t, 2>{a, b}.data()` is one argument).
std::vector<std::string_view> call_arguments(std::string_view s, size_t open) {
  std::vector<std::string_view> args;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open + 1; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '(' || ch == '{' || ch == '[' || ch == '<') ++depth;
    if ((ch == ')' || ch == '}' || ch == ']' || ch == '>') && depth-- == 0) {
      args.push_back(s.substr(start, i - start));
      return args;
    }
    if (ch == ',' && depth == 0) {
      args.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return {};  // unterminated: not a call
}

bool literal(std::string_view t, long long* out) {
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == 'L')) t.remove_suffix(1);
  if (t.empty() || t.size() > 9) return false;
  long long v = 0;
  for (char ch : t) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return true;
}

Error check_call_sites(std::string_view source, const std::vector<BoundNode>& nodes) {
  for (const CallSite& c : proxy_call_sites(source)) {
    SLIMCUDA_CHECK_OR_RETURN(static_cast<size_t>(c.node) < nodes.size(), Error::InvalidProgram,
                             "the model's library calls extern-kernel node %lld; its node file has %zu", c.node,
                             nodes.size());
    const BoundNode& b = nodes[static_cast<size_t>(c.node)];
    SLIMCUDA_CHECK_OR_RETURN(
        c.ints == b.input_ints && c.tensors == b.input_tensors + b.output_tensors, Error::InvalidProgram,
        "extern-kernel node %lld (%s): the library passes %lld ints and %lld tensors; the node "
        "binds %d ints and %d + %d tensors",
        c.node, b.target.c_str(), c.ints, c.tensors, b.input_ints, b.input_tensors, b.output_tensors);
  }
  return Error::Ok;
}

}  // namespace

std::vector<CallSite> proxy_call_sites(std::string_view source) {
  std::vector<CallSite> sites;
  const std::string_view name = "aoti_torch_proxy_executor_call_function(";
  for (size_t at = source.find(name); at != std::string_view::npos; at = source.find(name, at + 1)) {
    const std::vector<std::string_view> args = call_arguments(source, at + name.size() - 1);
    CallSite c;
    if (args.size() == 6 && literal(args[1], &c.node) && literal(args[2], &c.ints) && literal(args[4], &c.tensors)) {
      sites.push_back(c);
    }
  }
  return sites;
}

Error ProxyExecutor::create(std::string_view nodes_json, std::string_view wrapper_source, ResolveStreamFn resolve,
                            std::shared_ptr<const ProxyExecutor>* out) {
  SLIMCUDA_CHECK_OR_RETURN(registry_error().empty(), Error::Internal, "the proxy op registry is broken: %s",
                           registry_error().c_str());
  std::vector<ExternNode> nodes;
  SLIMCUDA_RETURN_IF_ERROR(parse_extern_nodes(nodes_json, &nodes));
  // Every op the registry lacks is named at once: one load error, not one per attempt.
  std::set<std::string> missing;
  for (const ExternNode& n : nodes) {
    if (find_proxy_op(normalized(n.target)) == nullptr) missing.insert(n.target);
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& t : missing) list += (list.empty() ? "" : ", ") + t;
    return set_last_error(Error::NotSupported,
                          "the model calls %zu op%s through the proxy executor that slimcuda does not implement: %s",
                          missing.size(), missing.size() == 1 ? "" : "s", list.c_str());
  }
  auto e = std::shared_ptr<ProxyExecutor>(new ProxyExecutor());
  e->resolve_ = resolve;
  e->nodes_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SLIMCUDA_RETURN_IF_ERROR(bind_node(nodes[i], i, *find_proxy_op(normalized(nodes[i].target)), &e->nodes_[i]));
  }
  SLIMCUDA_RETURN_IF_ERROR(check_call_sites(wrapper_source, e->nodes_));
  *out = std::move(e);
  return Error::Ok;
}

namespace {

SlimTensor* tensor_of(AtenTensorHandle h) { return reinterpret_cast<SlimTensor*>(h); }

// Places the call's tensors and ints into the node's plan, in schema order (the counts were
// checked against the plan).
void fill(const BoundNode& b, const int64_t* ints, AtenTensorHandle* tensors, ProxyCall* call) {
  int ti = 0, ii = 0;
  for (size_t k = 0; k < b.args.size(); ++k) {
    const ArgPlan& plan = b.args[k];
    const SchemaType type = call->schema->args[k].type;
    ProxyValue v = plan.value;
    if (!v.none) {
      if (type == SchemaType::Tensor) {
        v.tensor = tensor_of(tensors[ti++]);
      } else if (type == SchemaType::TensorList) {
        for (int t = 0; t < plan.tensors; ++t) v.tensors.push_back(tensor_of(tensors[ti++]));
      } else if (type == SchemaType::OptionalTensorList) {
        for (bool p : plan.present) v.tensors.push_back(p ? tensor_of(tensors[ti++]) : nullptr);
      } else if (type == SchemaType::IntList) {
        v.ints.assign(ints + ii, ints + ii + plan.ints);
        ii += plan.ints;
      } else if (plan.ints == 1) {
        v.i = ints[ii++];
      }
    }
    call->args.push_back(std::move(v));
  }
}

// The call's CUDA device: its first CUDA tensor's (-1: none).
int cuda_device(const ProxyCall& call) {
  for (const ProxyValue& v : call.args) {
    if (v.tensor != nullptr && v.tensor->device().is_cuda()) return v.tensor->device().index;
    for (const SlimTensor* t : v.tensors) {
      if (t != nullptr && t->device().is_cuda()) return t->device().index;
    }
  }
  return -1;
}

}  // namespace

Error ProxyExecutor::call(int index, int num_ints, const int64_t* ints, int num_tensors,
                          AtenTensorHandle* tensors) const {
  SLIMCUDA_CHECK_OR_RETURN(index >= 0 && static_cast<size_t>(index) < nodes_.size(), Error::InvalidArgument,
                           "extern-kernel node %d does not exist (the model has %zu)", index, nodes_.size());
  const BoundNode& b = nodes_[static_cast<size_t>(index)];
  SLIMCUDA_CHECK_OR_RETURN(
      num_ints == b.input_ints && num_tensors == b.input_tensors + b.output_tensors, Error::InvalidArgument,
      "extern-kernel node %d (%s): called with %d ints and %d tensors; its node binds %d ints "
      "and %d + %d tensors",
      index, b.target.c_str(), num_ints, num_tensors, b.input_ints, b.input_tensors, b.output_tensors);
  SLIMCUDA_CHECK_OR_RETURN((num_ints == 0 || ints != nullptr) && (num_tensors == 0 || tensors != nullptr),
                           Error::InvalidArgument, "extern-kernel node %d (%s): null argument array", index,
                           b.target.c_str());
  for (int k = 0; k < num_tensors; ++k) {
    SLIMCUDA_CHECK_OR_RETURN(tensors[k] != nullptr, Error::InvalidArgument,
                             "extern-kernel node %d (%s): tensor argument %d is null", index, b.target.c_str(), k);
  }
  ProxyCall c;
  c.schema = &b.op->schema;
  fill(b, ints, tensors, &c);
  const int device = cuda_device(c);
  std::unique_ptr<cuda::DeviceGuard> guard;
  if (device >= 0) {
    guard = std::make_unique<cuda::DeviceGuard>(device);
    SLIMCUDA_RETURN_IF_ERROR(guard->error());
    SLIMCUDA_CHECK_OR_RETURN(resolve_ != nullptr, Error::Internal,
                             "no caller-stream resolution for the proxy executor");
    SLIMCUDA_RETURN_IF_ERROR(resolve_(device, &c.ctx));
  }
  SLIMCUDA_RETURN_IF_ERROR(b.op->kernel(&c));
  // The op's results go to the output handles the generated code made
  // (aoti_torch_new_uninitialized_tensor), in return order.
  SLIMCUDA_CHECK_OR_RETURN(static_cast<int>(c.results.size()) == b.output_tensors, Error::Internal,
                           "%s returned %zu tensors where its node expects %d", b.target.c_str(), c.results.size(),
                           b.output_tensors);
  AtenTensorHandle* outs = tensors + b.input_tensors;
  for (int k = 0; k < b.output_tensors; ++k) {
    SLIMCUDA_CHECK_OR_RETURN(c.results[k] != nullptr, Error::Internal, "%s left result %d empty", b.target.c_str(), k);
    tensor_of(outs[k])->assign(*c.results[k]);
  }
  return Error::Ok;
}

}  // namespace slimcuda::proxy
