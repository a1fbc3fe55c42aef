// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "slimcuda/error.h"

namespace slimcuda {

/// The largest package file read: below FlatBuffers' 2 GiB buffer limit (the reader
/// refuses anything at or over FLATBUFFERS_MAX_BUFFER_SIZE). Also the cap on each file a
/// manifest names (a library or the weights), which end up inside a package.
inline constexpr size_t kMaxPackageFileBytes = (size_t{1} << 31) - 2;

/// The largest JSON manifest read.
inline constexpr size_t kMaxManifestFileBytes = size_t{16} << 20;

/// Reads the whole regular file at `path` into `*out`, at most `cap` bytes. The one way
/// slimcuda reads a file: opened O_RDONLY | O_CLOEXEC | O_NONBLOCK (a FIFO never blocks),
/// checked with fstat before anything is allocated, read in a loop that also stops at the
/// cap (the file may grow meanwhile). Errors, each with a message:
///   NotFound          the path does not exist (strerror text);
///   AccessFailed      permission denied, or any other open/read failure (strerror text);
///   OutOfResources    no file descriptor left (EMFILE, ENFILE);
///   InvalidArgument   not a regular file ("PATH is not a regular file (directory|fifo|
///                     device|socket|...)"), or larger than `cap` (names both sizes);
///   MemoryAllocationFailed  the bytes do not fit in host memory.
/// Thread-safe; never throws.
[[nodiscard]] Error read_regular_file(const char* path, size_t cap, std::vector<uint8_t>* out) noexcept;

/// Writes `size` bytes to `path` (slimcuda_package_pack's output), created 0666 & ~umask
/// when absent. The file is opened O_WRONLY | O_CREAT | O_NONBLOCK without O_TRUNC, so a
/// FIFO never blocks and nothing is truncated before fstat says it is a regular file.
/// Errors, each naming the path:
///   InvalidArgument   not a regular file ("PATH is not a regular file (directory|fifo|
///                     device|...)");
///   OutOfResources    no file descriptor left (EMFILE, ENFILE);
///   AccessFailed      any other failure to create, truncate, write or close it, with the
///                     system's text ("No such file or directory", "Permission denied",
///                     "No space left on device", ...).
/// Thread-safe; never throws.
[[nodiscard]] Error write_regular_file(const char* path, const uint8_t* data, size_t size) noexcept;

/// Opens `path` as read_regular_file does, with its codes and messages for a path that is
/// missing, unreadable or not a regular file, and returns the open descriptor (the caller
/// closes it; O_CLOEXEC) and the size fstat reports. For readers that map the file instead
/// (csrc/archive). Thread-safe; never throws.
[[nodiscard]] Error open_regular_file(const char* path, int* fd, uint64_t* size) noexcept;

}  // namespace slimcuda
