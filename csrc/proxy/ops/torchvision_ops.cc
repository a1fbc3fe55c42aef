// SPDX-License-Identifier: Apache-2.0
// torchvision's custom ops (detection's post-processing and pooling), reached through the
// proxy executor.
#include "csrc/proxy/registry.h"

namespace slimcuda::proxy {

std::vector<ProxyOp> torchvision_ops() { return {}; }

}  // namespace slimcuda::proxy
