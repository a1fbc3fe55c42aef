#include "csrc/package/manifest.h"

#include <cstdint>
#include <exception>
#include <map>
#include <new>

#include <nlohmann/json.hpp>

#include "csrc/package/file_reader.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

using nlohmann::json;

Error device_type(const json& j, DeviceType* out, const char* function) {
  SLIMCUDA_CHECK_OR_RETURN_AT(function, j.is_string(), Error::InvalidArgument, "device must be \"cpu\" or \"cuda\"");
  const std::string s = j.get<std::string>();
  if (s == "cpu" || s == "cuda") {
    *out = s == "cpu" ? DeviceType::CPU : DeviceType::CUDA;
    return Error::Ok;
  }
  return set_last_error(Error::InvalidArgument, function, "unknown device \"%s\" (cpu or cuda)", s.c_str());
}

Error tensor_spec(const json& j, TensorSpec* s, const char* function) {
  static const std::map<std::string, ScalarType> kDtypes = {
      {"uint8", ScalarType::Byte},     {"int8", ScalarType::Char},    {"int16", ScalarType::Short},
      {"int32", ScalarType::Int},      {"int64", ScalarType::Long},   {"float16", ScalarType::Half},
      {"float32", ScalarType::Float},  {"float64", ScalarType::Double}, {"bool", ScalarType::Bool},
      {"bfloat16", ScalarType::BFloat16}};
  static const std::map<std::string, Dynamism> kDynamism = {{"static", Dynamism::Static},
                                                            {"dynamic_bounded", Dynamism::DynamicBounded},
                                                            {"dynamic_unbounded", Dynamism::DynamicUnbounded}};
  SLIMCUDA_CHECK_OR_RETURN_AT(function, j.is_object(), Error::InvalidArgument, "tensor spec must be an object");
  s->name = j.value("name", "");
  const auto dt = kDtypes.find(j.value("dtype", ""));
  SLIMCUDA_CHECK_OR_RETURN_AT(function, dt != kDtypes.end(), Error::InvalidArgument, "tensor '%s': unknown dtype",
                              s->name.c_str());
  s->dtype = dt->second;
  s->sizes = j.at("sizes").get<std::vector<int64_t>>();
  if (j.contains("min_sizes")) s->min_sizes = j["min_sizes"].get<std::vector<int64_t>>();
  if (j.contains("dim_order")) s->dim_order = j["dim_order"].get<std::vector<uint8_t>>();
  const auto dy = kDynamism.find(j.value("dynamism", "static"));
  SLIMCUDA_CHECK_OR_RETURN_AT(function, dy != kDynamism.end(), Error::InvalidArgument,
                              "tensor '%s': unknown dynamism", s->name.c_str());
  s->dynamism = dy->second;
  SLIMCUDA_RETURN_IF_ERROR(device_type(j.at("device"), &s->device.type, function));
  const int index = j.value("device_index", -1);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, index >= -1 && index <= 127, Error::InvalidArgument,
                              "tensor '%s': device index %d", s->name.c_str(), index);
  s->device.index = static_cast<DeviceIndex>(index);
  return Error::Ok;
}

}  // namespace

Error package_from_manifest(const std::string& manifest_path, ModelPackage* out, const char* function) noexcept {
  try {
    std::vector<uint8_t> text;
    SLIMCUDA_RETURN_IF_ERROR(read_regular_file(manifest_path.c_str(), kMaxManifestFileBytes, &text, function));
    const json m = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    SLIMCUDA_CHECK_OR_RETURN_AT(function, !m.is_discarded() && m.is_object(), Error::InvalidArgument,
                                "%s: not a JSON object", manifest_path.c_str());
    const size_t slash = manifest_path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "" : manifest_path.substr(0, slash + 1);
    auto resolve = [&](const std::string& p) { return (!p.empty() && p[0] == '/') ? p : dir + p; };
    ModelPackage pkg;
    SLIMCUDA_CHECK_OR_RETURN_AT(function, m.contains("libraries") && m["libraries"].is_array(),
                                Error::InvalidArgument, "manifest needs a \"libraries\" array");
    for (const json& l : m["libraries"]) {
      LibrarySpec lib;
      SLIMCUDA_RETURN_IF_ERROR(device_type(l.at("device"), &lib.device_type, function));
      SLIMCUDA_RETURN_IF_ERROR(read_regular_file(resolve(l.at("so").get<std::string>()).c_str(), kMaxPackageFileBytes,
                                                 &lib.so, function));
      for (const json& jm : l.at("methods")) {
        MethodSpec ms;
        ms.name = jm.at("name").get<std::string>();
        for (const json& t : jm.at("inputs")) {
          TensorSpec s;
          SLIMCUDA_RETURN_IF_ERROR(tensor_spec(t, &s, function));
          ms.inputs.push_back(std::move(s));
        }
        for (const json& t : jm.at("outputs")) {
          TensorSpec s;
          SLIMCUDA_RETURN_IF_ERROR(tensor_spec(t, &s, function));
          ms.outputs.push_back(std::move(s));
        }
        lib.methods.push_back(std::move(ms));
      }
      pkg.libraries.push_back(std::move(lib));
    }
    if (m.contains("weights")) {
      SLIMCUDA_RETURN_IF_ERROR(read_regular_file(resolve(m["weights"].get<std::string>()).c_str(),
                                                 kMaxPackageFileBytes, &pkg.weights, function));
    }
    *out = std::move(pkg);
    return Error::Ok;
  } catch (const nlohmann::json::exception& e) {
    return set_last_error(Error::InvalidArgument, function, "%s: %s", manifest_path.c_str(), e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, function, "out of host memory");
  } catch (const std::exception& e) {
    return set_last_error(Error::Internal, function, "%s: unexpected exception: %s", manifest_path.c_str(), e.what());
  } catch (...) {
    return set_last_error(Error::Internal, function, "%s: unexpected exception", manifest_path.c_str());
  }
}

}  // namespace slimcuda
