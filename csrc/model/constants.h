// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/model/weight_source.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

// Weights kept outside a model's library (docs/weights.md): the container's constants API,
// what a loader says about each constant, and the hook that uploads them and hands them to
// the container.

/// The AOTInductor container's constants functions, found with dlsym (ContainerConstantsApi
/// ::probe); any may be nullptr where the library's PyTorch lacks it. Signatures as in
/// PyTorch's aoti_runtime/interface.h (AOTIRuntimeError = int32_t, 0 = success).
struct ContainerConstantsApi {
  struct Pair {  // AOTInductorConstantMapEntry
    const char* name;
    void* handle;  // AtenTensorHandle: a SlimTensor*
  };
  int32_t (*num_constants)(void*, size_t*) = nullptr;
  int32_t (*name)(void*, size_t, const char**) = nullptr;
  int32_t (*original_fqn)(void*, size_t, const char**) = nullptr;
  int32_t (*from_folded)(void*, size_t, bool*) = nullptr;
  int32_t (*dtype)(void*, size_t, int32_t*) = nullptr;
  int32_t (*data_size)(void*, size_t, size_t*) = nullptr;
  /// ...GetConstantType(container, i, &type): a ConstantKind code (PyTorch's ConstantType).
  int32_t (*type)(void*, size_t, int32_t*) = nullptr;
  /// ...ExtractConstantsMap(container, map, use_inactive): fills a std::unordered_map<
  /// std::string, AtenTensorHandle>* with the container's own handles of its non-folded
  /// constants, keyed by original FQN (a libstdc++ type across the boundary, as for
  /// update_user_managed_map).
  int32_t (*extract_map)(void*, void*, bool) = nullptr;
  /// ...UpdateUserManagedConstantBufferPairs(container, pairs, n, use_inactive, validate)
  int32_t (*update_user_managed_pairs)(void*, const Pair*, size_t, bool, bool) = nullptr;
  /// ...UpdateUserManagedConstantBuffer(container, map, use_inactive, validate): `map` is a
  /// std::unordered_map<std::string, AtenTensorHandle>* (a C++ type across the boundary:
  /// both sides must use libstdc++'s ABI, as g++-built models do).
  int32_t (*update_user_managed_map)(void*, void*, bool, bool) = nullptr;
  /// ...UpdateConstantBuffer(container, map, use_inactive, validate): the container copies
  /// every constant into memory of its own (not slimcuda's).
  int32_t (*update_copy_map)(void*, void*, bool, bool) = nullptr;
  /// ...SwapConstantBuffer(container) and ...FreeInactiveConstantBuffer(container).
  int32_t (*swap)(void*) = nullptr;
  int32_t (*free_inactive)(void*) = nullptr;

  /// Looks the functions up with `lookup(name)` (ModelLibrary::symbol, or a test's table).
  template <typename Lookup>
  [[nodiscard]] static ContainerConstantsApi probe(Lookup&& lookup) {
    ContainerConstantsApi api;
    auto get = [&](auto& fn, const char* symbol) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(lookup(symbol)); };
    get(api.num_constants, "AOTInductorModelContainerGetNumConstants");
    get(api.name, "AOTInductorModelContainerGetConstantName");
    get(api.original_fqn, "AOTInductorModelContainerGetConstantOriginalFQN");
    get(api.from_folded, "AOTInductorModelContainerGetConstantFromFolded");
    get(api.dtype, "AOTInductorModelContainerGetConstantDtype");
    get(api.data_size, "AOTInductorModelContainerGetConstantDataSize");
    get(api.type, "AOTInductorModelContainerGetConstantType");
    get(api.extract_map, "AOTInductorModelContainerExtractConstantsMap");
    get(api.update_user_managed_pairs, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs");
    get(api.update_user_managed_map, "AOTInductorModelContainerUpdateUserManagedConstantBuffer");
    get(api.update_copy_map, "AOTInductorModelContainerUpdateConstantBuffer");
    get(api.swap, "AOTInductorModelContainerSwapConstantBuffer");
    get(api.free_inactive, "AOTInductorModelContainerFreeInactiveConstantBuffer");
    return api;
  }
};

