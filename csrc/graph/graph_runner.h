// SPDX-License-Identifier: Apache-2.0
#pragma once

// CUDA graphs for a model's runs: the first run of an input layout (dtypes, sizes, strides)
// on an instance slot captures the model's work into a graph; later runs of that layout on
// that slot replay it. Small models are launch-bound (tens of kernels of a few µs each);
// a replay is one launch.
//
// How a graph is made. The AOTInductor container cannot take part: a captured Run leaves
// its instance's completion event "recorded in a capture", which the container later
// queries and fails on (cudaErrorCapturedEvent). So captures run through a second
// container of the same library, created on the first capture with one instance and
// called only through RunSingleThreaded (which touches no events), one capture at a time.
// Per capture, on the caller's stream:
//   1. a private pool (device_memory::PrivatePool) takes every allocation on the stream;
//   2. the inputs are copied into static input tensors from that pool;
//   3. one warm-up run (loads kernels, builds cuBLASLt/cuDNN plans, creates handles and
//      grows the pool to the run's needs), then the stream is synchronized;
//   4. the run again under cudaStreamBeginCapture (thread-local mode: a synchronizing or
//      allocating call inside the model invalidates the capture instead of running); the
//      pool takes no new segment meanwhile; its outputs become the static outputs;
//   5. the graph is instantiated. Any failure undoes all of it: nothing is left captured,
//      routed or allocated, and the stream is usable.
// The graph replayed is the captured run wrapped in copies: a memcpy node per input (the
// caller's tensor into the static input) before it, one per output (the static output into
// the call's new tensor) after it. A replay waits (on the GPU) for the previous replay of
// the same graph if it ran on another stream, points the copy nodes at this call's tensors
// (cudaGraphExecMemcpyNodeSetParams1D: host work only), launches the graph once, and
// records its completion: everything on the caller's stream, nothing waits on the host. A
// copy node the driver refuses to point at a tensor is disabled for that call and the copy
// goes on the stream beside the launch, as it did before the nodes.
//
// Memory: each graph keeps its pool (the run's activations, peak of one run) while the
// model lives; the second container holds its own copy of the weights the library embeds,
// and shares the model's when they were attached from outside the library (ContainerAbi::
// prepare).

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda::graph {

/// What the runner needs from the model library (the container C ABI).
struct ContainerAbi {
  using CreateFn = int32_t (*)(void**, size_t, const char*, const char*);
  using DeleteFn = int32_t (*)(void*);
  using RunFn = int32_t (*)(void*, void**, size_t, void**, size_t, void*, void*);
  /// The AOTIProxyExecutorHandle captured and replayed runs pass (null: the model has no
  /// extern kernels).
  void* proxy_executor = nullptr;
  CreateFn create = nullptr;
  DeleteFn destroy = nullptr;
  RunFn run_single_threaded = nullptr;  ///< AOTInductorModelContainerRunSingleThreaded
  std::string device_str;               ///< "cuda:N", as the model's own container was made
  /// Called once on the capture container right after it is made, before its first run
  /// (the model hands it the weights it attached to its own container); an error leaves no
  /// capture container (the capture fails with that reason). Empty: nothing to do.
  std::function<Error(void* container)> prepare;
  /// Around a capture's warm-up run, which is a real run: `save_state` copies what runs
  /// write (the model's state, csrc/model/state.h) on the stream and `restore_state` puts
  /// it back before the capture, so the call that captures changes the state once, by its
  /// replay. Empty: the model keeps no state.
  std::function<Error(cudaStream_t stream, std::shared_ptr<Storage>* saved)> save_state;
  std::function<Error(cudaStream_t stream, const Storage& saved)> restore_state;
};

/// Counters, for stats and tests.
struct GraphStats {
  uint64_t captures = 0;   ///< graphs made
  uint64_t replays = 0;    ///< runs served by a graph
  uint64_t fallbacks = 0;  ///< runs that went the normal way (capture failed or refused)
  uint64_t graphs = 0;     ///< graphs alive
};

enum class GraphMode : int32_t {
  Off = 0,
  On = 1,      ///< a layout that cannot be captured runs the normal way (counted in fallbacks)
  Strict = 2,  ///< such a run fails with NotSupported and the reason
};

class GraphRunner {
 public:
  /// Checks a static output as the model checks outputs (tensor, index).
  using OutputCheck = std::function<Error(const SlimTensor&, size_t)>;
  /// Graphs kept per instance slot; a new layout past it runs the normal way.
  static constexpr size_t kMaxGraphsPerSlot = 16;
  /// Runs with more outputs than this run the normal way (*handled false).
  static constexpr size_t kMaxOutputs = 64;

  /// `keep_alive` holds the library the ABI's functions live in.
  GraphRunner(ContainerAbi abi, std::shared_ptr<void> keep_alive, int device, size_t slots, GraphMode mode,
              OutputCheck check) noexcept;
  ~GraphRunner();
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;

  /// Runs checked inputs on `stream` (a non-blocking stream of the runner's device; the
  /// caller holds instance slot `slot`). *handled false: nothing was enqueued, the caller
  /// runs the model the normal way. Errors: a failed capture in Strict mode
  /// (NotSupported, with the reason), a failed replay (CUDA's error). The outputs are new
  /// tensors on `stream`, like a normal run's.
  [[nodiscard]] Error run(size_t slot, SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs,
                          size_t num_outputs, cudaStream_t stream, bool* handled) noexcept;

  [[nodiscard]] GraphStats stats() const noexcept;
  /// Why the last capture that failed did (empty if none has).
  [[nodiscard]] std::string last_failure() const;

  struct Captured;

 private:
  Error capture(std::vector<int64_t> key, SlimTensor* const* inputs, size_t num_inputs, size_t num_outputs,
                cudaStream_t stream, std::unique_ptr<Captured>* out) noexcept;
  // capture's steps: the warm-up run, then the captured one. May throw std::bad_alloc.
  Error warm_up(Captured& g, size_t num_inputs, size_t num_outputs, cudaStream_t stream, const Storage* saved);
  Error record(Captured& g, size_t num_inputs, size_t num_outputs, cudaStream_t stream, cudaGraph_t* graph);
  Error replay(Captured& g, SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs, size_t num_outputs,
               cudaStream_t stream) noexcept;
  Error ensure_container() noexcept;
  void note_failure(const std::vector<int64_t>& key, const std::string& why) noexcept;

  ContainerAbi abi_;
  std::shared_ptr<void> keep_alive_;
  int device_;
  GraphMode mode_;
  OutputCheck check_;

  // Per slot: touched only by the caller holding that slot.
  std::vector<std::vector<std::unique_ptr<Captured>>> slots_;

  std::mutex capture_mu_;  // one capture at a time: the second container, and its single instance
  void* container_ = nullptr;

  mutable std::mutex mu_;                     // failed_ and last_failure_
  std::vector<std::vector<int64_t>> failed_;  // layouts that could not be captured
  std::string last_failure_;
  std::atomic<uint64_t> captures_{0}, replays_{0}, fallbacks_{0}, graphs_{0};
};

/// The layout key of a run's inputs: per input its dtype, rank, sizes and strides.
[[nodiscard]] std::vector<int64_t> layout_key(SlimTensor* const* inputs, size_t num_inputs);

}  // namespace slimcuda::graph
