// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/library.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/package/elf_check.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// All of slimcuda's loads, one at a time: the "is this path free?" check and the dlopen that
// relies on it must not interleave with another of our loads.
std::mutex& load_mutex() {
  static std::mutex* m = new std::mutex();  // never destroyed: models may be freed at exit
  return *m;
}

// How many times a load moves its fd to a new number before giving up.
constexpr int kMaxPathAttempts = 64;

bool write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

Error fd_error(int err, const char* what) {
  const bool exhausted = err == EMFILE || err == ENFILE;
  return set_last_error(exhausted ? Error::OutOfResources : Error::AccessFailed, "%s failed: %s", what, strerror(err));
}

// The names and load addresses of every object loaded now.
struct LoadedObjects {
  std::unordered_set<std::string> names;
  std::unordered_set<uintptr_t> bases;
};

LoadedObjects loaded_objects() {
  LoadedObjects objects;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* arg) {
        auto* o = static_cast<LoadedObjects*>(arg);
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') o->names.insert(info->dlpi_name);
        o->bases.insert(static_cast<uintptr_t>(info->dlpi_addr));
        return 0;
      },
      &objects);
  return objects;
}

// dlopen's `path`, which must name no loaded object, and checks that the handle is a new
// object loaded from `path`. `*stale` (when given) says the loader returned an object loaded
// before instead: `path` is another object's alias (glibc adds a second path of a loaded
// file to that object's names, which dl_iterate_phdr does not list), and another path will
// do; without `stale` that is an error.
Error open_fresh(const std::string& path, const LoadedObjects& before, void** out, bool* stale) {
  // dlopen opens `path` itself: with no descriptor left that fails as a load error ("cannot
  // open shared object file: Too many open files", errno not kept), which is the process's
  // limit, not the package's fault. Loads are serialized, so one free now is dlopen's
  // unless another thread takes it meanwhile.
  const int probe = open("/", O_PATH | O_CLOEXEC);
  if (probe < 0 && (errno == EMFILE || errno == ENFILE)) {
    return fd_error(errno, "reserving a file descriptor for the dynamic loader");
  }
  if (probe >= 0) close(probe);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return set_last_error(Error::InvalidProgram, "model library does not load: %s", why ? why : "?");
  }
  struct link_map* map = nullptr;
  const bool fresh = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
                     path == map->l_name && before.bases.count(static_cast<uintptr_t>(map->l_addr)) == 0;
  if (!fresh) {
    dlclose(handle);
    if (stale != nullptr) {
      *stale = true;
      return Error::Ok;
    }
    return set_last_error(Error::Internal,
                          "the dynamic loader returned an object loaded before for %s (another component of this "
                          "process loads the same path)",
                          path.c_str());
  }
  *out = handle;
  return Error::Ok;
}

// What slimcuda provides a model library: the shims (aoti_torch_*, with or without a prefix)
// and SLEEF's vector math (Sleef_*, which CPU code compiled for a vector ISA calls; libslimcuda
// links libsleef).
bool provided_by_slimcuda(const std::string& name) {
  return name.find("aoti_torch_") != std::string::npos || name.rfind("Sleef_", 0) == 0;
}

// The functions slimcuda should provide among a library's imports that this process cannot
// resolve, all of them: glibc's dlopen would name only the first. RTLD_DEFAULT searches the
// global scope, where the library's imports are looked up first (its own dependencies come
// after, and none of them defines a shim).
Error check_shims(const std::vector<std::string>& imports) {
  std::string missing;
  size_t count = 0;
  for (const std::string& name : imports) {
    if (!provided_by_slimcuda(name) || dlsym(RTLD_DEFAULT, name.c_str()) != nullptr) continue;
    missing += (count++ == 0 ? "" : ", ") + name;
  }
  SLIMCUDA_CHECK_OR_RETURN(count == 0, Error::NotSupported,
                           "model library calls %zu function%s this slimcuda does not provide: %s", count,
                           count == 1 ? "" : "s", missing.c_str());
  return Error::Ok;
}

}  // namespace

