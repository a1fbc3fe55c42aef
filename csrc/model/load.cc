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

Error load_package(const uint8_t* data, size_t size, const LoadOptions& o, std::unique_ptr<Model>* out) {
  ModelPackage package;
  SLIMCUDA_RETURN_IF_ERROR(ModelPackage::parse(data, size, &package));
  return Model::load(package, o.device_type, o.device_index, o.instances, out, o.graphs);
}

Error load_bytes(const uint8_t* data, size_t size, const LoadOptions& o, std::unique_ptr<Model>* out) {
  if (Pt2Archive::looks_like_zip(data, size)) {
    std::unique_ptr<Pt2Archive> archive;
    SLIMCUDA_RETURN_IF_ERROR(Pt2Archive::open_memory(data, size, &archive));
    return load_pt2(*archive, o, out);
  }
  return load_package(data, size, o, out);
}

// The first bytes say which kind of file it is: a `.pt2` is mapped (its weights are
// uploaded from the mapping), a package read whole (bounded).
Error load_file(const char* path, const LoadOptions& o, std::unique_ptr<Model>* out) {
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
  return load_package(bytes.data(), bytes.size(), o, out);
}

}  // namespace

Error load_model(const LoadSource& source, const LoadOptions& options, std::unique_ptr<Model>* out) {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  out->reset();
  if (source.path != nullptr) return load_file(source.path, options, out);
  return load_bytes(source.data, source.size, options, out);
}

}  // namespace slimcuda
