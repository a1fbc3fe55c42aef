// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "csrc/archive/pt2_archive.h"
#include "csrc/package/model_package.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// The default model name: what aoti_compile_and_package calls a model unless told otherwise.
inline constexpr const char* kDefaultPt2ModelName = "model";

/// One AOTInductor model inside a .pt2: the folder `<root>data/aotinductor/<name>/` that
/// PyTorch 2.11 writes (<root> is the archive's top folder, the package's base name).
struct Pt2Model {
  std::string name;
  std::string folder;                            ///< "<root>data/aotinductor/<name>/"
  const ArchiveEntry* library = nullptr;         ///< the one `.so` in the folder
  const ArchiveEntry* metadata = nullptr;        ///< `<so stem>_metadata.json`
  const ArchiveEntry* wrapper_source = nullptr;  ///< `<so stem>.cpp`, when packaged (it is by default)
  const ArchiveEntry* extern_nodes = nullptr;    ///< `<so stem>.json`: the proxy executor's nodes, when any
  DeviceType device_type = DeviceType::CPU;      ///< AOTI_DEVICE_KEY of the metadata
  std::string cpu_isa;                           ///< AOTI_CPU_ISA ("AVX2", "AVX512", ...; "" when absent)
  std::vector<const ArchiveEntry*> files;        ///< everything in the folder (weights blobs included)
};

/// The names of the models in the archive (its `data/aotinductor/<name>/` folders), sorted.
/// No model at all -> InvalidProgram.
[[nodiscard]] Error pt2_model_names(const Pt2Archive& archive, std::vector<std::string>* out) noexcept;

/// Finds and checks model `name` (nullptr: the only model, else the one called "model"):
/// several models and no name -> InvalidArgument listing them; no such model ->
/// InvalidArgument listing them; a folder without exactly one `.so`, without its metadata,
/// or metadata that is not JSON or names no known device -> InvalidProgram.
[[nodiscard]] Error find_pt2_model(const Pt2Archive& archive, const char* name, Pt2Model* out) noexcept;

// What a load may spend on the entries it reads (docs/hostile-archives.md). A STORED entry
// costs its own bytes at most (a view, or one copy); a compressed one is inflated into
// memory, so its declared size is checked against a cap before a byte is inflated (the
// archive reader has already bounded the declared size by deflate's ratio and by what the
// stream really holds).

/// The model's `_metadata.json` (a few hundred bytes in real exports), stored or not. A JSON
/// tree costs up to ~36x its text, and at 1 MiB a crafted one came within 0.3% of the
/// hostile-archive bound of 64 MB (CI, 2026-12-03): 256 KiB keeps it near 10 MB.
inline constexpr uint64_t kMaxMetadataBytes = uint64_t{256} << 10;
/// A stored wrapper source (megabytes for large models).
inline constexpr uint64_t kMaxWrapperSourceBytes = uint64_t{256} << 20;
/// A compressed wrapper source (what it declares is parsed into up to ~4x its text).
inline constexpr uint64_t kMaxInflatedTextBytes = uint64_t{4} << 20;
/// A compressed JSON entry (weights_config.json): JSON is parsed into a tree of up to ~30x its
/// text before its shape can be judged.
inline constexpr uint64_t kMaxInflatedJsonBytes = uint64_t{256} << 10;
/// The extern-kernel nodes (`<so stem>.json`), stored or not: parsed into a JSON tree like
/// the metadata, so capped like it (real exports: ~450 bytes a node).
inline constexpr uint64_t kMaxExternNodesBytes = uint64_t{256} << 10;
/// A compressed library (PyTorch stores it; real libraries are 0.4-3 MB with their weights).
inline constexpr uint64_t kMaxCompressedLibraryBytes = uint64_t{32} << 20;

/// Reads `entry` whole into `out`: more than `cap` bytes, or compressed and more than
/// `inflated_cap` -> InvalidProgram naming the entry and the cap, before any byte is read.
/// Throws std::bad_alloc.
[[nodiscard]] Error read_entry_text(const Pt2Archive& archive, const ArchiveEntry& entry, uint64_t cap,
                                    uint64_t inflated_cap, std::string* out);

/// The model's generated wrapper source ("" when the archive has none), read whole through
/// read_entry_text (caps kMaxWrapperSourceBytes, kMaxInflatedTextBytes). Throws std::bad_alloc.
[[nodiscard]] Error read_wrapper_source(const Pt2Archive& archive, const Pt2Model& pm, std::string* out);

/// The bytes of the model's library, checked (check_elf) before anything dlopens them: a
/// view of a STORED entry (CRC-checked), or the inflated bytes of a compressed one, kept in
/// `*inflated`: more than kMaxCompressedLibraryBytes -> NotSupported ("store it, as PyTorch
/// does") before inflating; its ELF header is checked from its first inflated bytes before
/// the rest is inflated. `so` views the bytes (in the archive, or in `*inflated`).
[[nodiscard]] Error read_pt2_library(const Pt2Archive& archive, const Pt2Model& pm,
                                     std::unique_ptr<uint8_t[]>* inflated, ArchiveSpan* so) noexcept;

/// Reads each input's spec from the generated wrapper's own input checks (check_input_<i>:
/// AOTInductor emits one per input in every AOT export, run by the library only when
/// AOTI_RUNTIME_CHECK_INPUTS is set): dtype, each dimension's exact size or bounds, strides,
/// device type. `num_inputs` is the container's count. Returns NotFound when the source has
/// no such checks (nothing to learn); InvalidProgram when they disagree with the count or
/// name a dtype slimcuda does not have.
[[nodiscard]] Error parse_input_checks(std::string_view source, size_t num_inputs,
                                       std::vector<TensorSpec>* out) noexcept;

/// What the generated wrapper's constructor states about the model's inputs and outputs:
/// `AOTInductorModelBase(num_inputs, num_outputs, num_constants, ...)` and the names it gives
/// them (`inputs_info_[i].name = "..."`, `outputs_info_[i].name = "..."`; "" where none).
struct WrapperIo {
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};

/// Reads WrapperIo from the wrapper source, running nothing. NotFound when the source has
/// no AOTInductorModel constructor (nothing to learn); InvalidProgram when its counts are
/// not numbers or exceed kMaxWrapperIo, or a name's index is out of range.
[[nodiscard]] Error parse_wrapper_io(std::string_view source, WrapperIo* out) noexcept;
inline constexpr size_t kMaxWrapperIo = 1 << 16;

/// Each output's spec where the wrapper source states it: run_impl's
/// `output_handles[i] = BUF.release();`, followed back through `auto BUF = std::move(OTHER);`
/// (a buffer reused whole), to `aoti_torch_empty_strided(N, SIZES, STRIDES, cached_torch_dtype_T,
/// cached_torch_device_type_D, ...&BUF_handle)` whose SIZES is a `static constexpr int64_t`
/// array of literals: a static output of that dtype and sizes. Anything else (a view, a pool
/// allocation, an input or constant returned, symbolic sizes) leaves the output unknown
/// (TensorSpec::known false, named `names[i]`). Never fails but for memory.
[[nodiscard]] Error parse_output_allocations(std::string_view source, const std::vector<std::string>& names,
                                             std::vector<TensorSpec>* out) noexcept;

}  // namespace slimcuda
