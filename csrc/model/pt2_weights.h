// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "csrc/archive/pt2_archive.h"
#include "csrc/archive/pt2_model.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/model/model.h"
#include "csrc/model/weight_source.h"
#include "slimcuda/error.h"

namespace slimcuda {

// The weights a `.pt2` keeps outside its model's library (docs/weights.md, docs/pt2.md):
// found in the archive and handed to the loaded Model before its first run.

/// One STORED archive entry as a weight source: view() is the entry's bytes inside the
/// archive's mapping (zero copy), so the archive must outlive every upload reading it (the
/// `.pt2` loader keeps it open until the load returns; nothing keeps the source after).
/// `identity`: what names these bytes across loads ("" = never shared).
class ArchiveEntrySource final : public WeightSource {
 public:
  ArchiveEntrySource(ArchiveSpan span, std::string identity) noexcept : span_(span), identity_(std::move(identity)) {}

  [[nodiscard]] uint64_t size() const noexcept override { return span_.size; }
  [[nodiscard]] Error read(uint64_t offset, size_t n, void* dst) const noexcept override;
  [[nodiscard]] const uint8_t* view() const noexcept override { return span_.data; }
  [[nodiscard]] std::string identity() const override { return identity_; }

 private:
  ArchiveSpan span_;
  std::string identity_;
};

/// Where a `.pt2` model's weights are, as the archive says.
enum class Pt2WeightsFormat {
  InLibrary,      ///< inside the `.so` (the default export): nothing to attach
  BinaryBlob,     ///< `<hash>.wrapper_weights.blob` beside the library
  PickleWeights,  ///< `weights_config.json` beside it, the storages in `<root>data/weights/`
  None,           ///< package_constants_in_so=False with no on-disk format: nowhere
};
[[nodiscard]] const char* pt2_weights_format_name(Pt2WeightsFormat f) noexcept;

/// Whether the generated wrapper's model constructor loads weights from its library: the
/// last argument of its `AOTInductorModelBase(...)` call (`include_weights`, false exactly
/// when the export used package_constants_in_so=False). nullopt when the source does not
/// say (not a 2.11-style wrapper).
[[nodiscard]] std::optional<bool> wrapper_includes_weights(std::string_view source) noexcept;

/// Attaches the weights model `pm` of `archive` keeps outside its library to `model` (just
/// loaded from that library, never run): docs/weights.md §3.
///
///  - A `*.blob` in the model's folder (binary_blob): it must be STORED (NotSupported
///    otherwise) and match its CRC-32 (InvalidProgram); shapes come from the wrapper source
///    (none in the archive -> NotSupported), checked against the container (blob_shapes);
///    the bytes are uploaded from the archive's mapping (no other host copy but the pinned
///    chunks) by Model::attach_constants. More than one blob -> InvalidProgram.
///  - `weights_config.json` in the folder (pickle_weights, no blob): per FQN, the file of
///    `<root>data/weights/` it names — a torch.save zip, STORED in the archive (NotSupported
///    otherwise), CRC-checked — read with the same zip reader from the outer entry's bytes;
///    its one `<dir>/data/0` entry (STORED) is the storage, uploaded in place; sizes,
///    strides and storage offset from the config, dtype from the container. A file the
///    archive lacks, or one with no storage or two -> InvalidProgram.
///  - No weights in the archive while the wrapper says its library has none -> InvalidProgram
///    naming the first constant it lacks.
///  - Otherwise the weights are the library's own: nothing is done.
///
/// Sharing: the model identity is the library's XXH3-128 (`library_hash_hex`); a weights
/// entry's (the blob, a weights file) identity is the mapped file's (device, inode, size, modification time) with the
/// entry's place and CRC, or for an archive in memory the XXH3-128 of the entry's bytes. Two loads of one `.pt2` on one
/// device share one copy (WeightsCache).
///
/// Streams: `ctx` is the load's entry context (the caller's stream when one is selected, on
/// the model's device): the upload goes there, else on the model's own stream; either way it
/// returns once the bytes are on the device, so a run on any stream sees them.
/// `*format` (may be null) says what was found.
/// What attach_pt2_weights attaches, without attaching it: the entries (empty when the
/// weights are the library's own), checked as there against `model` (a load of the same
/// model); their sources view `archive`'s mapping, so it must outlive their use. The errors
/// are attach_pt2_weights'.
/// `wrapper`: the model's wrapper source when the caller has read it (read_wrapper_source),
/// else nullptr (read here).
[[nodiscard]] Error pt2_weight_entries(const Pt2Archive& archive, const Pt2Model& pm, const std::string* wrapper,
                                       const Model* model, std::vector<ConstantEntry>* out,
                                       Pt2WeightsFormat* format) noexcept;

[[nodiscard]] Error attach_pt2_weights(const Pt2Archive& archive, const Pt2Model& pm, const std::string* wrapper,
                                       const std::string& library_hash_hex, Model* model, const StreamContext& ctx,
                                       Pt2WeightsFormat* format) noexcept;

/// What can be judged of the model's weights entries from the archive's directory, before
/// the library is inflated or loaded: a compressed weights blob or weights file
/// (`<root>data/weights/*`) -> NotSupported; a weights_config.json over its cap (16 MiB, or
/// kMaxInflatedJsonBytes compressed) -> InvalidProgram naming it and the cap.
[[nodiscard]] Error check_pt2_weights_entries(const Pt2Archive& archive, const Pt2Model& pm) noexcept;

/// Stages the read-only weights of the `.pt2` at `path` (binary_blob or pickle_weights; a
/// library that keeps its own -> NotSupported) for Model::swap_weights: its entries (the
/// state's values in the file are not used: a swap keeps the model's state) as host tensors
/// over the archive's mapping, checked and copied by Model::stage_weights on ctx's stream
/// before the archive closes. May throw std::bad_alloc.
[[nodiscard]] Error stage_pt2_weights_file(Model* model, const char* path, const StreamContext& ctx);

}  // namespace slimcuda
