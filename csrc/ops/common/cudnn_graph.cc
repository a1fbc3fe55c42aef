// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/common/cudnn_graph.h"

#include <cuda_runtime_api.h>
#include <cudnn_frontend.h>

#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace slimcuda::ops::cudnn_graph {

namespace fe = cudnn_frontend;

bool finalize(fe::graph::Graph& graph, cudnnHandle_t handle, int64_t first_uid, int64_t last_uid, const char* what,
              int64_t* workspace, std::vector<int64_t>* uids, std::string* reason) {
  auto check = [&](fe::error_t st, const char* step) {
    if (st.is_good()) return true;
    *reason = std::string("cuDNN ") + step + ": " + st.err_msg;
    return false;
  };
  if (!check(graph.validate(), "validate")) return false;
  if (!check(graph.build_operation_graph(handle), "build_operation_graph")) return false;
  if (!check(graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans"))
    return false;
  if (!check(graph.check_support(), "check_support")) return false;
  if (!check(graph.build_plans(), "build_plans")) return false;
  int64_t bytes = 0;
  if (!check(graph.get_workspace_size(bytes), "get_workspace_size")) return false;
  std::vector<int64_t> sorted = graph.get_variant_pack_uids_sorted();
  for (int64_t u : sorted) {
    if (u < first_uid || u > last_uid) {
      *reason = std::string("the ") + what + " graph wants an input slimcuda does not provide (uid " +
                std::to_string(u) + ")";
      return false;
    }
  }
  *workspace = bytes;
  *uids = std::move(sorted);
  return true;
}

Error execute(const fe::graph::Graph& graph, cudnnHandle_t handle, void** ptrs, int n, void* workspace,
              const char* what) noexcept {
  try {
    fe::error_t st = graph.execute(handle, ptrs, n, workspace);
    if (st.is_bad()) return set_last_error(Error::Internal, "cuDNN %s failed: %s", what, st.err_msg.c_str());
  } catch (const std::exception& e) {
    return set_last_error(Error::Internal, "cuDNN %s failed: %s", what, e.what());
  } catch (...) {
    return set_last_error(Error::Internal, "cuDNN %s failed (non-standard exception)", what);
  }
  return Error::Ok;
}

Error SmVersionCache::get(int device, int* out) noexcept {
  if (device_ != device) {
    int major = 0, minor = 0;
    cudaError_t err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return set_last_error(Error::Internal, "cudaDeviceGetAttribute(cuda:%d) failed: %s", device,
                            cudaGetErrorString(err));
    }
    device_ = device;
    version_ = major * 10 + minor;
  }
  *out = version_;
  return Error::Ok;
}

Error unsupported(const LastErrorSnapshot& snapshot, std::string reason, std::string* slot) noexcept {
  snapshot.restore();
  try {
    *slot = std::move(reason);
  } catch (...) {
    // Out of host memory for the reason alone: the answer stands without it.
  }
  return Error::NotSupported;
}

}  // namespace slimcuda::ops::cudnn_graph
