// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/binding.h"

#include <map>
#include <string>
#include <utility>

#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

Error mismatch(size_t index, const ExternNode& node, const std::string& arg, const char* what) {
  return set_last_error(Error::InvalidProgram, "extern-kernel node %zu (%s): argument '%s': %s", index,
                        node.target.c_str(), arg.c_str(), what);
}

}  // namespace

std::string normalized_target(const std::string& target) {
  const std::string suffix = ".default";
  if (target.size() > suffix.size() && target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0)
    return target.substr(0, target.size() - suffix.size());
  return target;
}

namespace {

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

}  // namespace slimcuda::proxy
