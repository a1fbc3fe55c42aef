// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/call_sites.h"

namespace slimcuda::proxy {
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

}  // namespace slimcuda::proxy
