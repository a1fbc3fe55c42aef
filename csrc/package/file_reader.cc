// SPDX-License-Identifier: Apache-2.0
#include "csrc/package/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <string>
#include <system_error>

#include <flatbuffers/base.h>

#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

static_assert(kMaxPackageFileBytes < FLATBUFFERS_MAX_BUFFER_SIZE, "packages must stay below FlatBuffers' limit");

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// The code an open(2) or read(2) failure maps to.
Error code_of(int e) noexcept {
  switch (e) {
    case ENOENT:
    case ENOTDIR:
      return Error::NotFound;
    case EMFILE:
    case ENFILE:
      return Error::OutOfResources;
    default:  // EACCES, EPERM, EIO, ELOOP, ...
      return Error::AccessFailed;
  }
}

const char* kind_of(mode_t mode) noexcept {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  if (S_ISSOCK(mode)) return "socket";
  return "unknown type";
}

// Closes the descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;             // one owner closes
  Fd& operator=(const Fd&) = delete;  // one owner closes
  ~Fd() {
    if (fd_ >= 0) (void)::close(fd_);
  }
  [[nodiscard]] int get() const noexcept { return fd_; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

Error open_checked(const char* path, int* fd_out, uint64_t* size) {
  Fd fd(::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int e = errno;
    return set_last_error(code_of(e), "cannot open %s: %s", path, errno_text(e).c_str());
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int e = errno;
    return set_last_error(code_of(e) == Error::NotFound ? Error::AccessFailed : code_of(e), "cannot stat %s: %s", path,
                          errno_text(e).c_str());
  }
  SLIMCUDA_CHECK_OR_RETURN(S_ISREG(st.st_mode), Error::InvalidArgument, "%s is not a regular file (%s)", path,
                           kind_of(st.st_mode));
  *size = st.st_size < 0 ? 0 : static_cast<uint64_t>(st.st_size);
  *fd_out = fd.release();
  return Error::Ok;
}

Error read_all(const char* path, size_t cap, std::vector<uint8_t>* out) {
  int raw = -1;
  uint64_t file_size = 0;
  SLIMCUDA_RETURN_IF_ERROR(open_checked(path, &raw, &file_size));
  Fd fd(raw);
  SLIMCUDA_CHECK_OR_RETURN(file_size <= cap, Error::InvalidArgument, "%s is %llu bytes, over the cap of %zu bytes",
                           path, static_cast<unsigned long long>(file_size), cap);
  // What fstat promised, then whatever the file grew by (through a small buffer, so a file
  // that did not grow costs no second allocation), never past cap + 1 bytes: one byte
  // beyond the cap is how a file that grew too large is seen.
  std::vector<uint8_t> bytes(static_cast<size_t>(file_size));
  size_t used = 0;
  uint8_t probe[64 * 1024];
  for (;;) {
    const bool in_place = used < bytes.size();
    uint8_t* where = in_place ? bytes.data() + used : probe;
    const size_t room = in_place ? bytes.size() - used : std::min(sizeof(probe), cap + 1 - used);
    const ssize_t n = ::read(fd.get(), where, room);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      return set_last_error(code_of(e) == Error::NotFound ? Error::AccessFailed : code_of(e), "cannot read %s: %s",
                            path, errno_text(e).c_str());
    }
    if (n == 0) break;
    if (!in_place) bytes.insert(bytes.end(), probe, probe + n);
    used += static_cast<size_t>(n);
    if (used > cap) break;
  }
  SLIMCUDA_CHECK_OR_RETURN(used <= cap, Error::InvalidArgument, "%s grew past the cap of %zu bytes while being read",
                           path, cap);
  bytes.resize(used);
  *out = std::move(bytes);
  return Error::Ok;
}

Error write_all(const char* path, const uint8_t* data, size_t size) {
  Fd fd(::open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666));
  if (fd.get() < 0) {
    const int e = errno;
    struct stat st {};
    // EISDIR (a directory), ENXIO (a FIFO nobody reads): say what the path is.
    if ((e == EISDIR || e == ENXIO) && ::stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      return set_last_error(Error::InvalidArgument, "%s is not a regular file (%s)", path, kind_of(st.st_mode));
    }
    return set_last_error(code_of(e) == Error::OutOfResources ? Error::OutOfResources : Error::AccessFailed,
                          "cannot create %s: %s", path, errno_text(e).c_str());
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int e = errno;
    return set_last_error(Error::AccessFailed, "cannot stat %s: %s", path, errno_text(e).c_str());
  }
  SLIMCUDA_CHECK_OR_RETURN(S_ISREG(st.st_mode), Error::InvalidArgument, "%s is not a regular file (%s)", path,
                           kind_of(st.st_mode));
  if (::ftruncate(fd.get(), 0) != 0) {
    const int e = errno;
    return set_last_error(Error::AccessFailed, "cannot truncate %s: %s", path, errno_text(e).c_str());
  }
  while (size > 0) {
    const ssize_t n = ::write(fd.get(), data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      return set_last_error(Error::AccessFailed, "cannot write %s: %s", path, errno_text(e).c_str());
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  // close reports a failed write-back on some file systems (NFS): the file is not whole then.
  if (::close(fd.release()) != 0) {
    const int e = errno;
    return set_last_error(Error::AccessFailed, "cannot write %s: %s", path, errno_text(e).c_str());
  }
  return Error::Ok;
}

}  // namespace

Error write_regular_file(const char* path, const uint8_t* data, size_t size) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr && (data != nullptr || size == 0), Error::InvalidArgument,
                             "null path or data");
    return write_all(path, data, size);
  } catch (...) {
    return set_last_error(Error::Internal, "unexpected exception writing %s", path);
  }
}

Error open_regular_file(const char* path, int* fd, uint64_t* size) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr && fd != nullptr && size != nullptr, Error::InvalidArgument, "null path");
    return open_checked(path, fd, size);
  } catch (...) {
    return set_last_error(Error::Internal, "unexpected exception opening %s", path);
  }
}

Error read_regular_file(const char* path, size_t cap, std::vector<uint8_t>* out) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr && out != nullptr, Error::InvalidArgument, "null path");
    return read_all(path, cap, out);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading %s", path);
  } catch (...) {
    return set_last_error(Error::Internal, "unexpected exception reading %s", path);
  }
}

}  // namespace slimcuda
