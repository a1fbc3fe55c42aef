// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/pt2_weights.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "csrc/model/archive_constants.h"
#include "csrc/model/constants.h"
#include "csrc/package/library_hash.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// weights_config.json: one short line (~100 bytes) per constant, so 4 MiB is ~40,000
// weights; its JSON tree costs up to ~36x its text (docs/hostile-archives.md).
constexpr uint64_t kMaxConfigBytes = uint64_t{4} << 20;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What names an outer entry's bytes across loads: the mapped file's identity with the
// entry's place, or (an archive in memory) the bytes' own XXH3-128.
std::string entry_identity(const Pt2Archive& archive, const ArchiveEntry& e, ArchiveSpan span) {
  if (!archive.identity().empty()) {
    return archive.identity() + "|" + e.name + "@" + std::to_string(e.data_offset) + "+" + std::to_string(e.size) +
           ":crc" + std::to_string(e.crc32);
  }
  const LibraryHash h = library_hash(span.data, span.size);
  return "xxh3-128:" + library_hash_hex(h) + "+" + std::to_string(span.size);
}

// A CUDA model's CPU constants (names and FQNs), as its wrapper source declares them
// (torch.save's pickle says so too, but slimcuda reads no pickle). May throw std::bad_alloc.
Error cpu_constants_of(const std::string& wrapper_source, const Model& model, std::set<std::string>* out) {
  if (!model.device().is_cuda() || wrapper_source.empty()) return Error::Ok;
  std::vector<WrapperConstant> declared;
  SLIMCUDA_RETURN_IF_ERROR(parse_wrapper_constants(wrapper_source.data(), wrapper_source.size(), &declared));
  for (const WrapperConstant& w : declared) {
    if (w.device != "cpu") continue;
    out->insert(w.name);
    if (!w.original_fqn.empty()) out->insert(w.original_fqn);
  }
  return Error::Ok;
}

