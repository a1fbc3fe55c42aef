// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/load.h"

#include <unistd.h>

#include <vector>

#include "csrc/archive/pt2_archive.h"
#include "csrc/model/pt2_load.h"
#include "csrc/package/file_reader.h"
#include "csrc/package/model_package.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// Neither a zip nor a package (a text file, an image, a .npy): say what the file should be,
// not what a package reader finds wrong with it.
Error check_model_format(const uint8_t* data, size_t size, const char* path) {
  if (ModelPackage::looks_like_package(data, size)) return Error::Ok;
  return set_last_error(Error::InvalidProgram,
                        "%s is not a model file: neither a PyTorch .pt2 (a zip archive) nor a slimcuda package "
                        "(identifier SCPK)",
                        path != nullptr ? path : "the data");
}

Error load_package(const uint8_t* data, size_t size, const LoadOptions& o, std::unique_ptr<Model>* out) {
  ModelPackage package;
  SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(data, size, &package));
  return Model::load(package, o.device_type, o.device_index, o.instances, out, o.graphs);
}

}  // namespace

// The first bytes say which kind of file it is: a `.pt2` is mapped (its weights are
// uploaded from the mapping), a package read whole (bounded).
Error read_model_source(const LoadSource& source, const Pt2Reader& pt2, const PackageReader& package) {
  if (source.path == nullptr) {
    SLIMCUDA_CHECK_OR_RETURN(source.data != nullptr || source.size == 0, Error::InvalidArgument, "null data");
    if (Pt2Archive::looks_like_zip(source.data, source.size)) {
      std::unique_ptr<Pt2Archive> archive;
      SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open_memory(source.data, source.size, &archive));
      return pt2(*archive);
    }
    SLIMCUDA_RETURN_IF_ERROR(check_model_format(source.data, source.size, nullptr));
    return package(source.data, source.size);
  }
  int fd = -1;
  uint64_t file_size = 0;
  SLIMCUDA_RETURN_IF_ERROR(open_regular_file(source.path, &fd, &file_size));
  uint8_t magic[4] = {};
  const ssize_t got = ::pread(fd, magic, sizeof magic, 0);
  (void)::close(fd);
  if (got == static_cast<ssize_t>(sizeof magic) && Pt2Archive::looks_like_zip(magic, sizeof magic)) {
    std::unique_ptr<Pt2Archive> archive;
    SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open(source.path, &archive));
    return pt2(*archive);
  }
  std::vector<uint8_t> bytes;
  SLIMCUDA_RETURN_IF_ERROR(read_regular_file(source.path, kMaxPackageFileBytes, &bytes));
  SLIMCUDA_RETURN_IF_ERROR(check_model_format(bytes.data(), bytes.size(), source.path));
  return package(bytes.data(), bytes.size());
}

Error load_model(const LoadSource& source, const LoadOptions& options, std::unique_ptr<Model>* out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  out->reset();
  return read_model_source(
      source, [&](const Pt2Archive& archive) { return load_pt2(archive, options, out); },
      [&](const uint8_t* data, size_t size) { return load_package(data, size, options, out); });
}

}  // namespace slimcuda
