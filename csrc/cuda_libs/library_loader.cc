// SPDX-License-Identifier: Apache-2.0
#include "csrc/cuda_libs/library_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <string>

namespace slimcuda::cuda_libs {
namespace {

std::string dl_error() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

bool try_open(const std::string& path, int flags, OpenedLibrary* out, std::string* tried) {
  dlerror();  // clear a stale message
  void* h = dlopen(path.c_str(), flags);
  if (h != nullptr) {
    out->handle = h;
    out->where = path;
    return true;
  }
  *tried += "\n  " + path + ": " + dl_error();
  return false;
}

}  // namespace

std::string own_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_library_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? std::string() : self.substr(0, slash);
}

Error open_library(const LibrarySpec& spec, const std::string& chosen, OpenedLibrary* out, std::string* failure) {
  std::string tried;
  if (!chosen.empty()) {
    if (try_open(chosen, spec.dlopen_flags, out, &tried)) return Error::Ok;
    *failure = std::string(spec.display_name) + " could not be loaded from " + spec.setting + ":" + tried + "\n  set " +
               spec.setting + " to the full path of a working " + spec.soname + ", or unset it";
    return Error::NotSupported;
  }
  tried += std::string("\n  ") + spec.setting + ": not set";
  const std::string dir = own_library_dir();
  if (!dir.empty()) {
    const std::string beside = dir + "/" + spec.soname;
    struct stat st {};
    if (::stat(beside.c_str(), &st) == 0) {
      if (try_open(beside, spec.dlopen_flags, out, &tried)) return Error::Ok;
    } else {
      tried += "\n  " + beside + ": no such file";
    }
  }
  if (try_open(spec.soname, spec.dlopen_flags, out, &tried)) return Error::Ok;
  *failure = std::string(spec.display_name) + " is not available (looked in this order):" + tried + "\n  install it (" +
             spec.install_hint + "), put " + spec.soname + " beside libslimcuda.so, or set " + spec.setting +
             " to its full path";
  return Error::NotSupported;
}

bool resolve_symbol(const OpenedLibrary& lib, const char* symbol, void** out, std::string* failure) {
  dlerror();
  *out = dlsym(lib.handle, symbol);
  if (*out != nullptr) return true;
  *failure += std::string("\n  ") + symbol + ": " + dl_error();
  return false;
}

}  // namespace slimcuda::cuda_libs
