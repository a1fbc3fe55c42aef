// SPDX-License-Identifier: Apache-2.0
// The model part of the C ABI (slimcuda_package_*, slimcuda_model_*).
#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/model/model.h"
#include "csrc/package/file_reader.h"
#include "csrc/package/manifest.h"
#include "csrc/package/model_package.h"
#include "slimcuda/slimcuda.h"

using namespace slimcuda;  // NOLINT: thin C shells

namespace {

Model* cast(slimcuda_model* m) { return reinterpret_cast<Model*>(m); }
const Model* cast(const slimcuda_model* m) { return reinterpret_cast<const Model*>(m); }

Error load(const uint8_t* data, size_t size, int32_t device_type, int32_t device_index, int32_t instances,
           int32_t graphs, slimcuda_model** out, const char* function) {
  SLIMCUDA_CHECK_OR_RETURN_AT(function, out != nullptr, Error::InvalidArgument, "null out");
  *out = nullptr;
  ModelPackage package;
  SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(data, size, &package, function));
  std::unique_ptr<Model> model;
  SLIMCUDA_RETURN_IF_ERROR(Model::load(package, device_type, device_index, instances, &model, function,
                                       static_cast<graph::GraphMode>(graphs)));
  *out = reinterpret_cast<slimcuda_model*>(model.release());
  return Error::Ok;
}

// Reads load options (NULL: every default).
Error read_options(const slimcuda_load_options* opts, slimcuda_load_options* out, const char* function) {
  *out = slimcuda_load_options{static_cast<int32_t>(sizeof(slimcuda_load_options)), -1, -1, 0, SLIMCUDA_GRAPHS_OFF};
  if (opts == nullptr) return Error::Ok;
  // The sizes of every released layout: a caller built against an older header sets fewer fields.
  constexpr size_t kV020 = offsetof(slimcuda_load_options, cuda_graphs);
  const size_t given = opts->struct_size > 0 ? static_cast<size_t>(opts->struct_size) : 0;
  SLIMCUDA_CHECK_OR_RETURN_AT(function, given == sizeof(slimcuda_load_options) || given == kV020,
                              Error::InvalidArgument, "load options struct_size %d, want %zu (or %zu, version 0.2)",
                              opts->struct_size, sizeof(slimcuda_load_options), kV020);
  std::memcpy(static_cast<void*>(out), opts, given);
  out->struct_size = static_cast<int32_t>(sizeof(slimcuda_load_options));
  SLIMCUDA_CHECK_OR_RETURN_AT(function,
                              out->cuda_graphs >= SLIMCUDA_GRAPHS_OFF && out->cuda_graphs <= SLIMCUDA_GRAPHS_STRICT,
                              Error::InvalidArgument, "cuda_graphs %d (want 0 off, 1 on, 2 strict)", out->cuda_graphs);
  return Error::Ok;
}

void fill_spec(const TensorSpec& s, slimcuda_tensor_spec* out) {
  out->name = s.name.c_str();
  out->dtype = static_cast<int32_t>(s.dtype);
  out->dynamism = static_cast<int32_t>(s.dynamism);
  out->ndim = static_cast<int64_t>(s.sizes.size());
  out->sizes = s.sizes.data();
  out->device_type = static_cast<int32_t>(s.device.type);
  out->device_index = s.device.index;
}

}  // namespace

extern "C" {

int32_t slimcuda_package_check(const void* data, size_t size) {
  return c_entry(__func__, [&](const char* function) {
    ModelPackage package;
    return ModelPackage::parse(static_cast<const uint8_t*>(data), size, &package, function);
  });
}

int32_t slimcuda_package_pack(const char* manifest_path, const char* out_path) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, manifest_path != nullptr && out_path != nullptr, Error::InvalidArgument,
                                "null path");
    ModelPackage package;
    SLIMCUDA_RETURN_IF_ERROR(package_from_manifest(manifest_path, &package, function));
    std::vector<uint8_t> bytes;
    SLIMCUDA_RETURN_IF_ERROR(package.serialize(&bytes, function));
    ModelPackage check;  // what we write must read back
    SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(bytes.data(), bytes.size(), &check, function));
    std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    f.close();
    SLIMCUDA_CHECK_OR_RETURN_AT(function, f.good(), Error::AccessFailed, "cannot write %s", out_path);
    return Error::Ok;
  });
}

int32_t slimcuda_model_load(const void* data, size_t size, int32_t device_type, int32_t device_index,
                            slimcuda_model** out) {
  return c_entry(__func__, [&](const char* function) {
    return load(static_cast<const uint8_t*>(data), size, device_type, device_index, 0, SLIMCUDA_GRAPHS_OFF, out,
                function);
  });
}

