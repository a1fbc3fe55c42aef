// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/graph/graph_runner.h"
#include "csrc/model/constants.h"
#include "csrc/model/extern_kernels.h"
#include "csrc/model/instance_slots.h"
#include "csrc/model/library.h"
#include "csrc/model/state.h"
#include "csrc/package/model_package.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// A loaded model: one library of a package, loaded from memory as its own object
/// (ModelLibrary: a memfd, no file ever exists, nothing is left behind), with its
/// AOTInductor container. Its aoti_torch_* calls resolve to this libslimcuda.so.
///
/// Untrusted input: the package's metadata, the library's ELF shape and its integrity hash
/// are checked before anything is loaded; the library's code is not and cannot be —
/// loading runs its ELF constructors with this process's privileges, as loading any plugin
/// does. Load only models you would run as code.
///
/// Instances: the container holds N model instances (AOTInductor's num_models: each its
/// own activations, the weights shared), and the Model N instance slots (InstanceSlots). A
/// run takes a free slot, so it never waits for another caller's work while an instance is
/// free; when all N are busy it waits for one. With N slots and N container models a run
/// holding a slot always finds a free instance inside the container.
///
/// Thread safety: run, method, device and instances may be called from any number of
/// threads at once (each run its own inputs, outputs and stream). Destroying the Model
/// while another thread is in, or about to enter, any of them is the caller's error
/// (undefined behaviour, as for any object): nothing tracks callers. Go's Model does
/// (Close waits for runs in flight).
class Model {
 public:
  /// Default instances when the caller asks for 0. CPU: 1 — AOTInductor's CPU kernels
  /// already spread one run over the cores (OpenMP), so a second instance mostly adds
  /// contention and activation memory. CUDA: 4 — bench/serving_benchmark on the H200
  /// (2026-12-01, docs/benchmarks.md): with 8 callers 4 instances gave 1.6-1.8 x the runs/s
  /// of 2 on the zoo's mlp_relu and vision_block (CUDA graphs on), within noise of 2 for
  /// one caller; each instance costs one set of the model's activations.
  static constexpr int kDefaultCpuInstances = 1;
  static constexpr int kDefaultCudaInstances = 4;
  static constexpr int kMaxInstances = 64;

  /// A load's device type: -1 (auto), 0 (CPU) or 1 (CUDA), else InvalidArgument.
  /// The one check of it, for packages (load) and .pt2 archives alike.
  [[nodiscard]] static Error check_device_type(int device_type) noexcept;

  /// device_type (check_device_type) -1 picks CUDA when a GPU and a CUDA library are there,
  /// else CPU.
  /// device_index -1: the current device. instances: 0 for the default above, else
  /// 1..kMaxInstances (InvalidArgument otherwise). Load errors: no library for the device, or
  /// one calling shims slimcuda lacks (all named) -> NotSupported; a library that does not load, lacks the container
  /// ABI or whose container cannot be created -> InvalidProgram; out of file descriptors -> OutOfResources. `graphs`:
  /// CUDA graphs for runs on a non-blocking stream (csrc/graph/graph_runner.h); ignored on the CPU.
  [[nodiscard]] static Error load(const ModelPackage& package, int device_type, int device_index, int instances,
                                  std::unique_ptr<Model>* out,
                                  graph::GraphMode graphs = graph::GraphMode::Off) noexcept;

  /// What describes a library's inputs when no manifest does (a .pt2): called once the
  /// container exists, with its input count; fills one spec per input, or returns NotFound
  /// to leave them unknown (TensorSpec::known false); any other error fails the load.
  using DescribeInputs = std::function<Error(size_t num_inputs, std::vector<TensorSpec>* out)>;

  /// Loads one library of `type` from `size` bytes (the bytes are copied into the memfd;
  /// they may go once this returns). `declared`: the manifest's method, whose input and
  /// output counts must match the container's (InvalidProgram otherwise); nullptr: the
  /// method is the container's own (names from ...GetInputName/GetOutputName where the
  /// library has them), its inputs described by `describe` (may be empty). device_index,
  /// instances and the errors: as for load.
  [[nodiscard]] static Error load_library(const uint8_t* so, size_t size, DeviceType type, int device_index,
                                          int instances, const MethodSpec* declared, const DescribeInputs& describe,
                                          std::unique_ptr<Model>* out, graph::GraphMode graphs = graph::GraphMode::Off,
                                          std::shared_ptr<const ExternKernels> externs = nullptr) noexcept;
  ~Model();
  // One container and one dlopen handle each; copies would free them twice.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) = delete;
  Model& operator=(Model&&) = delete;

