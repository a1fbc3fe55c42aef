// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/describe.h"

#include <utility>

#include "csrc/archive/pt2_model.h"
#include "csrc/cuda/device.h"
#include "csrc/model/model.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

Error describe_pt2(const Pt2Archive& archive, int device_type, const char* model_name, ModelDescription* out) {
  Pt2Model pm;
  SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(archive, model_name, &pm));
  const char* device_name = pm.device_type == DeviceType::CUDA ? "cuda" : "cpu";
  SLIMCUDA_CHECK_OR_RETURN(device_type == -1 || device_type == static_cast<int>(pm.device_type), Error::NotSupported,
                           "model '%s' is compiled for %s (AOTI_DEVICE_KEY); a .pt2 model runs on that device only",
                           pm.name.c_str(), device_name);
  SLIMCUDA_CHECK_OR_RETURN(pm.wrapper_source != nullptr, Error::NotSupported,
                           "model '%s': the archive has no wrapper source, the only place that states its inputs "
                           "and outputs without loading it",
                           pm.name.c_str());
  std::string wrapper;
  SLIMCUDA_RETURN_IF_ERROR(read_wrapper_source(archive, pm, &wrapper));
  WrapperIo io;
  if (const Error e = parse_wrapper_io(wrapper, &io); e != Error::Ok) {
    SLIMCUDA_CHECK_OR_RETURN(e != Error::NotFound, Error::NotSupported,
                             "model '%s': its wrapper source states no input and output counts", pm.name.c_str());
    return e;
  }
  ModelDescription d;
  d.devices = {pm.device_type};
  d.device_type = pm.device_type;
  d.model_name = pm.name;
  d.method.name = "forward";
  const Error in = parse_input_checks(wrapper, io.num_inputs, &d.method.inputs);
  if (in == Error::NotFound) {
    d.method.inputs.resize(io.num_inputs);
    for (size_t i = 0; i < io.num_inputs; ++i) {
      d.method.inputs[i].name = io.input_names[i];
      d.method.inputs[i].known = false;
    }
  } else if (in != Error::Ok) {
    return in;
  }
  SLIMCUDA_RETURN_IF_ERROR(parse_output_allocations(wrapper, io.output_names, &d.method.outputs));
  for (auto* specs : {&d.method.inputs, &d.method.outputs}) {
    for (TensorSpec& s : *specs) s.device = Device{pm.device_type, -1};
  }
  *out = std::move(d);
  return Error::Ok;
}

Error describe_package(const uint8_t* data, size_t size, int device_type, ModelDescription* out) {
  ModelPackage package;
  SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(data, size, &package));
  ModelDescription d;
  for (const LibrarySpec& lib : package.libraries) d.devices.push_back(lib.device_type);
  if (device_type == -1) {
    device_type = (package.library(DeviceType::CUDA) != nullptr && cuda::device_count() > 0) ? 1 : 0;
  }
  d.device_type = static_cast<DeviceType>(device_type);
  const LibrarySpec* lib = package.library(d.device_type);
  SLIMCUDA_CHECK_OR_RETURN(lib != nullptr, Error::NotSupported, "the package has no %s library",
                           device_type == 1 ? "CUDA" : "CPU");
  for (const MethodSpec& m : lib->methods) {
    if (m.name == "forward") d.method = m;
  }
  SLIMCUDA_CHECK_OR_RETURN(d.method.name == "forward", Error::InvalidProgram, "no method \"forward\"");
  *out = std::move(d);
  return Error::Ok;
}

}  // namespace

Error describe_model(const LoadSource& source, int device_type, const char* model_name, ModelDescription* out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  SLIMCUDA_RETURN_IF_ERROR(Model::check_device_type(device_type));
  return read_model_source(
      source, [&](const Pt2Archive& a) { return describe_pt2(a, device_type, model_name, out); },
      [&](const uint8_t* data, size_t size) { return describe_package(data, size, device_type, out); });
}

}  // namespace slimcuda
