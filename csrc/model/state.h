// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/model/constants.h"
#include "csrc/model/weights_cache.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda {

// A model's state (docs/state.md): the constants its runs write, such as a KV cache kept in
// registered buffers and updated in place. State is never shared between loads, normal
// runs and CUDA-graph replays see the same state, and it can be put back to its initial
// values. Read-only weights stay shared.

/// The constants a generated AOTInductor wrapper source provably only reads. A constant is
/// proven read-only when every use of it in the source is one of:
///  - an argument of a Triton kernel's launcher (`call_triton_<kernel>(...)`) in a position
///    whose parameter is named `in_ptr<N>` in that launcher's definition (Inductor names
///    what a kernel writes `out_ptr<N>` or `in_out_ptr<N>`);
///  - an argument after the first of mm_out, addmm_out or bmm_out (the first is the
///    result), or any argument of convolution or scaled-dot-product attention (functional:
///    they write only the handles they return), directly or through a
///    reinterpret_tensor_wrapper view in that call;
///  - a `(const T*)(name.data_ptr())` argument of a CPU kernel.
/// Any other use (a view kept in a variable, another fallback op, a copy) proves nothing.
/// What PyTorch 2.11 emits is measured in docs/state.md.
[[nodiscard]] std::set<std::string> wrapper_read_only_constants(std::string_view source);

/// Whether a run may write constant `c`: anything not proven read-only. Parameters and
/// folded constants never are (PyTorch 2.11 folds a parameter written in forward into a
/// compile-time value and returns it as an extra output: docs/state.md); a buffer, a
/// tensor constant or a constant of unknown kind is state unless `read_only` (the wrapper
/// source's proof; nullptr: no source) names it.
[[nodiscard]] bool is_state(const ContainerConstant& c, const std::set<std::string>* read_only) noexcept;

/// One load's state: its own memory holding every written constant (one allocation, one
/// tensor per constant over exactly its bytes: what the containers are handed), and views
/// of the initial values, which nothing writes (the shared upload of archive weights, or
/// the container's own copy of what its library embeds: the containers no longer point at
/// it once the state is handed over).
///
/// Thread safety: none of its own; the Model serializes its use (one run at a time).
class ModelState {
 public:
  /// Copies each `initial[i]`'s storage bytes into new memory on `device` (on ctx's stream
  /// for CUDA, waiting for the copies before returning). `keep_initial` keeps the initial
  /// values' memory alive. names[i] is the container's name of constant i.
  [[nodiscard]] static Error create(const std::vector<std::string>& names,
                                    const std::vector<const SlimTensor*>& initial, Device device,
                                    const StreamContext& ctx, std::shared_ptr<const void> keep_initial,
                                    std::unique_ptr<ModelState>* out) noexcept;
  ModelState(const ModelState&) = delete;
  ModelState& operator=(const ModelState&) = delete;

  /// What the containers use: the state's tensors, by the containers' names.
  [[nodiscard]] const DeviceWeights& current() const noexcept { return *current_; }
  [[nodiscard]] size_t count() const noexcept { return current_->count(); }
  [[nodiscard]] uint64_t bytes() const noexcept { return current_->bytes(); }
  /// The index of the state constant `name`, if it is one.
  [[nodiscard]] std::optional<size_t> find(const std::string& name) const noexcept;

  /// Every state constant back to its initial value, enqueued on `stream` (CUDA; nullptr
  /// on the CPU, where it is done on return).
  [[nodiscard]] Error reset(cudaStream_t stream) noexcept;
  /// A copy of the whole state on `stream`, and its return (the CUDA-graph capture's warm-up
  /// run is a real run: its writes are undone so that the call changes the state once).
  [[nodiscard]] Error save(cudaStream_t stream, std::shared_ptr<Storage>* saved) noexcept;
  [[nodiscard]] Error restore(cudaStream_t stream, const Storage& saved) noexcept;
  /// Copies the initial values into memory of the state's own (on `stream`, complete on
  /// return) and lets go of where they were: before the weights that hold them are freed
  /// (a weight swap's old set). Nothing to do when they are the state's own already.
  [[nodiscard]] Error own_initial_values(cudaStream_t stream) noexcept;

 private:
  ModelState() = default;
  std::shared_ptr<DeviceWeights> current_;
  std::vector<std::unique_ptr<SlimTensor>> initial_;  // views; the memory is keep_initial_'s
  std::shared_ptr<const void> keep_initial_;
  std::shared_ptr<Storage> own_initial_;  // set by own_initial_values
  Device device_;
};

}  // namespace slimcuda