  [[nodiscard]] const MethodSpec& method() const noexcept { return method_; }
  [[nodiscard]] Device device() const noexcept { return device_; }
  /// The number of instances (resolved at load: never 0).
  [[nodiscard]] int instances() const noexcept { return static_cast<int>(slots_->count()); }
  /// CUDA graph counters (all zero with graphs off).
  [[nodiscard]] graph::GraphStats graph_stats() const noexcept {
    return graphs_ != nullptr ? graphs_->stats() : graph::GraphStats{};
  }

  /// Runs "forward". Inputs are checked against the manifest (dtype, rank, sizes within
  /// bounds, device, and for CUDA that the data really is device memory of the model's
  /// device, dim order when declared) -> InvalidArgument; outputs the model returns are
  /// checked too -> InvalidProgram. `outputs` receives new tensors (the caller deletes
  /// them). CUDA models run on ctx's stream when one is selected (the entry point resolved
  /// ctx for the model's device; the call returns
  /// once the work is enqueued) and otherwise on the model's own stream, waiting for it
  /// before returning. An output that borrows memory of the model (its library's static
  /// data, its container's constants) keeps the library and container alive as long as it
  /// lives, so it stays readable after the Model is destroyed. Takes an instance slot for
  /// the container's Run, waiting while all are taken.
  /// Gives the container the weights kept outside its library (attach_constants in
  /// constants.h: checks, upload through pinned chunks on ctx's stream when one is selected,
  /// else on the model's own stream, one copy per model and device in the process, then
  /// the container's constants API). `identity` names the model for sharing (the `.pt2`
  /// loader passes its library's hash; "" = never shared). The weights stay as long as the
  /// container (and any output borrowing from it). Call once, after load and before any
  /// run, from one thread; a second call -> InvalidState.
  [[nodiscard]] Error attach_constants(const std::vector<ConstantEntry>& entries, const std::string& identity,
                                       const StreamContext& ctx) noexcept;
  /// Has the container read a `.pt2`'s weights blob itself (AOTInductorModelUpdateConstants
  /// FromBlob, PyTorch's loader's path), for a CUDA model with CPU constants, which PyTorch
  /// 2.11's containers take through no other path: its own cudaMalloc and synchronous
  /// copies (not slimcuda's allocator or the caller's stream, not shared between loads, no
  /// second container for CUDA graphs). `blob` holds `size` bytes, checked against the
  /// constants' sizes by the caller (entries_from_blob); the container copies what it needs.
  /// Afterwards every non-folded constant with bytes must be in the container, else
  /// InvalidProgram. A library without the function -> NotSupported. Same rules as
  /// attach_constants: once, before any run.
  [[nodiscard]] Error load_constants_from_blob(const uint8_t* blob, uint64_t size) noexcept;
  /// How attach_constants handed the weights over and whether they were shared (tests,
  /// `slimcuda info`); nullopt before it ran.
  [[nodiscard]] const std::optional<AttachedConstants>& constants() const noexcept { return constants_; }
  /// The container's own constants as it reports them (names, FQNs, dtypes, sizes): what a
  /// loader matches the archive's weights against. NotSupported when the library lacks the
  /// constants API.
  [[nodiscard]] Error container_constants(std::vector<ContainerConstant>* out) const noexcept;

  [[nodiscard]] Error run(SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs, size_t num_outputs,
                          const StreamContext& ctx) noexcept;

  /// One of the model's constants, as slimcuda sees it (state.h says what state is).
  struct Constant {
    ContainerConstant info;
    bool state = false;                  ///< a run may write it: one per load, resettable
    const SlimTensor* tensor = nullptr;  ///< what runs use (nullptr: the library does not show it)
  };

  /// Finds which constants runs write and gives this load its own copy of them (state.h):
  /// call once after load (and attach_constants), before any run. `wrapper_source`: the
  /// generated source PyTorch packs beside the library (what proves a buffer read-only;
  /// nullptr: none). A model with state runs one call at a time: its instances become 1,
  /// and a load that asked for more fails (InvalidArgument, naming the state). The copy is
  /// made on ctx's stream when one is selected, else on the model's own, and is complete on
  /// return. A library without the constants API shows no constants: nothing to do.
  [[nodiscard]] Error prepare_state(const std::string* wrapper_source, const StreamContext& ctx) noexcept;
  /// The constants (empty before prepare_state, or for a library without the constants API).
  [[nodiscard]] const std::vector<Constant>& constants_table() const noexcept { return table_; }
  /// Whether runs write some constants.
  [[nodiscard]] bool stateful() const noexcept { return stateful_; }
  /// Every state constant back to its initial value (nothing to do without state). Ordered
  /// after the model's previous run and before its next, whatever their streams; enqueued on
  /// ctx's stream when one is selected, else done on return. NotSupported where the state
  /// stays inside the container (a library without ExtractConstantsMap or the user-managed
  /// constants API).
  [[nodiscard]] Error reset_state(const StreamContext& ctx) noexcept;
  /// dst <- the constant named `name` (the container's name or its FQN), any constant;
  /// src -> the state constant `name` (a read-only weight: InvalidArgument). Sizes must match
  /// (copy_tensor's rules, dtypes converted). Ordered as reset_state.
  [[nodiscard]] Error read_constant(const char* name, const SlimTensor& dst, const StreamContext& ctx) noexcept;
  [[nodiscard]] Error write_constant(const char* name, const SlimTensor& src, const StreamContext& ctx) noexcept;

