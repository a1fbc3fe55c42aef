// SPDX-License-Identifier: Apache-2.0
#include "csrc/package/model_package.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <new>

#include "csrc/core/limits.h"
#include "csrc/package/elf_check.h"
#include "csrc/package/library_hash.h"
#include "csrc/package/package_generated.h"
#include "slimcuda/last_error.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda {
namespace {

// Maximum sizes we accept from a file; beyond them the file is not a model of ours.
constexpr size_t kMaxLibraries = 8;
constexpr size_t kMaxMethods = 64;
constexpr size_t kMaxTensors = 4096;
constexpr size_t kMaxNameLength = 1024;

bool valid_device_type(int v) {
  return v == static_cast<int>(DeviceType::CPU) || v == static_cast<int>(DeviceType::CUDA);
}

// The verifier checks a vector's length word, not that 8-byte elements are 8-byte
// aligned; a hostile file can misalign them. Copy them out bytewise instead of reading
// through flatbuffers' typed accessors.
std::vector<int64_t> read_longs(const flatbuffers::Vector<int64_t>* v) {
  std::vector<int64_t> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(int64_t));
  return out;
}

}  // namespace

Error check_tensor_spec(const TensorSpec& s, const char* what) noexcept {
  const char* n = s.name.c_str();
  SLIMCUDA_CHECK_OR_RETURN(s.name.size() <= kMaxNameLength, Error::InvalidProgram, "%s: name longer than %zu bytes",
                           what, kMaxNameLength);
  SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(static_cast<int32_t>(s.dtype)), Error::InvalidProgram,
                           "%s '%s': unknown dtype %d", what, n, static_cast<int>(s.dtype));
  SLIMCUDA_CHECK_OR_RETURN(valid_device_type(static_cast<int>(s.device.type)), Error::InvalidProgram,
                           "%s '%s': unknown device type %d", what, n, static_cast<int>(s.device.type));
  SLIMCUDA_CHECK_OR_RETURN(s.device.index >= -1, Error::InvalidProgram, "%s '%s': device index %d < -1", what, n,
                           s.device.index);
  SLIMCUDA_CHECK_OR_RETURN(static_cast<int>(s.dynamism) >= 0 && static_cast<int>(s.dynamism) <= 2,
                           Error::InvalidProgram, "%s '%s': unknown dynamism %d", what, n,
                           static_cast<int>(s.dynamism));
  SLIMCUDA_CHECK_OR_RETURN(s.dynamism != Dynamism::DynamicUnbounded || s.device.type == DeviceType::CPU,
                           Error::InvalidProgram,
                           "%s '%s': a dynamic-unbounded tensor must live on the CPU (device memory is planned "
                           "ahead)",
                           what, n);
  SLIMCUDA_CHECK_OR_RETURN(static_cast<int64_t>(s.sizes.size()) <= kMaxDims, Error::InvalidProgram,
                           "%s '%s': rank %zu > %lld", what, n, s.sizes.size(), static_cast<long long>(kMaxDims));
  if (s.dynamism != Dynamism::DynamicUnbounded) {
    int64_t numel = 1;
    for (int64_t d : s.sizes) {
      SLIMCUDA_CHECK_OR_RETURN(d >= 0, Error::InvalidProgram, "%s '%s': negative size %lld", what, n,
                               static_cast<long long>(d));
      SLIMCUDA_CHECK_OR_RETURN(!__builtin_mul_overflow(numel, d, &numel), Error::InvalidProgram,
                               "%s '%s': numel overflows int64", what, n);
    }
    int64_t bytes = 0;
    SLIMCUDA_CHECK_OR_RETURN(!__builtin_mul_overflow(numel, static_cast<int64_t>(element_size(s.dtype)), &bytes),
                             Error::InvalidProgram, "%s '%s': size in bytes overflows int64", what, n);
  }
  if (!s.min_sizes.empty()) {
    SLIMCUDA_CHECK_OR_RETURN(s.dynamism == Dynamism::DynamicBounded, Error::InvalidProgram,
                             "%s '%s': min_sizes only make sense for a dynamic-bounded tensor", what, n);
    SLIMCUDA_CHECK_OR_RETURN(s.min_sizes.size() == s.sizes.size(), Error::InvalidProgram,
                             "%s '%s': %zu min_sizes for rank %zu", what, n, s.min_sizes.size(), s.sizes.size());
    for (size_t d = 0; d < s.sizes.size(); ++d) {
      SLIMCUDA_CHECK_OR_RETURN(s.min_sizes[d] >= 0 && s.min_sizes[d] <= s.sizes[d], Error::InvalidProgram,
                               "%s '%s': dimension %zu bounds [%lld, %lld]", what, n, d,
                               static_cast<long long>(s.min_sizes[d]), static_cast<long long>(s.sizes[d]));
    }
  }
  if (!s.dim_order.empty()) {
    SLIMCUDA_CHECK_OR_RETURN(s.dim_order.size() == s.sizes.size(), Error::InvalidProgram,
                             "%s '%s': dim_order has %zu entries for rank %zu", what, n, s.dim_order.size(),
                             s.sizes.size());
    std::vector<bool> seen(s.sizes.size(), false);
    for (uint8_t d : s.dim_order) {
      SLIMCUDA_CHECK_OR_RETURN(d < s.sizes.size() && !seen[d], Error::InvalidProgram,
                               "%s '%s': dim_order is not a permutation", what, n);
      seen[d] = true;
    }
  }
  return Error::Ok;
}

