// SPDX-License-Identifier: Apache-2.0
#include "csrc/package/manifest.h"

#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <new>

#include <nlohmann/json.hpp>

#include "csrc/core/limits.h"
#include "csrc/package/file_reader.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

using nlohmann::json;

// A JSON integer (not a float, even 2.0 or 1e10; not a boolean) within [lo, hi]: manifest
// numbers are never truncated or wrapped.
Error integer(const json& j, int64_t lo, int64_t hi, const std::string& tensor, const std::string& field,
              int64_t* out) {
  bool ok = false;
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    ok = v <= static_cast<uint64_t>(hi) && hi >= 0;
    if (ok) *out = static_cast<int64_t>(v);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    ok = v >= lo && v <= hi;
    if (ok) *out = v;
  }
  if (ok) return Error::Ok;
  return set_last_error(Error::InvalidArgument, "tensor '%s': %s must be an integer in [%lld, %lld], got %s",
                        tensor.c_str(), field.c_str(), static_cast<long long>(lo), static_cast<long long>(hi),
                        j.dump().c_str());
}

// An array of integers within [lo, hi] (see integer).
template <typename T>
Error integers(const json& j, int64_t lo, int64_t hi, const std::string& tensor, const char* field,
               std::vector<T>* out) {
  SLIMCUDA_CHECK_OR_RETURN(j.is_array(), Error::InvalidArgument, "tensor '%s': %s must be an array", tensor.c_str(),
                           field);
  out->clear();
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t v = 0;
    SLIMCUDA_RETURN_IF_ERROR(integer(j[i], lo, hi, tensor, std::string(field) + "[" + std::to_string(i) + "]", &v));
    out->push_back(static_cast<T>(v));
  }
  return Error::Ok;
}

Error device_type(const json& j, DeviceType* out) {
  SLIMCUDA_CHECK_OR_RETURN(j.is_string(), Error::InvalidArgument, "device must be \"cpu\" or \"cuda\"");
  const std::string s = j.get<std::string>();
  if (s == "cpu" || s == "cuda") {
    *out = s == "cpu" ? DeviceType::CPU : DeviceType::CUDA;
    return Error::Ok;
  }
  return set_last_error(Error::InvalidArgument, "unknown device \"%s\" (cpu or cuda)", s.c_str());
}

Error tensor_spec(const json& j, TensorSpec* s) {
  static const std::map<std::string, ScalarType> kDtypes = {
      {"uint8", ScalarType::Byte},       {"int8", ScalarType::Char},      {"int16", ScalarType::Short},
      {"int32", ScalarType::Int},        {"int64", ScalarType::Long},     {"float16", ScalarType::Half},
      {"float32", ScalarType::Float},    {"float64", ScalarType::Double}, {"bool", ScalarType::Bool},
      {"bfloat16", ScalarType::BFloat16}};
  static const std::map<std::string, Dynamism> kDynamism = {{"static", Dynamism::Static},
                                                            {"dynamic_bounded", Dynamism::DynamicBounded},
                                                            {"dynamic_unbounded", Dynamism::DynamicUnbounded}};
  SLIMCUDA_CHECK_OR_RETURN(j.is_object(), Error::InvalidArgument, "tensor spec must be an object");
  s->name = j.value("name", "");
  const std::string dtype = j.value("dtype", "");
  const auto dt = kDtypes.find(dtype);
  SLIMCUDA_CHECK_OR_RETURN(dt != kDtypes.end(), Error::InvalidArgument,
                           "tensor '%s': unknown dtype \"%s\" (uint8, int8, int16, int32, int64, float16, bfloat16, "
                           "float32, float64 or bool)",
                           s->name.c_str(), dtype.c_str());
  s->dtype = dt->second;
  constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min(), kInt64Max = std::numeric_limits<int64_t>::max();
  SLIMCUDA_RETURN_IF_ERROR(integers(j.at("sizes"), kInt64Min, kInt64Max, s->name, "sizes", &s->sizes));
  if (j.contains("min_sizes")) {
    SLIMCUDA_RETURN_IF_ERROR(integers(j["min_sizes"], kInt64Min, kInt64Max, s->name, "min_sizes", &s->min_sizes));
  }
  if (j.contains("dim_order")) {
    SLIMCUDA_RETURN_IF_ERROR(integers(j["dim_order"], 0, UINT8_MAX, s->name, "dim_order", &s->dim_order));
  }
  const std::string dynamism = j.value("dynamism", "static");
  const auto dy = kDynamism.find(dynamism);
  SLIMCUDA_CHECK_OR_RETURN(dy != kDynamism.end(), Error::InvalidArgument,
                           "tensor '%s': unknown dynamism \"%s\" (static, dynamic_bounded or dynamic_unbounded)",
                           s->name.c_str(), dynamism.c_str());
  s->dynamism = dy->second;
  SLIMCUDA_RETURN_IF_ERROR(device_type(j.at("device"), &s->device.type));
  int64_t index = -1;
  if (j.contains("device_index")) {
    SLIMCUDA_RETURN_IF_ERROR(integer(j["device_index"], -1, kMaxDevices - 1, s->name, "device_index", &index));
  }
  s->device.index = static_cast<DeviceIndex>(index);
  return Error::Ok;
}

}  // namespace

