// SPDX-License-Identifier: Apache-2.0
// The model part of the C ABI (slimcuda_package_*, slimcuda_model_*).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/model/describe.h"
#include "csrc/model/load.h"
#include "csrc/model/model.h"
#include "csrc/model/pt2_weights.h"
#include "csrc/package/file_reader.h"
#include "csrc/package/manifest.h"
#include "csrc/package/model_package.h"
#include "csrc/proxy/bind.h"
#include "slimcuda/slimcuda.h"

using namespace slimcuda;  // NOLINT: thin C shells

namespace {

Model* cast(slimcuda_model* m) { return reinterpret_cast<Model*>(m); }
const Model* cast(const slimcuda_model* m) { return reinterpret_cast<const Model*>(m); }

// The C options as the model component's.
LoadOptions load_options(const slimcuda_load_options& o) {
  LoadOptions l;
  l.device_type = o.device_type;
  l.device_index = o.device_index;
  l.instances = o.instances;
  l.model_name = o.model_name;
  l.graphs = static_cast<graph::GraphMode>(o.cuda_graphs);
  l.caller_context = caller_context;
  l.bind_extern_kernels = proxy::bind_extern_kernels;
  return l;
}

Error load(const LoadSource& source, const slimcuda_load_options& o, slimcuda_model** out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  *out = nullptr;
  std::unique_ptr<Model> model;
  SLIMCUDA_RETURN_IF_ERROR(load_model(source, load_options(o), &model));
  *out = reinterpret_cast<slimcuda_model*>(model.release());
  return Error::Ok;
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

const ModelDescription* cast(const slimcuda_description* d) { return reinterpret_cast<const ModelDescription*>(d); }

Error describe(const LoadSource& source, const slimcuda_load_options* options, slimcuda_description** out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  *out = nullptr;
  slimcuda_load_options o;
  SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o));
  auto d = std::make_unique<ModelDescription>();
  SLIMCUDA_RETURN_IF_ERROR(describe_model(source, o.device_type, o.model_name, d.get()));
  *out = reinterpret_cast<slimcuda_description*>(d.release());
  return Error::Ok;
}

Error description_spec(const slimcuda_description* d, bool output, size_t index, slimcuda_tensor_spec* out) {
  SLIMCUDA_CHECK_OR_RETURN(d && out, Error::InvalidArgument, "null argument");
  const auto& specs = output ? cast(d)->method.outputs : cast(d)->method.inputs;
  SLIMCUDA_CHECK_OR_RETURN(index < specs.size(), Error::InvalidArgument, "%s %zu of %zu", output ? "output" : "input",
                           index, specs.size());
  fill_spec(specs[index], out);
  return Error::Ok;
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
    return load(LoadSource::bytes(data, size), o, out);
  });
}

int32_t slimcuda_model_load_with(const void* data, size_t size, const slimcuda_load_options* options,
                                 slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o));
    return load(LoadSource::bytes(data, size), o, out);
  });
}

int32_t slimcuda_model_load_file(const char* path, int32_t device_type, int32_t device_index, slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o = default_options();
    o.device_type = device_type;
    o.device_index = device_index;
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr, Error::InvalidArgument, "null path");
    return load(LoadSource::file(path), o, out);
  });
}

int32_t slimcuda_model_load_file_with(const char* path, const slimcuda_load_options* options, slimcuda_model** out) {
  return c_entry(__func__, [&]() {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o));
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr, Error::InvalidArgument, "null path");
    return load(LoadSource::file(path), o, out);
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

int32_t slimcuda_describe(const void* data, size_t size, const slimcuda_load_options* options,
                          slimcuda_description** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(data != nullptr || size == 0, Error::InvalidArgument, "null data");
    return describe(LoadSource::bytes(data, size), options, out);
  });
}

int32_t slimcuda_describe_file(const char* path, const slimcuda_load_options* options, slimcuda_description** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr, Error::InvalidArgument, "null path");
    return describe(LoadSource::file(path), options, out);
  });
}

int32_t slimcuda_description_free(slimcuda_description* description) {
  delete cast(description);
  return SLIMCUDA_OK;
}

int32_t slimcuda_description_device(const slimcuda_description* description, int32_t* device_type,
                                    uint32_t* device_types) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(description && device_type && device_types, Error::InvalidArgument, "null argument");
    *device_type = static_cast<int32_t>(cast(description)->device_type);
    *device_types = 0;
    for (DeviceType t : cast(description)->devices) *device_types |= 1u << static_cast<unsigned>(t);
    return Error::Ok;
  });
}

int32_t slimcuda_description_num_io(const slimcuda_description* description, size_t* num_inputs, size_t* num_outputs) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(description && num_inputs && num_outputs, Error::InvalidArgument, "null argument");
    *num_inputs = cast(description)->method.inputs.size();
    *num_outputs = cast(description)->method.outputs.size();
    return Error::Ok;
  });
}

int32_t slimcuda_description_input_spec(const slimcuda_description* description, size_t index,
                                        slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&]() { return description_spec(description, false, index, out); });
}

int32_t slimcuda_description_output_spec(const slimcuda_description* description, size_t index,
                                         slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&]() { return description_spec(description, true, index, out); });
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
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(state_context(*cast(model), &ctx));
    return stage_pt2_weights_file(cast(model), path, ctx);
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
