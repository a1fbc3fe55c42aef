// SPDX-License-Identifier: Apache-2.0
// The model part of the C ABI (slimcuda_package_*, slimcuda_model_*).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "csrc/archive/pt2_archive.h"
#include "csrc/archive/pt2_model.h"
#include "csrc/archive/pt2_weights.h"
#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/model/model.h"
#include "csrc/package/elf_check.h"
#include "csrc/package/file_reader.h"
#include "csrc/package/library_hash.h"
#include "csrc/package/manifest.h"
#include "csrc/package/model_package.h"
#include "slimcuda/slimcuda.h"

using namespace slimcuda;  // NOLINT: thin C shells

namespace {

Model* cast(slimcuda_model* m) { return reinterpret_cast<Model*>(m); }
const Model* cast(const slimcuda_model* m) { return reinterpret_cast<const Model*>(m); }

// A compressed library is inflated into memory before the memfd; beyond this, store it
// (PyTorch stores every entry).
constexpr uint64_t kMaxCompressedLibraryBytes = uint64_t{4} << 30;
// The generated wrapper source read for the input checks (megabytes for large models).
constexpr uint64_t kMaxWrapperSourceBytes = uint64_t{256} << 20;

// Loads one model of an opened .pt2.
Error load_pt2(const Pt2Archive& archive, const slimcuda_load_options& o, slimcuda_model** out) {
  SLIMCUDA_RETURN_IF_ERROR(Model::check_device_type(o.device_type));
  Pt2Model pm;
  SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(archive, o.model_name, &pm));
  const char* device_name = pm.device_type == DeviceType::CUDA ? "cuda" : "cpu";
  SLIMCUDA_CHECK_OR_RETURN(o.device_type == -1 || o.device_type == static_cast<int>(pm.device_type),
                           Error::NotSupported,
                           "model '%s' is compiled for %s (AOTI_DEVICE_KEY); a .pt2 model runs on that device "
                           "only",
                           pm.name.c_str(), device_name);
  // AOTInductor's GPU kernels are either inside the .so (aot_inductor.embed_kernel_binary)
  // or beside it, loaded at run time from a folder on disk: that needs extraction, which we
  // never do.
  for (const ArchiveEntry* f : pm.files) {
    for (const char* ext : {".cubin", ".fatbin", ".hsaco", ".spv"}) {
      const size_t n = std::strlen(ext);
      SLIMCUDA_CHECK_OR_RETURN(
          f->name.size() < n || f->name.compare(f->name.size() - n, n, ext) != 0, Error::NotSupported,
          "model '%s' keeps its GPU kernels beside its library (%s), loaded from a folder on disk at run time; "
          "export with inductor_configs={\"aot_inductor.embed_kernel_binary\": True} to embed them",
          pm.name.c_str(), f->name.c_str());
    }
  }
  const ArchiveEntry& lib = *pm.library;
  ArchiveSpan so;
  std::vector<uint8_t> inflated;
  if (lib.stored) {
    SLIMCUDA_RETURN_IF_ERROR(archive.view(lib, &so));
    SLIMCUDA_RETURN_IF_ERROR(archive.verify_crc(lib));
  } else {
    SLIMCUDA_CHECK_OR_RETURN(lib.size <= kMaxCompressedLibraryBytes, Error::NotSupported,
                             "model '%s': its library is compressed and %llu bytes inflated (at most %llu; store "
                             "it, as PyTorch does)",
                             pm.name.c_str(), static_cast<unsigned long long>(lib.size),
                             static_cast<unsigned long long>(kMaxCompressedLibraryBytes));
    inflated.resize(static_cast<size_t>(lib.size));
    SLIMCUDA_RETURN_IF_ERROR(archive.read(lib, 0, lib.size, inflated.data()));  // CRC-checked
    so = ArchiveSpan{inflated.data(), inflated.size()};
  }
  SLIMCUDA_CHECK_OR_RETURN(so.size > 0, Error::InvalidProgram, "model '%s': empty library %s", pm.name.c_str(),
                           lib.name.c_str());
  SLIMCUDA_RETURN_IF_ERROR(check_elf(so.data, so.size));
  // The generated source beside the library: the input checks, and what proves a buffer
  // read-only (the model's state).
  std::string wrapper;
  if (pm.wrapper_source != nullptr) {
    SLIMCUDA_CHECK_OR_RETURN(pm.wrapper_source->size <= kMaxWrapperSourceBytes, Error::InvalidProgram,
                             "%s: %llu bytes (at most %llu)", pm.wrapper_source->name.c_str(),
                             static_cast<unsigned long long>(pm.wrapper_source->size),
                             static_cast<unsigned long long>(kMaxWrapperSourceBytes));
    wrapper.resize(static_cast<size_t>(pm.wrapper_source->size));
    SLIMCUDA_RETURN_IF_ERROR(archive.read(*pm.wrapper_source, 0, wrapper.size(), wrapper.data()));
  }
  const Model::DescribeInputs describe = [&](size_t num_inputs, std::vector<TensorSpec>* specs) -> Error {
    if (pm.wrapper_source == nullptr) {
      return set_last_error(Error::NotFound, "no wrapper source in the archive");
    }
    return parse_input_checks(wrapper, num_inputs, specs);
  };
  std::unique_ptr<Model> model;
  SLIMCUDA_RETURN_IF_ERROR(Model::load_library(so.data, so.size, pm.device_type, o.device_index, o.instances, nullptr,
                                               describe, &model, static_cast<graph::GraphMode>(o.cuda_graphs)));
  // Weights kept outside the library (docs/weights.md): uploaded before the model can run,
  // on the caller's stream when one is selected (this call's context), else on the
  // model's own; attach returns once they are on the device, so any stream may run it.
  StreamContext ctx = StreamContext::unselected(-1);
  if (model->device().is_cuda()) SLIMCUDA_RETURN_IF_ERROR(caller_context(model->device().index, &ctx));
  const LibraryHash hash = library_hash(so.data, so.size);
  static const char kDigits[] = "0123456789abcdef";
  std::string hash_hex;
  for (uint8_t b : hash.bytes) hash_hex += {kDigits[b >> 4], kDigits[b & 15]};
  SLIMCUDA_RETURN_IF_ERROR(attach_pt2_weights(archive, pm, hash_hex, model.get(), ctx, nullptr));
  // What runs write gets a copy of this load's own (docs/state.md).
  SLIMCUDA_RETURN_IF_ERROR(model->prepare_state(pm.wrapper_source != nullptr ? &wrapper : nullptr, ctx));
  *out = reinterpret_cast<slimcuda_model*>(model.release());
  return Error::Ok;
}

