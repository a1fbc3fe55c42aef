// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/proxy_executor.h"

#include <set>
#include <utility>

#include "csrc/cuda/device.h"
#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

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

Error ProxyExecutor::create(std::string_view nodes_json, std::string_view wrapper_source, ResolveStreamFn resolve,
                            std::shared_ptr<const ProxyExecutor>* out) {
  SLIMCUDA_CHECK_OR_RETURN(registry_error().empty(), Error::Internal, "the proxy op registry is broken: %s",
                           registry_error().c_str());
  std::vector<ExternNode> nodes;
  SLIMCUDA_RETURN_IF_ERROR(parse_extern_nodes(nodes_json, &nodes));
  // Every op the registry lacks is named at once: one load error, not one per attempt.
  std::set<std::string> missing;
  for (const ExternNode& n : nodes) {
    if (find_proxy_op(normalized_target(n.target)) == nullptr) missing.insert(n.target);
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
    SLIMCUDA_RETURN_IF_ERROR(bind_node(nodes[i], i, *find_proxy_op(normalized_target(nodes[i].target)), &e->nodes_[i]));
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