// pickle_weights: weights_config.json names, per FQN, a file of <root>data/weights/ (a
// torch.save zip, STORED inside the archive) whose one `<dir>/data/0` entry (STORED too) is
// the storage. Each constant is a range of the outer entry's bytes, read in place.
Error pickled_entries(const Pt2Archive& archive, const Pt2Model& pm, const ArchiveEntry& config, const Model& model,
                      const std::string& wrapper_source, std::vector<ConstantEntry>* out) {
  std::string text;
  SLIMCUDA_RETURN_IF_ERROR(read_entry_text(archive, config, kMaxConfigBytes, kMaxInflatedJsonBytes, &text));
  std::vector<PickledWeight> weights;
  SLIMCUDA_RETURN_IF_ERROR(parse_weights_config(text.data(), text.size(), &weights));
  std::vector<ContainerConstant> constants;
  SLIMCUDA_RETURN_IF_ERROR(model.container_constants(&constants));
  std::map<std::string, uint64_t> room;  // each constant's bytes in the container, by name and FQN
  for (const ContainerConstant& c : constants) {
    room.emplace(c.name, c.data_size);
    if (!c.original_fqn.empty()) room.emplace(c.original_fqn, c.data_size);
  }
  std::set<std::string> on_cpu;
  SLIMCUDA_RETURN_IF_ERROR(cpu_constants_of(wrapper_source, model, &on_cpu));
  const std::string root = pm.folder.substr(0, pm.folder.rfind("data/aotinductor/"));
  struct File {
    std::shared_ptr<const WeightSource> source;
    uint64_t offset = 0, size = 0;  // the storage inside the outer entry
  };
  std::map<std::string, File> files;  // weights sharing a storage share a file
  std::vector<ConstantEntry> entries;
  for (const PickledWeight& w : weights) {
    auto it = files.find(w.file);
    if (it == files.end()) {
      const std::string name = root + "data/weights/" + w.file;
      const ArchiveEntry* e = archive.find(name);
      SLIMCUDA_CHECK_OR_RETURN(e != nullptr, Error::InvalidProgram,
                               "weight '%s' is in %s, which the archive does not hold", w.fqn.c_str(), name.c_str());
      SLIMCUDA_CHECK_OR_RETURN(e->stored, Error::NotSupported,
                               "weights file %s is compressed; store it (PyTorch does), so it is uploaded in place",
                               name.c_str());
      ArchiveSpan span;
      SLIMCUDA_RETURN_IF_ERROR(archive.view(*e, &span));
      SLIMCUDA_RETURN_IF_ERROR(archive.verify_crc(*e));  // covers the inner zip's bytes too
      std::unique_ptr<Pt2Archive> inner;
      const Error opened = Pt2Archive::open_memory(span.data, span.size, &inner);
      if (opened != Error::Ok) {
        return set_last_error(opened, "weights file %s: %s", name.c_str(), last_error_message());
      }
      const ArchiveEntry* storage = nullptr;
      for (const ArchiveEntry& ie : inner->entries()) {
        const size_t slash = ie.name.find('/');
        if (slash == std::string::npos || ie.name.compare(slash, std::string::npos, "/data/0") != 0) continue;
        SLIMCUDA_CHECK_OR_RETURN(storage == nullptr, Error::InvalidProgram,
                                 "weights file %s holds two storages (%s, %s)", name.c_str(), storage->name.c_str(),
                                 ie.name.c_str());
        storage = &ie;
      }
      SLIMCUDA_CHECK_OR_RETURN(storage != nullptr, Error::InvalidProgram,
                               "weights file %s holds no storage (<dir>/data/0): not a torch.save file", name.c_str());
      SLIMCUDA_CHECK_OR_RETURN(storage->stored, Error::NotSupported,
                               "weights file %s: its storage %s is compressed (torch.save stores it)", name.c_str(),
                               storage->name.c_str());
      ArchiveSpan bytes;
      SLIMCUDA_RETURN_IF_ERROR(inner->view(*storage, &bytes));
      File f;
      f.source = std::make_shared<ArchiveEntrySource>(span, entry_identity(archive, *e, span));
      f.offset = static_cast<uint64_t>(bytes.data - span.data);
      f.size = bytes.size;
      it = files.emplace(w.file, std::move(f)).first;
    }
    ConstantEntry c;
    c.name = w.fqn;
    c.sizes = w.shape;
    c.strides = w.stride;
    c.storage_offset = w.offset;
    c.source = it->second.source;
    c.source_offset = it->second.offset;
    c.nbytes = it->second.size;
    // A storage shared by several constants holds more than each: give each what the
    // container holds for it (attach_constants checks its view fits).
    if (auto r = room.find(w.fqn); r != room.end() && r->second < c.nbytes) c.nbytes = r->second;
    c.on_cpu = on_cpu.count(w.fqn) > 0;
    entries.push_back(std::move(c));
  }
  *out = std::move(entries);
  return Error::Ok;
}

// The model's weights blob and weights_config.json (each may be null); two blobs ->
// InvalidProgram.
Error weights_files(const Pt2Model& pm, const ArchiveEntry** blob, const ArchiveEntry** config) {
  *blob = *config = nullptr;
  for (const ArchiveEntry* f : pm.files) {
    if (ends_with(f->name, ".blob")) {
      SLIMCUDA_CHECK_OR_RETURN(*blob == nullptr, Error::InvalidProgram, "model '%s' has two weights blobs (%s, %s)",
                               pm.name.c_str(), *blob ? (*blob)->name.c_str() : "", f->name.c_str());
      *blob = f;
    } else if (f->name == pm.folder + "weights_config.json") {
      *config = f;
    }
  }
  return Error::Ok;
}

Error compressed_blob(const Pt2Model& pm, const ArchiveEntry& blob) {
  return set_last_error(Error::NotSupported,
                        "model '%s': its weights blob %s is compressed; store it (PyTorch does), so it is "
                        "uploaded from the archive in place",
                        pm.name.c_str(), blob.name.c_str());
}

}  // namespace

