// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/registry.h"

#include <algorithm>
#include <string>

#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

struct Registry {
  std::vector<RegisteredOp> ops;
  std::string error;
};

Registry build() {
  Registry r;
  std::vector<ProxyOp> all;
  for (auto family : {transformers_ops, torchvision_ops, aten_ops}) {
    for (const ProxyOp& op : family()) all.push_back(op);
  }
  for (const ProxyOp& op : all) {
    RegisteredOp e;
    if (parse_op_schema(op.schema, &e.schema) != Error::Ok) {
      r.error = last_error_message();
      r.ops.clear();
      return r;
    }
    e.kernel = op.kernel;
    r.ops.push_back(std::move(e));
  }
  std::sort(r.ops.begin(), r.ops.end(),
            [](const RegisteredOp& a, const RegisteredOp& b) { return a.schema.target() < b.schema.target(); });
  return r;
}

const Registry& registry() {
  static const Registry r = build();  // thread-safe once; the tables are constants
  return r;
}

}  // namespace

const std::vector<RegisteredOp>& proxy_ops() { return registry().ops; }
const std::string& registry_error() { return registry().error; }

const RegisteredOp* find_proxy_op(std::string_view target) {
  const auto& ops = proxy_ops();
  auto it = std::lower_bound(ops.begin(), ops.end(), target,
                             [](const RegisteredOp& a, std::string_view t) { return a.schema.target() < t; });
  return it != ops.end() && it->schema.target() == target ? &*it : nullptr;
}

}  // namespace slimcuda::proxy