Error load(const uint8_t* data, size_t size, const slimcuda_load_options& o, slimcuda_model** out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  *out = nullptr;
  if (Pt2Archive::looks_like_zip(data, size)) {
    std::unique_ptr<Pt2Archive> archive;
    SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open_memory(data, size, &archive));
    return load_pt2(*archive, o, out);
  }
  ModelPackage package;
  SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(data, size, &package));
  std::unique_ptr<Model> model;
  SLIMCUDA_RETURN_IF_ERROR(Model::load(package, o.device_type, o.device_index, o.instances, &model,
                                       static_cast<graph::GraphMode>(o.cuda_graphs)));
  *out = reinterpret_cast<slimcuda_model*>(model.release());
  return Error::Ok;
}

Error load_file(const char* path, const slimcuda_load_options& o, slimcuda_model** out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  *out = nullptr;
  SLIMCUDA_CHECK_OR_RETURN(path != nullptr, Error::InvalidArgument, "null path");
  // The first bytes say which kind of file it is.
  int fd = -1;
  uint64_t file_size = 0;
  SLIMCUDA_RETURN_IF_ERROR(open_regular_file(path, &fd, &file_size));
  uint8_t magic[4] = {};
  const ssize_t got = ::pread(fd, magic, sizeof magic, 0);
  (void)::close(fd);
  if (got == static_cast<ssize_t>(sizeof magic) && Pt2Archive::looks_like_zip(magic, sizeof magic)) {
    std::unique_ptr<Pt2Archive> archive;
    SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open(path, &archive));
    return load_pt2(*archive, o, out);
  }
  std::vector<uint8_t> bytes;
  SLIMCUDA_RETURN_IF_ERROR(read_regular_file(path, kMaxPackageFileBytes, &bytes));
  return load(bytes.data(), bytes.size(), o, out);
}