Error check_pt2_weights_entries(const Pt2Archive& archive, const Pt2Model& pm) noexcept {
  try {
    const ArchiveEntry* blob = nullptr;
    const ArchiveEntry* config = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(weights_files(pm, &blob, &config));
    if (blob != nullptr && !blob->stored) return compressed_blob(pm, *blob);
    if (blob != nullptr || config == nullptr) return Error::Ok;
    SLIMCUDA_CHECK_OR_RETURN(
        config->size <= kMaxConfigBytes && (config->stored || config->size <= kMaxInflatedJsonBytes),
        Error::InvalidProgram, "%s: %s%llu bytes (at most %llu%s)", config->name.c_str(),
        config->stored ? "" : "compressed, ", static_cast<unsigned long long>(config->size),
        static_cast<unsigned long long>(config->stored ? kMaxConfigBytes : kMaxInflatedJsonBytes),
        config->stored ? "" : " for this entry compressed; store it, as PyTorch does");
    const std::string weights = pm.folder.substr(0, pm.folder.rfind("data/aotinductor/")) + "data/weights/";
    for (const ArchiveEntry* e : archive.entries_under(weights)) {
      SLIMCUDA_CHECK_OR_RETURN(e->stored, Error::NotSupported,
                               "weights file %s is compressed; store it (PyTorch does), so it is uploaded in place",
                               e->name.c_str());
    }
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory checking the weights");
  }
}

Error ArchiveEntrySource::read(uint64_t offset, size_t n, void* dst) const noexcept {
  if (offset > span_.size || n > span_.size - offset) {
    return set_last_error(Error::InvalidProgram, "bytes [%llu, +%zu) of an archive entry of %zu bytes",
                          static_cast<unsigned long long>(offset), n, span_.size);
  }
  if (n > 0) std::memcpy(dst, span_.data + offset, n);
  return Error::Ok;
}

const char* pt2_weights_format_name(Pt2WeightsFormat f) noexcept {
  switch (f) {
    case Pt2WeightsFormat::InLibrary:
      return "in the library";
    case Pt2WeightsFormat::BinaryBlob:
      return "binary_blob";
    case Pt2WeightsFormat::PickleWeights:
      return "pickle_weights";
    case Pt2WeightsFormat::None:
      return "none";
  }
  return "?";
}

std::optional<bool> wrapper_includes_weights(std::string_view source) noexcept {
  // AOTInductorModel::AOTInductorModel(...)
  //     : AOTInductorModelBase(<inputs>, <outputs>, <constants>, device_str, std::move(cubin_dir), <include_weights>) {
  const size_t ctor = source.find("AOTInductorModel::AOTInductorModel(");
  if (ctor == std::string_view::npos) return std::nullopt;
  const std::string_view base_call = ": AOTInductorModelBase(";
  const size_t base = source.find(base_call, ctor);
  if (base == std::string_view::npos) return std::nullopt;
  // The call's arguments hold one nested pair of parentheses (std::move(cubin_dir)).
  int depth = 1;
  size_t i = base + base_call.size(), last_comma = std::string_view::npos;
  for (; i < source.size() && depth > 0; ++i) {
    if (source[i] == '(') ++depth;
    if (source[i] == ')') --depth;
    if (source[i] == ',' && depth == 1) last_comma = i;
  }
  if (depth != 0 || last_comma == std::string_view::npos) return std::nullopt;
  std::string_view arg = source.substr(last_comma + 1, i - 1 - (last_comma + 1));
  while (!arg.empty() && std::strchr(" \t\r\n", arg.front()) != nullptr) arg.remove_prefix(1);
  while (!arg.empty() && std::strchr(" \t\r\n", arg.back()) != nullptr) arg.remove_suffix(1);
  if (arg == "true") return true;
  if (arg == "false") return false;
  return std::nullopt;
}