/// How the constants reached the container (in the order attach_constants tries them).
enum class ConstantsPath {
  UserManagedPairs,  ///< slimcuda's memory, shared; no std:: type crosses the boundary
  UserManagedMap,    ///< slimcuda's memory, shared; through a std::unordered_map
  ContainerCopy,     ///< copied by the container into its own memory: not shared
  /// The container read the archive's weights blob itself (AOTInductorModelUpdateConstants
  /// FromBlob, as PyTorch's loader does): its own memory, not shared. What a model with
  /// CPU constants needs (Model::load_constants_from_blob).
  ContainerBlob,
};
[[nodiscard]] const char* constants_path_name(ConstantsPath path) noexcept;

/// What a constant is, as the container says (PyTorch's ConstantType codes,
/// aoti_runtime/constant_type.h). Unknown where the library lacks GetConstantType.
enum class ConstantKind : int32_t { Unknown = 0, Parameter = 1, Buffer = 2, TensorConstant = 3, Folded = 4 };
[[nodiscard]] const char* constant_kind_name(ConstantKind kind) noexcept;

/// One constant as the container reports it.
struct ContainerConstant {
  std::string name;          ///< the container's name (e.g. "l1_weight")
  std::string original_fqn;  ///< the module's name (e.g. "l1.weight"); may be empty
  bool from_folded = false;  ///< computed by the container's constant folding: no bytes needed
  int32_t dtype = -1;        ///< c10 ScalarType code
  uint64_t data_size = 0;    ///< bytes of its storage (PyTorch pads CPU constants to 64)
  ConstantKind kind = ConstantKind::Unknown;
};

/// Reads every constant the container reports. A library without GetNumConstants,
/// GetConstantName, GetConstantDtype or GetConstantDataSize -> NotSupported; a failing
/// call or a null name -> InvalidProgram.
[[nodiscard]] Error read_container_constants(const ContainerConstantsApi& api, void* container,
                                             std::vector<ContainerConstant>* out) noexcept;

/// What a loader knows of one constant: its tensor's shape and where its storage's bytes
/// are. The `.pt2` loader fills these from the archive (docs/weights.md: pickle_weights'
/// weights_config.json and entries, or the binary_blob's ranges).
struct ConstantEntry {
  std::string name;    ///< the container's name or its original FQN
  int32_t dtype = -1;  ///< c10 ScalarType code; -1: the container's
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  ///< empty: contiguous
  int64_t storage_offset = 0;    ///< in elements, as a tensor's
  /// The storage's bytes: [source_offset, source_offset + nbytes) of `source`.
  std::shared_ptr<const WeightSource> source;
  uint64_t source_offset = 0;
  uint64_t nbytes = 0;
  /// A CPU constant of a CUDA model (PyTorch's mixed-device constants, e.g. a tensor
  /// attribute torchvision's AnchorGenerator keeps on the CPU; the wrapper source declares it
  /// with cached_torch_device_type_cpu). PyTorch 2.11's containers take no such constant
  /// through their update paths (attach_constants): the container must read it from the
  /// blob itself (Model::load_constants_from_blob).
  bool on_cpu = false;
};

/// Splits one binary_blob (package_constants_on_disk_format="binary_blob": the non-folded
/// constants' storages back to back, each data_size bytes, in the container's order) into
/// entries, with the shapes the caller knows (`shapes[i]` for the i-th non-folded
/// constant: sizes, strides, storage offset; dtype and nbytes are filled here). A blob
/// shorter than the constants' sizes add up to, or a count of shapes that is not the
/// number of non-folded constants -> InvalidProgram.
struct ConstantShape {
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
  bool on_cpu = false;  ///< ConstantEntry::on_cpu
};
[[nodiscard]] Error entries_from_blob(const std::vector<ContainerConstant>& constants,
                                      const std::vector<ConstantShape>& shapes,
                                      const std::shared_ptr<const WeightSource>& blob,
                                      std::vector<ConstantEntry>* out) noexcept;

class DeviceWeights;