Error package_from_manifest(const std::string& manifest_path, ModelPackage* out) noexcept {
  try {
    std::vector<uint8_t> text;
    SLIMCUDA_RETURN_IF_ERROR(read_regular_file(manifest_path.c_str(), kMaxManifestFileBytes, &text));
    const json m = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    SLIMCUDA_CHECK_OR_RETURN(!m.is_discarded() && m.is_object(), Error::InvalidArgument, "%s: not a JSON object",
                             manifest_path.c_str());
    const size_t slash = manifest_path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "" : manifest_path.substr(0, slash + 1);
    auto resolve = [&](const std::string& p) { return (!p.empty() && p[0] == '/') ? p : dir + p; };
    ModelPackage pkg;
    SLIMCUDA_CHECK_OR_RETURN(m.contains("libraries") && m["libraries"].is_array(), Error::InvalidArgument,
                             "manifest needs a \"libraries\" array");
    for (const json& l : m["libraries"]) {
      LibrarySpec lib;
      SLIMCUDA_RETURN_IF_ERROR(device_type(l.at("device"), &lib.device_type));
      SLIMCUDA_RETURN_IF_ERROR(
          read_regular_file(resolve(l.at("so").get<std::string>()).c_str(), kMaxPackageFileBytes, &lib.so));
      for (const json& jm : l.at("methods")) {
        MethodSpec ms;
        ms.name = jm.at("name").get<std::string>();
        for (const json& t : jm.at("inputs")) {
          TensorSpec s;
          SLIMCUDA_RETURN_IF_ERROR(tensor_spec(t, &s));
          ms.inputs.push_back(std::move(s));
        }
        for (const json& t : jm.at("outputs")) {
          TensorSpec s;
          SLIMCUDA_RETURN_IF_ERROR(tensor_spec(t, &s));
          ms.outputs.push_back(std::move(s));
        }
        lib.methods.push_back(std::move(ms));
      }
      pkg.libraries.push_back(std::move(lib));
    }
    if (m.contains("weights")) {
      SLIMCUDA_RETURN_IF_ERROR(
          read_regular_file(resolve(m["weights"].get<std::string>()).c_str(), kMaxPackageFileBytes, &pkg.weights));
    }
    *out = std::move(pkg);
    return Error::Ok;
  } catch (const nlohmann::json::exception& e) {
    return set_last_error(Error::InvalidArgument, "%s: %s", manifest_path.c_str(), e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  } catch (const std::exception& e) {
    return set_last_error(Error::Internal, "%s: unexpected exception: %s", manifest_path.c_str(), e.what());
  } catch (...) {
    return set_last_error(Error::Internal, "%s: unexpected exception", manifest_path.c_str());
  }
}

}  // namespace slimcuda