Error pt2_weight_entries(const Pt2Archive& archive, const Pt2Model& pm, const std::string* wrapper, const Model* model,
                         std::vector<ConstantEntry>* out, Pt2WeightsFormat* format) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr && out != nullptr, Error::InvalidArgument, "null model or out");
    out->clear();
    Pt2WeightsFormat found = Pt2WeightsFormat::InLibrary;
    if (format != nullptr) *format = found;
    const char* name = pm.name.c_str();
    const ArchiveEntry* blob = nullptr;
    const ArchiveEntry* config = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(weights_files(pm, &blob, &config));
    std::string own;
    if (wrapper == nullptr) {
      SLIMCUDA_RETURN_IF_ERROR(read_wrapper_source(archive, pm, &own));
      wrapper = &own;
    }
    const std::string& source = *wrapper;

    if (blob == nullptr) {
      if (config != nullptr) {
        if (format != nullptr) *format = Pt2WeightsFormat::PickleWeights;
        return pickled_entries(archive, pm, *config, *model, source, out);
      }
      // Without a source nothing says the library lacks its weights: they are its own.
      if (pm.wrapper_source == nullptr || wrapper_includes_weights(source) != std::optional<bool>(false)) {
        return Error::Ok;
      }
      std::vector<ContainerConstant> constants;
      SLIMCUDA_RETURN_IF_ERROR(model->container_constants(&constants));
      for (const ContainerConstant& c : constants) {
        if (c.from_folded || c.data_size == 0) continue;
        if (format != nullptr) *format = Pt2WeightsFormat::None;
        return set_last_error(
            Error::InvalidProgram,
            "model '%s' was exported with aot_inductor.package_constants_in_so=False and no "
            "package_constants_on_disk_format: the archive holds no weights for constant '%s'%s%s%s (%llu bytes) "
            "(PyTorch's own loader crashes on such a model); export with "
            "\"aot_inductor.package_constants_on_disk_format\": \"binary_blob\", or with the weights in the library",
            name, c.name.c_str(), c.original_fqn.empty() ? "" : " (", c.original_fqn.c_str(),
            c.original_fqn.empty() ? "" : ")", static_cast<unsigned long long>(c.data_size));
      }
      return Error::Ok;  // no constant needs bytes: nothing to attach
    }

    found = Pt2WeightsFormat::BinaryBlob;
    if (format != nullptr) *format = found;
    if (!blob->stored) return compressed_blob(pm, *blob);
    SLIMCUDA_CHECK_OR_RETURN(pm.wrapper_source != nullptr, Error::NotSupported,
                             "model '%s' keeps its weights in %s, but the archive has no wrapper source "
                             "(<hash>.wrapper.cpp), the only place that states the constants' shapes",
                             name, blob->name.c_str());
    ArchiveSpan span;
    SLIMCUDA_RETURN_IF_ERROR(archive.view(*blob, &span));
    std::vector<WrapperConstant> declared;
    SLIMCUDA_RETURN_IF_ERROR(parse_wrapper_constants(source.data(), source.size(), &declared));
    std::vector<ContainerConstant> constants;
    SLIMCUDA_RETURN_IF_ERROR(model->container_constants(&constants));
    std::vector<ConstantShape> shapes;
    SLIMCUDA_RETURN_IF_ERROR(blob_shapes(constants, declared, model->device().type, &shapes));
    // The blob's size against what the library declares first; its CRC (a pass over all
    // its bytes) only once they are known to be needed.
    auto source_of_blob = std::make_shared<ArchiveEntrySource>(span, std::string());
    std::vector<ConstantEntry> entries;
    SLIMCUDA_RETURN_IF_ERROR(entries_from_blob(constants, shapes, source_of_blob, &entries));
    SLIMCUDA_RETURN_IF_ERROR(archive.verify_crc(*blob));
    const auto identified = std::make_shared<ArchiveEntrySource>(span, entry_identity(archive, *blob, span));
    for (ConstantEntry& e : entries) e.source = identified;
    *out = std::move(entries);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the weights");
  }
}