int32_t slimcuda_model_load_with(const void* data, size_t size, const slimcuda_load_options* options,
                                 slimcuda_model** out) {
  return c_entry(__func__, [&](const char* function) {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o, function));
    return load(static_cast<const uint8_t*>(data), size, o.device_type, o.device_index, o.instances, o.cuda_graphs, out,
                function);
  });
}

int32_t slimcuda_model_load_file(const char* path, int32_t device_type, int32_t device_index, slimcuda_model** out) {
  return c_entry(__func__, [&](const char* function) {
    std::vector<uint8_t> bytes;
    SLIMCUDA_CHECK_OR_RETURN_AT(function, path != nullptr, Error::InvalidArgument, "null path");
    SLIMCUDA_RETURN_IF_ERROR(read_regular_file(path, kMaxPackageFileBytes, &bytes, function));
    return load(bytes.data(), bytes.size(), device_type, device_index, 0, SLIMCUDA_GRAPHS_OFF, out, function);
  });
}

int32_t slimcuda_model_load_file_with(const char* path, const slimcuda_load_options* options, slimcuda_model** out) {
  return c_entry(__func__, [&](const char* function) {
    slimcuda_load_options o;
    SLIMCUDA_RETURN_IF_ERROR(read_options(options, &o, function));
    std::vector<uint8_t> bytes;
    SLIMCUDA_CHECK_OR_RETURN_AT(function, path != nullptr, Error::InvalidArgument, "null path");
    SLIMCUDA_RETURN_IF_ERROR(read_regular_file(path, kMaxPackageFileBytes, &bytes, function));
    return load(bytes.data(), bytes.size(), o.device_type, o.device_index, o.instances, o.cuda_graphs, out, function);
  });
}

int32_t slimcuda_model_free(slimcuda_model* model) {
  delete cast(model);
  return SLIMCUDA_OK;
}

int32_t slimcuda_model_device(const slimcuda_model* model, int32_t* device_type, int32_t* device_index) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && device_type && device_index, Error::InvalidArgument,
                                "null argument");
    *device_type = static_cast<int32_t>(cast(model)->device().type);
    *device_index = cast(model)->device().index;
    return Error::Ok;
  });
}

int32_t slimcuda_model_graph_stats(const slimcuda_model* model, slimcuda_graph_stats* out) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && out, Error::InvalidArgument, "null argument");
    const graph::GraphStats s = cast(model)->graph_stats();
    *out = slimcuda_graph_stats{s.captures, s.replays, s.fallbacks, s.graphs};
    return Error::Ok;
  });
}

int32_t slimcuda_model_instances(const slimcuda_model* model, int32_t* instances) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && instances, Error::InvalidArgument, "null argument");
    *instances = cast(model)->instances();
    return Error::Ok;
  });
}

int32_t slimcuda_model_num_io(const slimcuda_model* model, size_t* num_inputs, size_t* num_outputs) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && num_inputs && num_outputs, Error::InvalidArgument, "null argument");
    *num_inputs = cast(model)->method().inputs.size();
    *num_outputs = cast(model)->method().outputs.size();
    return Error::Ok;
  });
}

int32_t slimcuda_model_input_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && out, Error::InvalidArgument, "null argument");
    const auto& specs = cast(model)->method().inputs;
    SLIMCUDA_CHECK_OR_RETURN_AT(function, index < specs.size(), Error::InvalidArgument, "input %zu of %zu", index,
                                specs.size());
    fill_spec(specs[index], out);
    return Error::Ok;
  });
}

int32_t slimcuda_model_output_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model && out, Error::InvalidArgument, "null argument");
    const auto& specs = cast(model)->method().outputs;
    SLIMCUDA_CHECK_OR_RETURN_AT(function, index < specs.size(), Error::InvalidArgument, "output %zu of %zu", index,
                                specs.size());
    fill_spec(specs[index], out);
    return Error::Ok;
  });
}

int32_t slimcuda_model_run(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                           slimcuda_tensor** outputs, size_t num_outputs) {
  return c_entry(__func__, [&](const char* function) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, model != nullptr, Error::InvalidArgument, "null model");
    const Device device = cast(model)->device();
    StreamContext ctx = StreamContext::unselected(-1);
    if (device.is_cuda()) SLIMCUDA_RETURN_IF_ERROR(caller_context(device.index, &ctx, function));
    return cast(model)->run(reinterpret_cast<SlimTensor* const*>(inputs), num_inputs,
                            reinterpret_cast<SlimTensor**>(outputs), num_outputs, ctx, function);
  });
}

int32_t slimcuda_model_run_on(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                              slimcuda_tensor** outputs, size_t num_outputs, void* stream) {
  return with_stream(stream, [&] { return slimcuda_model_run(model, inputs, num_inputs, outputs, num_outputs); });
}

}  // extern "C"