namespace {

// The readers below may throw std::bad_alloc: parse catches it.

Error read_tensor_spec(const fb::TensorSpec* t, const char* what, TensorSpec* out) {
  TensorSpec s;
  if (t->name() != nullptr) s.name = t->name()->str();
  s.dtype = static_cast<ScalarType>(t->dtype() >= -128 && t->dtype() <= 127 ? t->dtype() : -1);
  if (!is_supported_scalar_type(t->dtype())) {
    return set_last_error(Error::InvalidProgram, "%s '%s': unknown dtype %d", what, s.name.c_str(), t->dtype());
  }
  if (t->sizes() != nullptr) {
    SLIMCUDA_CHECK_OR_RETURN(t->sizes()->size() <= static_cast<uint32_t>(kMaxDims), Error::InvalidProgram,
                             "rank %u > %lld", t->sizes()->size(), static_cast<long long>(kMaxDims));
    s.sizes = read_longs(t->sizes());
  }
  if (t->min_sizes() != nullptr) {
    SLIMCUDA_CHECK_OR_RETURN(t->min_sizes()->size() <= static_cast<uint32_t>(kMaxDims), Error::InvalidProgram,
                             "min_sizes longer than %lld", static_cast<long long>(kMaxDims));
    s.min_sizes = read_longs(t->min_sizes());
  }
  if (t->dim_order() != nullptr) {
    SLIMCUDA_CHECK_OR_RETURN(t->dim_order()->size() <= static_cast<uint32_t>(kMaxDims), Error::InvalidProgram,
                             "dim_order longer than %lld", static_cast<long long>(kMaxDims));
    s.dim_order.assign(t->dim_order()->begin(), t->dim_order()->end());
  }
  s.dynamism = static_cast<Dynamism>(t->dynamism());
  s.device = Device{static_cast<DeviceType>(t->device_type()), t->device_index()};
  SLIMCUDA_RETURN_IF_ERROR(check_tensor_spec(s, what));
  *out = std::move(s);
  return Error::Ok;
}

// One method; `tensors` counts the specs across the package (bounded by kMaxTensors).
Error read_method(const fb::Method* m, size_t* tensors, MethodSpec* out) {
  SLIMCUDA_CHECK_OR_RETURN(m->name()->size() <= kMaxNameLength, Error::InvalidProgram, "method name too long");
  out->name = m->name()->str();
  for (int io = 0; io < 2; ++io) {
    const auto* list = io == 0 ? m->inputs() : m->outputs();
    if (list == nullptr) continue;
    *tensors += list->size();
    SLIMCUDA_CHECK_OR_RETURN(*tensors <= kMaxTensors, Error::InvalidProgram, "more than %zu tensor specs", kMaxTensors);
    for (const fb::TensorSpec* t : *list) {
      TensorSpec s;
      SLIMCUDA_RETURN_IF_ERROR(read_tensor_spec(t, io == 0 ? "input" : "output", &s));
      (io == 0 ? out->inputs : out->outputs).push_back(std::move(s));
    }
  }
  return Error::Ok;
}

// One library: a device type not seen before in `pkg`, its bytes matching their hash and
// shaped as the dynamic loader needs, then its methods.
Error read_library(const fb::Library* lib, const ModelPackage& pkg, size_t* tensors, LibrarySpec* out) {
  const int type = static_cast<int>(lib->device_type());
  SLIMCUDA_CHECK_OR_RETURN(valid_device_type(type), Error::InvalidProgram, "library for unknown device type %d", type);
  out->device_type = static_cast<DeviceType>(type);
  SLIMCUDA_CHECK_OR_RETURN(pkg.library(out->device_type) == nullptr, Error::InvalidProgram,
                           "two libraries for device type %d", type);
  SLIMCUDA_CHECK_OR_RETURN(lib->so()->size() > 0, Error::InvalidProgram, "empty library");
  // Integrity first (a corrupted copy says so), then the shape the dynamic loader needs.
  const auto* hash = lib->so_xxh3_128();
  SLIMCUDA_CHECK_OR_RETURN(hash != nullptr && hash->size() == kLibraryHashBytes, Error::InvalidProgram,
                           "library for device type %d has no %zu-byte XXH3-128 hash", type, kLibraryHashBytes);
  SLIMCUDA_CHECK_OR_RETURN(library_hash_matches(lib->so()->data(), lib->so()->size(), hash->data()),
                           Error::InvalidProgram,
                           "library for device type %d: its bytes do not match the package's hash (corrupted "
                           "or altered)",
                           type);
  SLIMCUDA_RETURN_IF_ERROR(check_elf(lib->so()->data(), lib->so()->size()));
  out->so.assign(lib->so()->begin(), lib->so()->end());
  SLIMCUDA_CHECK_OR_RETURN(lib->methods() != nullptr && lib->methods()->size() > 0, Error::InvalidProgram,
                           "library without methods");
  SLIMCUDA_CHECK_OR_RETURN(lib->methods()->size() <= kMaxMethods, Error::InvalidProgram, "%u methods (at most %zu)",
                           lib->methods()->size(), kMaxMethods);
  for (const fb::Method* m : *lib->methods()) {
    MethodSpec ms;
    SLIMCUDA_RETURN_IF_ERROR(read_method(m, tensors, &ms));
    out->methods.push_back(std::move(ms));
  }
  return Error::Ok;
}

// The buffer verified as a package of this format version (copied into `aligned` when
// `data` is not 8-byte aligned, as the verifier wants).
Error verified_package(const uint8_t* data, size_t size, std::vector<uint64_t>* aligned, const fb::Package** out) {
  SLIMCUDA_CHECK_OR_RETURN(data != nullptr || size == 0, Error::InvalidArgument, "null data");
  SLIMCUDA_CHECK_OR_RETURN(size >= 8, Error::InvalidProgram, "%zu bytes: too short for a package", size);
  SLIMCUDA_CHECK_OR_RETURN(size < FLATBUFFERS_MAX_BUFFER_SIZE, Error::InvalidProgram,
                           "%zu bytes: larger than a package can be", size);
  SLIMCUDA_CHECK_OR_RETURN(fb::PackageBufferHasIdentifier(data), Error::InvalidProgram,
                           "bad magic: not a slimcuda model package (identifier SCPK)");
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned->resize((size + 7) / 8);
    std::memcpy(aligned->data(), data, size);
    data = reinterpret_cast<const uint8_t*>(aligned->data());
  }
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/64, /*max_tables=*/1000000);
  SLIMCUDA_CHECK_OR_RETURN(fb::VerifyPackageBuffer(verifier), Error::InvalidProgram,
                           "corrupt package: offsets or lengths out of range (FlatBuffers verifier)");
  const fb::Package* p = fb::GetPackage(data);
  SLIMCUDA_CHECK_OR_RETURN(p->format_version() != 1, Error::InvalidProgram,
                           "package format version 1 carries no library hash; repack it with this slimcuda "
                           "(slimcuda pack), which writes version %u",
                           ModelPackage::kFormatVersion);
  SLIMCUDA_CHECK_OR_RETURN(p->format_version() == ModelPackage::kFormatVersion, Error::InvalidProgram,
                           "package format version %u; this slimcuda reads version %u", p->format_version(),
                           ModelPackage::kFormatVersion);
  *out = p;
  return Error::Ok;
}

}  // namespace

