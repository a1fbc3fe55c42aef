// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/weight_source.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

Error check_range(uint64_t offset, size_t n, uint64_t size, void* dst) {
  SLIMCUDA_CHECK_OR_RETURN(dst != nullptr || n == 0, Error::InvalidArgument, "null destination");
  SLIMCUDA_CHECK_OR_RETURN(offset <= size && n <= size - offset, Error::InvalidProgram,
                           "bytes [%llu, +%zu) asked of a weight source of %llu bytes",
                           static_cast<unsigned long long>(offset), n, static_cast<unsigned long long>(size));
  return Error::Ok;
}

}  // namespace

Error MappedFileSource::open(const std::string& path, std::shared_ptr<MappedFileSource>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return set_last_error(err == ENOENT ? Error::NotFound : Error::AccessFailed, "opening %s: %s", path.c_str(),
                          strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return set_last_error(Error::InvalidArgument, "%s is not a regular file", path.c_str());
  }
  void* data = nullptr;
  if (st.st_size > 0) {
    data = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return set_last_error(Error::OutOfResources, "mapping %s: %s", path.c_str(), strerror(err));
    }
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  try {
    std::shared_ptr<MappedFileSource> s(new MappedFileSource());
    s->data_ = static_cast<const uint8_t*>(data);
    s->size_ = static_cast<uint64_t>(st.st_size);
    s->identity_ = "file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                   std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
                   std::to_string(st.st_mtim.tv_nsec);
    *out = std::move(s);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    if (data != nullptr) munmap(data, static_cast<size_t>(st.st_size));
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

MappedFileSource::~MappedFileSource() {
  if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

Error MappedFileSource::read(uint64_t offset, size_t n, void* dst) const noexcept {
  SLIMCUDA_RETURN_IF_ERROR(check_range(offset, n, size_, dst));
  if (n > 0) std::memcpy(dst, data_ + offset, n);
  return Error::Ok;
}

Error MemorySource::read(uint64_t offset, size_t n, void* dst) const noexcept {
  SLIMCUDA_RETURN_IF_ERROR(check_range(offset, n, size_, dst));
  if (n > 0) std::memcpy(dst, data_ + offset, n);
  return Error::Ok;
}

}  // namespace slimcuda
