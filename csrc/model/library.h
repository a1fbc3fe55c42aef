// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "slimcuda/error.h"

namespace slimcuda {

/// A model library loaded from bytes: its own object in the process, whatever else is loaded.
///
/// The bytes go into an anonymous memfd that is dlopen'ed through /proc/self/fd/N and kept
/// open while the library is loaded. glibc's loader matches a path against the names of
/// objects already loaded before it opens anything, and fd numbers are reused, so a closed
/// memfd's number would resolve a later load to the earlier library. Keeping the fd open
/// keeps live libraries' paths distinct; a library that outlives its dlclose (-z nodelete,
/// or an STB_GNU_UNIQUE symbol: g++'s default for an inline function's static local) still
/// holds its old path, so the loader first checks that no loaded object has the path it is
/// about to use, and afterwards that dlopen returned an object that was not loaded before
/// (a path can also be another object's alias: glibc adds a second path of a loaded file
/// to that object's names, which dl_iterate_phdr does not show); either way it moves the
/// fd to another number and tries again. Loads are serialized (the dynamic loader
/// serializes them anyway). Where /proc is not mounted, an unlinked file in $TMPDIR (else
/// /tmp) with a random name takes the memfd's place: nothing is left on disk either way.
///
/// Loading runs the library's ELF constructors with the process's privileges: the bytes are
/// checked for shape (check_elf) and, in a package, integrity, but the code itself cannot be
/// vetted in-process. Load only models you would run as code.
///
/// Thread-safe. Not copyable or movable (one handle, one fd).
class ModelLibrary {
 public:
  /// Loads `size` bytes (RTLD_NOW | RTLD_LOCAL). A library calling aoti_torch_* shims this
  /// process does not define -> NotSupported naming every one (checked before dlopen);
  /// malformed ELF or a library the loader refuses -> InvalidProgram with the loader's reason; the process is out of
  /// file descriptors -> OutOfResources; no memfd and no writable temp directory -> AccessFailed.
  [[nodiscard]] static Error load(const uint8_t* data, size_t size, std::shared_ptr<ModelLibrary>* out) noexcept;

  /// The same with the folder that names this process's fds (normally "/proc/self/fd"):
  /// tests pass one that does not exist to take the unlinked-file path.
  [[nodiscard]] static Error load(const uint8_t* data, size_t size, const std::string& fd_dir,
                                  std::shared_ptr<ModelLibrary>* out) noexcept;

  ~ModelLibrary();
  ModelLibrary(const ModelLibrary&) = delete;
  ModelLibrary& operator=(const ModelLibrary&) = delete;
  ModelLibrary(ModelLibrary&&) = delete;
  ModelLibrary& operator=(ModelLibrary&&) = delete;

  /// dlsym in this library only; nullptr when absent.
  [[nodiscard]] void* symbol(const char* name) const noexcept;
  /// The path the library was loaded from (for messages and tests).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The dlopen handle (tests compare handles of different loads).
  [[nodiscard]] void* handle() const noexcept { return handle_; }

 private:
  ModelLibrary() = default;

  void* handle_ = nullptr;
  int fd_ = -1;  // the memfd, open while the library is loaded; -1 on the temp-file path
  std::string path_;
};

}  // namespace slimcuda