  /// Weights swapped while serving (docs/state.md), as PyTorch's container does with its
  /// inactive buffer. stage_weights copies a new value of every read-only weight (`names`
  /// the containers' names or FQNs, each tensor of the weight's dtype and sizes, on the
  /// host or the device) into new memory on ctx's stream when one is selected (else done
  /// on return), and hands it to the container's inactive set; runs go on with the active
  /// one meanwhile. A missing, repeated or unknown weight, a state constant, another dtype
  /// or sizes -> InvalidArgument, the active weights untouched; one staged already ->
  /// InvalidState. swap_weights makes the staged set active between runs (it waits for the
  /// runs inside the model, and CUDA graphs are made again on the next runs); the state
  /// stays as it is. free_inactive_weights frees the set swapped out (after the GPU is
  /// done with it), or a staged set not swapped in.
  [[nodiscard]] Error stage_weights(const std::vector<std::string>& names,
                                    const std::vector<const SlimTensor*>& tensors, const StreamContext& ctx) noexcept;
  [[nodiscard]] Error swap_weights() noexcept;
  [[nodiscard]] Error free_inactive_weights() noexcept;

 private:
  Model() = default;
  // The method of a library without a manifest: the container's counts and names, the
  // inputs as `describe` says (unknown where it cannot), the outputs unknown.
  [[nodiscard]] Error describe_from_container(size_t n_in, size_t n_out, const DescribeInputs& describe);
  // Hands the attached constants (if any) and the state to another container of the
  // library: the CUDA graphs' capture container.
  [[nodiscard]] Error share_constants_with(void* container) const noexcept;
  // Hands `weights` to `container` (full: every constant; else only these), keeping the
  // handles it makes of them until it is gone.
  [[nodiscard]] Error hand_to(const ContainerConstantsApi& api, void* container, const DeviceWeights& weights,
                              bool full) const noexcept;
  // The stream a state operation (reset, read, write) of ctx goes on; *own true when it is
  // the model's own (wait for it before returning).
  [[nodiscard]] Error state_stream(const StreamContext& ctx, cudaStream_t* stream, bool* own) const noexcept;
  // A copy between a constant and a caller's tensor, ordered with the runs.
  [[nodiscard]] Error copy_constant(const SlimTensor& dst, const SlimTensor& src, const StreamContext& ctx) noexcept;
  [[nodiscard]] const Constant* find_constant(const char* name) const noexcept;
  // (Re)makes the CUDA graph runner from graph_abi_ (load, and after a weight swap).
  void make_graphs();

  // A run's steps (run): the arguments against the method; the run enqueued on one instance
  // (a graph replay, or the container's Run) with the outputs owned in `out`; a failed Run's
  // error; the outputs against the method; outputs borrowing the model's memory made to keep
  // it loaded. enqueue and keep_owners may throw std::bad_alloc (run catches it).
  using Outputs = std::vector<std::unique_ptr<SlimTensor>>;
  [[nodiscard]] Error check_run_args(SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs,
                                     size_t num_outputs) const noexcept;
  [[nodiscard]] Error enqueue(SlimTensor* const* inputs, size_t num_inputs, Outputs* out, void* stream);
  [[nodiscard]] Error run_failure(int32_t rc, void* stream) const;
  [[nodiscard]] Error check_outputs(const Outputs& out) const noexcept;
  void keep_owners(Outputs* out) const;

  // What runs use now for each of `constants` (prepare_state): the attached weights, else
  // views of the container's own. May throw std::bad_alloc.
  [[nodiscard]] Error current_constants(const ContainerConstantsApi& api,
                                        const std::vector<ContainerConstant>& constants,
                                        std::vector<const SlimTensor*>* out);