/// Hands weights already uploaded (an attach's) to another container of the same library,
/// through the first user-managed path it has (UpdateUserManagedConstantBufferPairs, then
/// UpdateUserManagedConstantBuffer): the container then uses the same memory, which must
/// outlive it. Without either -> NotSupported (a copying container would need a copy of
/// its own); a container that refuses -> InvalidProgram with its error.
/// `*adopted` receives the handles the container made of ours and never deletes (PyTorch
/// 2.11's user-managed constants: csrc/tensor/handle_adoption.h): release it after the
/// container is destroyed.
/// `full` false hands over only some of the container's constants (validate_full_update
/// off): the others stay as they are (a model's state over its weights).
[[nodiscard]] Error hand_over_constants(const ContainerConstantsApi& api, void* container, const DeviceWeights& weights,
                                        ConstantsPath* path, std::shared_ptr<const void>* adopted,
                                        bool full = true) noexcept;

/// The container's own tensors of its non-folded constants (ExtractConstantsMap), by the
/// container's name: views of its memory, valid while the container keeps them (copy what
/// you need before handing it other tensors for those names). A library without
/// ExtractConstantsMap -> NotSupported.
[[nodiscard]] Error extract_container_constants(const ContainerConstantsApi& api, void* container,
                                                const std::vector<ContainerConstant>& constants,
                                                std::vector<const SlimTensor*>* out) noexcept;

/// One allocation of `total` bytes on `device` for constants that outlive the stream that
/// made them (CUDA: ordered on slimcuda's internal stream of the device, and `ctx`'s stream
/// waits for it, so writes on ctx's stream may start at once; CPU: the CPU allocator).
[[nodiscard]] Error allocate_constants(uint64_t total, Device device, const StreamContext& ctx,
                                       std::shared_ptr<Storage>* out) noexcept;

/// What attach_constants leaves behind: the memory the container now uses (keep it alive
/// until the container is deleted), how it got there, and whether it was shared with an
/// earlier load.
struct AttachedConstants {
  std::shared_ptr<const void> keep_alive;
  /// The handles the container made of the constants and keeps without ever deleting them
  /// (PyTorch 2.11's user-managed path): release after the container is destroyed.
  std::shared_ptr<const void> adopted;
  ConstantsPath path = ConstantsPath::UserManagedPairs;
  bool shared = false;
  uint64_t bytes = 0;  ///< the device (or host) bytes the weights occupy
};

/// The integration hook the `.pt2` loader calls once the container exists and before its
/// first run: checks `entries` against the container's constants, uploads them (or finds
/// them already uploaded: WeightsCache) and hands them to the container.
///
///  - Checks, before any memory is taken, each -> InvalidProgram with the constant's name:
///    an entry the container does not know (by name or original FQN), two entries for one
///    constant, a non-folded constant with bytes and no entry, a dtype other than the
///    container's, bad sizes/strides (negative, > 64 dims), a view that reaches past the
///    entry's nbytes, nbytes past the source's end, sizes whose products overflow 64 bits.
///  - Memory: one allocation of `device` holding every constant (each at a 256-byte
///    aligned offset): CUDA from the caching device allocator (its stats show it), CPU from
///    the CPU allocator. CUDA uploads go through pinned chunks (staged_upload) on
///    ctx.stream() when ctx.is_selected() (the caller's stream: it must be the model's
///    device, InvalidArgument otherwise), else on `model_stream`; the call returns when the
///    bytes are on the device.
///  - Sharing: `model_identity` (e.g. the library's hash; "" = never shared) with the
///    entries' sources' identities and the device name one upload; a second attach of the
///    same model on the same device (any number of loads, concurrent or not) finds it and
///    uploads nothing. The memory goes when the last AttachedConstants::keep_alive is gone.
///  - Hand-over, the first the library has: UpdateUserManagedConstantBufferPairs, then
///    UpdateUserManagedConstantBuffer (both: the container uses our memory, shared), then
///    UpdateConstantBuffer (the container copies into memory of its own; ours is then
///    released at once, nothing is shared). None -> NotSupported. A container that refuses
///    -> InvalidProgram with its error; our memory is released (no leak).
///
/// `api` and `container` must stay valid for the call. Not thread-safe per container (call
/// it once, from the loading thread, before any run); concurrent calls for different
/// containers are fine.
[[nodiscard]] Error attach_constants(const ContainerConstantsApi& api, void* container, Device device,
                                     const std::string& model_identity, const std::vector<ConstantEntry>& entries,
                                     const StreamContext& ctx, cudaStream_t model_stream,
                                     AttachedConstants* out) noexcept;

}  // namespace slimcuda