Error attach_pt2_weights(const Pt2Archive& archive, const Pt2Model& pm, const std::string* wrapper,
                         const std::string& library_hash_hex, Model* model, const StreamContext& ctx,
                         Pt2WeightsFormat* format) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(model != nullptr, Error::InvalidArgument, "null model");
  Pt2WeightsFormat found = Pt2WeightsFormat::InLibrary;
  std::vector<ConstantEntry> entries;
  const Error e = pt2_weight_entries(archive, pm, wrapper, model, &entries, &found);
  if (format != nullptr) *format = found;
  SLIMCUDA_RETURN_IF_ERROR(e);
  if (found != Pt2WeightsFormat::BinaryBlob && found != Pt2WeightsFormat::PickleWeights) return Error::Ok;
  // A CPU constant in a CUDA model: PyTorch 2.11's containers refuse it through every update
  // path ("update_constant_buffer does not support mixed device constants"); they take it
  // only from the blob, which they then read themselves, as PyTorch's own loader has them do.
  const auto first_cpu = std::find_if(entries.begin(), entries.end(), [](const ConstantEntry& c) { return c.on_cpu; });
  if (first_cpu != entries.end()) {
    const ConstantEntry* on_cpu = &*first_cpu;
    SLIMCUDA_CHECK_OR_RETURN(
        found == Pt2WeightsFormat::BinaryBlob && on_cpu->source != nullptr && on_cpu->source->view() != nullptr,
        Error::NotSupported,
        "model '%s' keeps constant '%s' on the CPU and the rest on the GPU, which its container "
        "takes only from a weights blob: export with "
        "\"aot_inductor.package_constants_on_disk_format\": \"binary_blob\"",
        pm.name.c_str(), on_cpu->name.c_str());
    return model->load_constants_from_blob(on_cpu->source->view(), on_cpu->source->size());
  }
  return model->attach_constants(entries, library_hash_hex.empty() ? std::string() : "pt2:" + library_hash_hex, ctx);
}

Error stage_pt2_weights_file(Model* model, const char* path, const StreamContext& ctx) {
  std::unique_ptr<Pt2Archive> archive;
  SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open(path, &archive));
  Pt2Model pm;
  SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(*archive, nullptr, &pm));
  std::vector<ConstantEntry> entries;
  Pt2WeightsFormat format = Pt2WeightsFormat::InLibrary;
  SLIMCUDA_RETURN_IF_ERROR(check_pt2_weights_entries(*archive, pm));
  SLIMCUDA_RETURN_IF_ERROR(pt2_weight_entries(*archive, pm, nullptr, model, &entries, &format));
  SLIMCUDA_CHECK_OR_RETURN(format == Pt2WeightsFormat::BinaryBlob || format == Pt2WeightsFormat::PickleWeights,
                           Error::NotSupported,
                           "%s keeps its weights inside its library, where they cannot be read without loading "
                           "it: export with package_constants_in_so=False and a package_constants_on_disk_format",
                           path);
  // The archive's read-only weights as host tensors over its mapping (the state's values
  // in the file are not used: a swap keeps the model's state); stage_weights checks them.
  std::vector<std::string> names;
  std::vector<std::unique_ptr<SlimTensor>> owned;
  std::vector<const SlimTensor*> tensors;
  for (const ConstantEntry& e : entries) {
    const Model::Constant* c = nullptr;
    for (const Model::Constant& k : model->constants_table()) {
      if (k.info.name == e.name || (!k.info.original_fqn.empty() && k.info.original_fqn == e.name)) c = &k;
    }
    if (c != nullptr && c->state) continue;
    SLIMCUDA_CHECK_OR_RETURN(e.source != nullptr && e.source->view() != nullptr, Error::NotSupported,
                             "weight '%s' is not in memory as it is", e.name.c_str());
    const int32_t dtype = e.dtype != -1 ? e.dtype : (c != nullptr ? c->info.dtype : -1);
    SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(dtype), Error::InvalidProgram, "weight '%s': dtype %d",
                             e.name.c_str(), dtype);
    const std::vector<int64_t> strides = e.strides.empty() ? contiguous_strides(e.sizes) : e.strides;
    auto* bytes = const_cast<uint8_t*>(e.source->view() + e.source_offset);  // read only: a copy's source
    owned.push_back(std::make_unique<SlimTensor>(Storage::borrow(bytes, static_cast<size_t>(e.nbytes), Device{}),
                                                 e.sizes, strides, static_cast<ScalarType>(dtype), e.storage_offset));
    names.push_back(e.name);
    tensors.push_back(owned.back().get());
  }
  return model->stage_weights(names, tensors, ctx);  // copied before the archive closes
}

}  // namespace slimcuda