  // stage_weights' steps: each read-only weight matched to one given tensor of its dtype and
  // sizes (before anything is allocated), then copied into one new block. May throw
  // std::bad_alloc (stage_weights catches it).
  [[nodiscard]] Error match_staged_weights(const std::vector<std::string>& names,
                                           const std::vector<const SlimTensor*>& tensors,
                                           std::vector<const Constant*>* wanted,
                                           std::vector<const SlimTensor*>* given) const;
  [[nodiscard]] Error copy_staged_weights(const std::vector<const Constant*>& wanted,
                                          const std::vector<const SlimTensor*>& given, const StreamContext& ctx,
                                          std::shared_ptr<DeviceWeights>* out);

  using CreateFn = int32_t (*)(void**, size_t, const char*, const char*);
  using DeleteFn = int32_t (*)(void*);
  // load_library's steps: the device (a CUDA model's own stream made on it), the container
  // (kept by loaded_ as soon as it exists), the CUDA graph runner. May throw std::bad_alloc.
  [[nodiscard]] Error place(DeviceType type, int device_index, std::string* device_str);
  // What runs pass the library as its proxy executor (null when it has no extern kernels).
  [[nodiscard]] void* proxy_handle() const noexcept {
    return loaded_ != nullptr && loaded_->externs != nullptr ? loaded_->externs->handle() : nullptr;
  }
  [[nodiscard]] Error create_container(CreateFn create, DeleteFn destroy, int instances, const std::string& device_str);
  void enable_graphs(CreateFn create, DeleteFn destroy, const std::string& device_str, graph::GraphMode graphs);
  using CountFn = int32_t (*)(void*, size_t*);
  using RunFn = int32_t (*)(void*, void**, size_t, void**, size_t, void*, void*);

  // The library and the container it created, released together when the Model and every
  // output borrowing from them are gone (container first, then dlclose).
  struct Loaded {
    std::shared_ptr<ModelLibrary> library;
    std::shared_ptr<const void> weights;           // constants the container uses (attach_constants)
    std::shared_ptr<const ExternKernels> externs;  // the proxy executor its runs pass (null: none)
    // Handles of the constants the containers (the model's, the graphs' capture container)
    // keep and never delete: freed after every container is gone.
    std::mutex adopted_mu;
    std::vector<std::shared_ptr<const void>> adopted;
    // This load's state (prepare_state): what the containers write, handed to them.
    std::shared_ptr<ModelState> state;
    // Views of the container's own constants (what its library embeds), kept by us.
    std::vector<std::unique_ptr<SlimTensor>> views;
    void* container = nullptr;
    DeleteFn destroy = nullptr;
    int device = -1;  // a CUDA model's GPU
    ~Loaded() {
      // AOTInductor's container throws from its destructor when cudaFree fails, as it does
      // on a lost context (the process would abort): its memory goes with the process.
      const bool lost = cuda::device_lost(device);
      if (container != nullptr && destroy != nullptr && !lost) destroy(container);
      adopted.clear();
      state.reset();
      views.clear();
      weights.reset();  // after the container that points at them
    }
  };

  std::shared_ptr<Loaded> loaded_;
  std::unique_ptr<InstanceSlots> slots_;
  std::unique_ptr<graph::GraphRunner> graphs_;  // CUDA models loaded with graphs on
  RunFn run_ = nullptr;
  cudaStream_t stream_ = nullptr;  // the model's own stream (CUDA models)
  bool own_stream_ = false;
  Device device_;
  MethodSpec method_;
  std::optional<AttachedConstants> constants_;
  int requested_instances_ = 0;  // what the load asked for (0: the default)
  std::vector<Constant> table_;
  bool stateful_ = false;
  // The state's runs and operations in one order, whatever their streams (CUDA models with
  // state): each waits for it on its stream and records it after.
  cudaEvent_t state_fence_ = nullptr;
  graph::ContainerAbi graph_abi_;
  graph::GraphMode graph_mode_ = graph::GraphMode::Off;
  // Weight swaps: one at a time (also against read_constant and write_constant, which read
  // the table a swap repoints); the staged set (the container's inactive one), the set
  // swapped out, and whether the active set is a swapped one (it lacks the state).
  std::mutex swap_mu_;
  std::shared_ptr<const void> staged_, inactive_;
  bool swapped_ = false;
};

/// Checks one tensor against its spec (the runner's input and output checks).
[[nodiscard]] Error check_tensor_against(const SlimTensor& t, const TensorSpec& spec, Device model_device,
                                         const char* what, size_t index, Error on_mismatch) noexcept;

}  // namespace slimcuda
