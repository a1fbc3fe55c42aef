// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the ops on the cuDNN frontend's graph API (attention_cudnn.cc, convolution_cudnn.cc)
// do alike around the graph each describes: key their graph caches, finalize a graph into
// plans, turn what the frontend throws into a reason, tell it the device's sm_version, run
// a built graph, and answer a declined problem quietly.
// The mechanism only: each op keeps its own state (graph cache, counters, reason string) in
// its own thread-local, so one op's cache or reason never shows through the other's.
//
// Threading: nothing here is global. SmVersionCache and the reason string live in each op's
// per-thread state; the frontend calls run on the caller's thread and cuDNN handle.
//
// Includes the frontend: compile every includer with BUILD.bazel's CUDNN_FRONTEND_DEFINES.

#include <cudnn_frontend.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "slimcuda/error.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops::cudnn_graph {

/// A graph cache's key: every value an op's graph depends on, in a fixed-size array so that
/// building and hashing it costs no allocation. N is the op's longest key (add() past it is
/// a bug in the op).
template <size_t N>
struct GraphKey {
  std::array<int64_t, N> v{};
  size_t n = 0;
  void add(int64_t x) noexcept { v[n++] = x; }
  bool operator==(const GraphKey& o) const noexcept {
    return n == o.n && std::memcmp(v.data(), o.v.data(), n * sizeof(int64_t)) == 0;
  }
};

struct GraphKeyHash {
  template <size_t N>
  size_t operator()(const GraphKey<N>& k) const noexcept {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
    for (size_t i = 0; i < k.n; ++i) {
      h ^= static_cast<uint64_t>(k.v[i]);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

/// Turns a described `graph` into an executable one on `handle`: validate,
/// build_operation_graph, create_execution_plans (heuristics A, then FALLBACK),
/// check_support, build_plans. On success sets *workspace (bytes) and *uids (the user
/// tensors' uids in the order execute takes them) and returns true. False with *reason
/// otherwise: "cuDNN <step>: <frontend message>", or a uid outside [first_uid, last_uid],
/// one the op has no pointer for ("the <what> graph wants an input slimcuda does not
/// provide (uid N)"); *workspace and *uids are then untouched. The frontend may throw: call
/// it inside catch_frontend.
[[nodiscard]] bool finalize(cudnn_frontend::graph::Graph& graph, cudnnHandle_t handle, int64_t first_uid,
                            int64_t last_uid, const char* what, int64_t* workspace, std::vector<int64_t>* uids,
                            std::string* reason);

/// Runs a finalized `graph` on `handle` (bound to the call's stream) with the user pointers
/// in the order finalize's uids gave; the frontend's error or exception is Internal, with the
/// last error "cuDNN <what> failed: ...".
[[nodiscard]] Error execute(const cudnn_frontend::graph::Graph& graph, cudnnHandle_t handle, void** ptrs, int n,
                            void* workspace, const char* what) noexcept;

/// build() (returning false with *reason set when cuDNN cannot serve the problem), with an
/// exception it throws made a reason too ("the cuDNN frontend threw: ..."): a frontend
/// failure is a declined problem, not a crash. Only std::bad_alloc while writing that reason
/// escapes, to the op's own catch.
template <typename Build>
[[nodiscard]] bool catch_frontend(std::string* reason, Build&& build) {
  try {
    return build();
  } catch (const std::exception& e) {
    *reason = std::string("the cuDNN frontend threw: ") + e.what();
  } catch (...) {
    *reason = "the cuDNN frontend threw a non-standard exception";
  }
  return false;
}

/// The sm_version the frontend is given (the device's compute capability, 90 for an H200),
/// so that it never asks the CUDA runtime itself (it would dlopen one). Read once and kept
/// for the last device asked about. One per op's per-thread state: not thread-safe.
class SmVersionCache {
 public:
  /// *out = the sm_version of `device`; Internal (with the reason in the last error) when the
  /// runtime cannot tell, with its sticky error cleared and nothing cached.
  [[nodiscard]] Error get(int device, int* out) noexcept;

 private:
  int device_ = -1;  // the device version_ was read for
  int version_ = 0;
};

/// The quiet NotSupported answer of an op whose caller falls back to another path: puts back
/// the last-error text `snapshot` took (what was tried leaves no trace) and keeps `reason` in
/// *slot, the op's per-thread unsupported reason. Out of host memory for the reason alone,
/// the answer stands without it.
[[nodiscard]] Error unsupported(const LastErrorSnapshot& snapshot, std::string reason, std::string* slot) noexcept;

}  // namespace slimcuda::ops::cudnn_graph
