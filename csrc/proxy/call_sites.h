// SPDX-License-Identifier: Apache-2.0
#pragma once
// The proxy calls a model library's generated source makes, read from that source
// (untrusted text): each call's node index and argument counts, for the executor to check
// against the node file before any call runs.

#include <string_view>
#include <vector>

namespace slimcuda::proxy {

/// One call the generated source makes: aoti_torch_proxy_executor_call_function(handle,
/// node, num_ints, ints, num_tensors, tensors).
struct CallSite {
  long long node = 0, ints = 0, tensors = 0;
};
/// The call sites in `source` whose node and counts are literals (others are skipped).
[[nodiscard]] std::vector<CallSite> proxy_call_sites(std::string_view source);

}  // namespace slimcuda::proxy