bool ModelPackage::looks_like_package(const uint8_t* data, size_t size) noexcept {
  return data != nullptr && size >= 8 && fb::PackageBufferHasIdentifier(data);
}

Error ModelPackage::parse(const uint8_t* data, size_t size, ModelPackage* out) noexcept {
  try {
    std::vector<uint64_t> aligned;
    const fb::Package* p = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(verified_package(data, size, &aligned, &p));
    ModelPackage pkg;
    const auto* libs = p->libraries();
    SLIMCUDA_CHECK_OR_RETURN(libs != nullptr && libs->size() > 0, Error::InvalidProgram,
                             "package has no model library");
    SLIMCUDA_CHECK_OR_RETURN(libs->size() <= kMaxLibraries, Error::InvalidProgram, "%u libraries (at most %zu)",
                             libs->size(), kMaxLibraries);
    size_t tensors = 0;
    for (const fb::Library* lib : *libs) {
      LibrarySpec l;
      SLIMCUDA_RETURN_IF_ERROR(read_library(lib, pkg, &tensors, &l));
      pkg.libraries.push_back(std::move(l));
    }
    if (p->weights() != nullptr) pkg.weights.assign(p->weights()->begin(), p->weights()->end());
    *out = std::move(pkg);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the package");
  }
}

Error ModelPackage::serialize(std::vector<uint8_t>* out) const noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(!libraries.empty(), Error::InvalidArgument, "no model library");
    flatbuffers::FlatBufferBuilder b(1 << 20);
    std::vector<flatbuffers::Offset<fb::Library>> libs;
    for (const LibrarySpec& l : libraries) {
      SLIMCUDA_CHECK_OR_RETURN(!l.so.empty(), Error::InvalidArgument, "empty library");
      SLIMCUDA_RETURN_IF_ERROR(check_elf(l.so.data(), l.so.size()));
      const LibraryHash hash = library_hash(l.so.data(), l.so.size());
      SLIMCUDA_CHECK_OR_RETURN(!l.methods.empty(), Error::InvalidArgument, "library without methods");
      std::vector<flatbuffers::Offset<fb::Method>> methods;
      for (const MethodSpec& m : l.methods) {
        std::vector<flatbuffers::Offset<fb::TensorSpec>> io[2];
        for (int k = 0; k < 2; ++k) {
          for (const TensorSpec& s : k == 0 ? m.inputs : m.outputs) {
            SLIMCUDA_RETURN_IF_ERROR(check_tensor_spec(s, k == 0 ? "input" : "output"));
            io[k].push_back(fb::CreateTensorSpec(
                b, b.CreateString(s.name), static_cast<int32_t>(s.dtype), b.CreateVector(s.sizes),
                s.min_sizes.empty() ? 0 : b.CreateVector(s.min_sizes),
                s.dim_order.empty() ? 0 : b.CreateVector(s.dim_order), static_cast<fb::Dynamism>(s.dynamism),
                static_cast<fb::DeviceType>(s.device.type), s.device.index));
          }
        }
        methods.push_back(fb::CreateMethod(b, b.CreateString(m.name), b.CreateVector(io[0]), b.CreateVector(io[1])));
      }
      libs.push_back(fb::CreateLibrary(b, static_cast<fb::DeviceType>(l.device_type), b.CreateVector(l.so),
                                       b.CreateVector(methods), b.CreateVector(hash.bytes, kLibraryHashBytes)));
    }
    auto weights_offset = weights.empty() ? 0 : b.CreateVector(weights);
    b.Finish(fb::CreatePackage(b, kFormatVersion, b.CreateVector(libs), weights_offset), fb::PackageIdentifier());
    out->assign(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory writing the package");
  }
}

const LibrarySpec* ModelPackage::library(DeviceType type) const noexcept {
  for (const LibrarySpec& l : libraries) {
    if (l.device_type == type) return &l;
  }
  return nullptr;
}

}  // namespace slimcuda