slimcuda_load_options default_options() {
  return slimcuda_load_options{
      static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 0, nullptr, SLIMCUDA_GRAPHS_OFF};
}

// Reads load options (NULL: every default); an older version's struct stops before
// model_name.
Error read_options(const slimcuda_load_options* opts, slimcuda_load_options* out) {
  *out = default_options();
  if (opts == nullptr) return Error::Ok;
  static_assert(offsetof(slimcuda_load_options, model_name) == SLIMCUDA_LOAD_OPTIONS_V1_SIZE,
                "version 1 of the options ends where model_name starts");
  const int32_t size = opts->struct_size;
  SLIMCUDA_CHECK_OR_RETURN(
      size == static_cast<int32_t>(sizeof(slimcuda_load_options)) || size == SLIMCUDA_LOAD_OPTIONS_V1_SIZE,
      Error::InvalidArgument, "load options struct_size %d, want %zu (or %d, version 0.2)", size,
      sizeof(slimcuda_load_options), SLIMCUDA_LOAD_OPTIONS_V1_SIZE);
  std::memcpy(static_cast<void*>(out), opts, static_cast<size_t>(size));
  out->struct_size = static_cast<int32_t>(sizeof(slimcuda_load_options));
  SLIMCUDA_CHECK_OR_RETURN(out->cuda_graphs >= SLIMCUDA_GRAPHS_OFF && out->cuda_graphs <= SLIMCUDA_GRAPHS_STRICT,
                           Error::InvalidArgument, "cuda_graphs %d (want 0 off, 1 on, 2 strict)", out->cuda_graphs);
  return Error::Ok;
}

void fill_spec(const TensorSpec& s, slimcuda_tensor_spec* out) {
  out->name = s.name.c_str();
  out->device_type = static_cast<int32_t>(s.device.type);
  out->device_index = s.device.index;
  if (!s.known) {
    out->dtype = SLIMCUDA_SPEC_UNKNOWN;
    out->dynamism = SLIMCUDA_SPEC_UNKNOWN;
    out->ndim = 0;
    out->sizes = nullptr;
    return;
  }
  out->dtype = static_cast<int32_t>(s.dtype);
  out->dynamism = static_cast<int32_t>(s.dynamism);
  out->ndim = static_cast<int64_t>(s.sizes.size());
  out->sizes = s.sizes.data();
  out->device_type = static_cast<int32_t>(s.device.type);
  out->device_index = s.device.index;
}

// A state operation's stream: the caller's when selected (CUDA models).
Error state_context(const Model& m, StreamContext* ctx) {
  *ctx = StreamContext::unselected(-1);
  return m.device().is_cuda() ? caller_context(m.device().index, ctx) : Error::Ok;
}

}  // namespace

extern "C" {

int32_t slimcuda_package_check(const void* data, size_t size) {
  return c_entry(__func__, [&]() {
    ModelPackage package;
    return ModelPackage::parse(static_cast<const uint8_t*>(data), size, &package);
  });
}

int32_t slimcuda_package_pack(const char* manifest_path, const char* out_path) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(manifest_path != nullptr && out_path != nullptr, Error::InvalidArgument, "null path");
    ModelPackage package;
    SLIMCUDA_RETURN_IF_ERROR(package_from_manifest(manifest_path, &package));
    std::vector<uint8_t> bytes;
    SLIMCUDA_RETURN_IF_ERROR(package.serialize(&bytes));
    ModelPackage check;  // what we write must read back
    SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(bytes.data(), bytes.size(), &check));
    return write_regular_file(out_path, bytes.data(), bytes.size());
  });
}

int32_t slimcuda_model_load(const void* data, size_t size, int32_t device_type, int32_t device_index,
                            slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o = default_options();
    o.device_type = device_type;
    o.device_index = device_index;
    return load(static_cast<const uint8_t*>(data), size, o, out);
  });
}

int32_t slimcuda_model_load_with(const void* data, size_t size, const slimcuda_load_options* options,
                                 slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o));
    return load(static_cast<const uint8_t*>(data), size, o, out);
  });
}