Error ModelLibrary::load(const uint8_t* data, size_t size, std::shared_ptr<ModelLibrary>* out) noexcept {
  return load(data, size, "/proc/self/fd", out);
}

Error ModelLibrary::load(const uint8_t* data, size_t size, const std::string& fd_dir,
                         std::shared_ptr<ModelLibrary>* out) noexcept {
  try {
    std::vector<std::string> imports;
    SLIMCUDA_RETURN_IF_ERROR(check_elf(data, size, &imports));
    SLIMCUDA_RETURN_IF_ERROR(check_shims(imports));
    std::shared_ptr<ModelLibrary> lib(new ModelLibrary());
    std::lock_guard<std::mutex> lock(load_mutex());

    int fd = memfd_create("slimcuda-model", MFD_CLOEXEC);
    if (fd < 0 && errno != ENOSYS && errno != EINVAL) return fd_error(errno, "memfd_create");
    if (fd >= 0) {
      lib->fd_ = fd;  // closed by the destructor on every path from here
      SLIMCUDA_CHECK_OR_RETURN(write_all(fd, data, size), Error::AccessFailed,
                               "writing the library to its memfd failed: %s", strerror(errno));
      // No /proc (a minimal container): the fd has no path to dlopen; use a file instead.
      if (access((fd_dir + "/" + std::to_string(fd)).c_str(), R_OK) != 0) {
        close(fd);
        lib->fd_ = fd = -1;
      }
    }
    if (fd >= 0) {
      LoadedObjects before = loaded_objects();
      for (int attempt = 0; attempt < kMaxPathAttempts; ++attempt) {
        const std::string path = fd_dir + "/" + std::to_string(lib->fd_);
        bool stale = false;
        if (before.names.count(path) == 0) {
          SLIMCUDA_RETURN_IF_ERROR(open_fresh(path, before, &lib->handle_, &stale));
          if (!stale) {
            lib->path_ = path;
            *out = std::move(lib);
            return Error::Ok;
          }
        }
        // A library that outlived its dlclose, or another object under an alias, still
        // answers to this path: use another number.
        const int moved = fcntl(lib->fd_, F_DUPFD_CLOEXEC, lib->fd_ + 1);
        if (moved < 0) return fd_error(errno, "moving the library's memfd to a free fd number");
        close(lib->fd_);
        lib->fd_ = moved;
      }
      return set_last_error(Error::OutOfResources, "%d fd numbers in a row name objects already loaded",
                            kMaxPathAttempts);
    }

    // The fallback: a file with a random name, unlinked as soon as it is loaded (or not).
    std::string temp = config::get_path(config::Key::Tmpdir) + "/slimcuda-model-XXXXXX";  // TMPDIR, else /tmp
    fd = mkstemp(temp.data());
    if (fd < 0) return fd_error(errno, ("creating " + temp).c_str());
    const bool written = write_all(fd, data, size);
    const int write_errno = errno;
    close(fd);
    Error e = Error::Ok;
    if (!written) {
      e = set_last_error(Error::AccessFailed, "writing %s failed: %s", temp.c_str(), strerror(write_errno));
    } else {
      e = open_fresh(temp, loaded_objects(), &lib->handle_, nullptr);
    }
    unlink(temp.c_str());
    SLIMCUDA_RETURN_IF_ERROR(e);
    lib->path_ = temp;
    *out = std::move(lib);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory loading a model library");
  }
}

ModelLibrary::~ModelLibrary() {
  if (handle_ != nullptr) {
    std::lock_guard<std::mutex> lock(load_mutex());  // the fd's number is free again after this
    dlclose(handle_);
    if (fd_ >= 0) close(fd_);
  } else if (fd_ >= 0) {
    close(fd_);
  }
}

void* ModelLibrary::symbol(const char* name) const noexcept { return dlsym(handle_, name); }

}  // namespace slimcuda