int32_t slimcuda_model_load_file(const char* path, int32_t device_type, int32_t device_index, slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o = default_options();
    o.device_type = device_type;
    o.device_index = device_index;
    return load_file(path, o, out);
  });
}

int32_t slimcuda_model_load_file_with(const char* path, const slimcuda_load_options* options, slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o));
    return load_file(path, o, out);
  });
}

int32_t slimcuda_model_free(slimcuda_model* model) {
  delete cast(model);
  return SLIMCUDA_OK;
}

int32_t slimcuda_model_device(const slimcuda_model* model, int32_t* device_type, int32_t* device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && device_type && device_index, Error::InvalidArgument, "null argument");
    *device_type = static_cast<int32_t>(cast(model)->device().type);
    *device_index = cast(model)->device().index;
    return Error::Ok;
  });
}

int32_t slimcuda_model_graph_stats(const slimcuda_model* model, slimcuda_graph_stats* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && out, Error::InvalidArgument, "null argument");
    const graph::GraphStats s = cast(model)->graph_stats();
    *out = slimcuda_graph_stats{s.captures, s.replays, s.fallbacks, s.graphs};
    return Error::Ok;
  });
}

int32_t slimcuda_model_instances(const slimcuda_model* model, int32_t* instances) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && instances, Error::InvalidArgument, "null argument");
    *instances = cast(model)->instances();
    return Error::Ok;
  });
}

int32_t slimcuda_model_num_io(const slimcuda_model* model, size_t* num_inputs, size_t* num_outputs) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && num_inputs && num_outputs, Error::InvalidArgument, "null argument");
    *num_inputs = cast(model)->method().inputs.size();
    *num_outputs = cast(model)->method().outputs.size();
    return Error::Ok;
  });
}

int32_t slimcuda_model_input_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && out, Error::InvalidArgument, "null argument");
    const auto& specs = cast(model)->method().inputs;
    SLIMCUDA_CHECK_OR_RETURN(index < specs.size(), Error::InvalidArgument, "input %zu of %zu", index, specs.size());
    fill_spec(specs[index], out);
    return Error::Ok;
  });
}

int32_t slimcuda_model_output_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && out, Error::InvalidArgument, "null argument");
    const auto& specs = cast(model)->method().outputs;
    SLIMCUDA_CHECK_OR_RETURN(index < specs.size(), Error::InvalidArgument, "output %zu of %zu", index, specs.size());
    fill_spec(specs[index], out);
    return Error::Ok;
  });
}

int32_t slimcuda_model_run(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                           slimcuda_tensor** outputs, size_t num_outputs) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr, Error::InvalidArgument, "null model");
    const Device device = cast(model)->device();
    StreamContext ctx = StreamContext::unselected(-1);
    if (device.is_cuda()) SLIMCUDA_RETURN_IF_ERROR(caller_context(device.index, &ctx));
    return cast(model)->run(reinterpret_cast<SlimTensor* const*>(inputs), num_inputs,
                            reinterpret_cast<SlimTensor**>(outputs), num_outputs, ctx);
  });
}

int32_t slimcuda_model_run_on(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                              slimcuda_tensor** outputs, size_t num_outputs, void* stream) {
  return with_stream(stream, [&] { return slimcuda_model_run(model, inputs, num_inputs, outputs, num_outputs); });
}

int32_t slimcuda_model_num_constants(const slimcuda_model* model, size_t* count) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && count, Error::InvalidArgument, "null argument");
    *count = cast(model)->constants_table().size();
    return Error::Ok;
  });
}

int32_t slimcuda_model_constant(const slimcuda_model* model, size_t index, slimcuda_constant_info* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && out, Error::InvalidArgument, "null argument");
    const auto& table = cast(model)->constants_table();
    SLIMCUDA_CHECK_OR_RETURN(index < table.size(), Error::InvalidArgument, "constant %zu of %zu", index, table.size());
    const Model::Constant& c = table[index];
    out->name = c.info.name.c_str();
    out->fqn = c.info.original_fqn.c_str();
    out->kind = static_cast<int32_t>(c.info.kind);
    out->dtype = c.info.dtype;
    out->is_state = c.state ? 1 : 0;
    out->visible = c.tensor != nullptr ? 1 : 0;
    out->ndim = c.tensor != nullptr ? c.tensor->dim() : 0;
    out->sizes = c.tensor != nullptr ? c.tensor->sizes().data() : nullptr;
    out->nbytes = c.info.data_size;
    return Error::Ok;
  });
}

int32_t slimcuda_model_reset_state(slimcuda_model* model) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr, Error::InvalidArgument, "null model");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return cast(model)->reset_state(ctx);
  });
}

int32_t slimcuda_model_read_constant(slimcuda_model* model, const char* name, slimcuda_tensor* dst) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && name && dst, Error::InvalidArgument, "null argument");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return cast(model)->read_constant(name, *reinterpret_cast<SlimTensor*>(dst), ctx);
  });
}

int32_t slimcuda_model_write_constant(slimcuda_model* model, const char* name, const slimcuda_tensor* src) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model && name && src, Error::InvalidArgument, "null argument");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return cast(model)->write_constant(name, *reinterpret_cast<const SlimTensor*>(src), ctx);
  });
}

int32_t slimcuda_model_stage_weights(slimcuda_model* model, const char* const* names,
                                     const slimcuda_tensor* const* tensors, size_t count) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr && (count == 0 || (names != nullptr && tensors != nullptr)),
                             Error::InvalidArgument, "null argument");
    std::vector<std::string> n;
    std::vector<const SlimTensor*> t;
    for (size_t i = 0; i < count; ++i) {
      SLIMCUDA_CHECK_OR_RETURN(names[i] != nullptr, Error::InvalidArgument, "name %zu is null", i);
      n.emplace_back(names[i]);
      t.push_back(reinterpret_cast<const SlimTensor*>(tensors[i]));
    }
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return cast(model)->stage_weights(n, t, ctx);
  });
}

int32_t slimcuda_model_stage_weights_file(slimcuda_model* model, const char* path) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr && path != nullptr, Error::InvalidArgument, "null argument");
    std::unique_ptr<Pt2Archive> archive;
    SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open(path, &archive));
    Pt2Model pm;
    SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(*archive, nullptr, &pm));
    std::vector<ConstantEntry> entries;
    Pt2WeightsFormat format = Pt2WeightsFormat::InLibrary;
    SLIMCUDA_RETURN_IF_ERROR(pt2_weight_entries(*archive, pm, cast(model), &entries, &format));
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
      for (const Model::Constant& k : cast(model)->constants_table()) {
        if (k.info.name == e.name || (!k.info.original_fqn.empty() && k.info.original_fqn == e.name)) c = &k;
      }
      if (c != nullptr && c->state) continue;
      SLIMCUDA_CHECK_OR_RETURN(e.source != nullptr && e.source->view() != nullptr, Error::NotSupported,
                               "weight '%s' is not in memory as it is", e.name.c_str());
      const int32_t dtype = e.dtype != -1 ? e.dtype : (c != nullptr ? c->info.dtype : -1);
      SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(dtype), Error::InvalidProgram, "weight '%s': dtype %d",
                               e.name.c_str(), dtype);
      std::vector<int64_t> strides = e.strides;
      if (strides.empty()) {
        strides.assign(e.sizes.size(), 1);
        for (size_t d = e.sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(e.sizes[d], 1);
      }
      auto* bytes = const_cast<uint8_t*>(e.source->view() + e.source_offset);  // read only: a copy's source
      owned.push_back(std::make_unique<SlimTensor>(Storage::borrow(bytes, static_cast<size_t>(e.nbytes), Device{}),
                                                   e.sizes, strides, static_cast<ScalarType>(dtype), e.storage_offset));
      names.push_back(e.name);
      tensors.push_back(owned.back().get());
    }
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return cast(model)->stage_weights(names, tensors, ctx);  // copied before the archive closes
  });
}

int32_t slimcuda_model_swap_weights(slimcuda_model* model) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr, Error::InvalidArgument, "null model");
    return cast(model)->swap_weights();
  });
}

int32_t slimcuda_model_free_inactive_weights(slimcuda_model* model) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(model != nullptr, Error::InvalidArgument, "null model");
    return cast(model)->free_inactive_weights();
  });
}

}  // extern "C"
