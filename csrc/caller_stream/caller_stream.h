// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <type_traits>

#include "slimcuda/export.h"

// Same declaration as cuda_runtime_api.h, so this header needs no CUDA headers and
// CPU-only code can include it; redeclaring the identical typedef is allowed.
typedef struct CUstream_st* cudaStream_t;

namespace slimcuda {

/// The caller stream: the CUDA stream a program asks slimcuda to use for the work it
/// starts on this thread (copies, shims, model runs).
///
/// Threading contract:
///  - One selection per OS thread. A new thread starts with none; a guard on one thread
///    never changes another's.
///  - The selection lives in libslimcuda.so (one instance per process), which every user
///    — C++ programs, Go, loaded model .so files — resolves against.
///  - std::nullopt means "no selection"; a selected nullptr means the legacy default stream.
///    slimcuda never confuses the two.
///  - The stream is borrowed: the caller keeps it alive while it is selected.
///  - Devices: a stream belongs to one GPU, and slimcuda reads that device from the stream
///    itself. Work that names device -1 runs on the selected stream's device; work that names
///    another device is refused (InvalidArgument) rather than enqueued on a stream of a
///    different GPU. One selection per thread covers all devices: to work on two GPUs at
///    once, use two threads (or per-call streams), each with its own GPU's stream.

/// This thread's selection, or std::nullopt if none.
[[nodiscard]] SLIMCUDA_API std::optional<cudaStream_t> getCallerStream() noexcept;

/// Selects a stream for the current scope and restores the previous selection (which may
/// be "none") on destruction. Guards nest LIFO.
class SLIMCUDA_API CallerStreamGuard {
 public:
  /// Selects `stream`; nullptr selects the legacy default stream.
  explicit CallerStreamGuard(cudaStream_t stream) noexcept;
  ~CallerStreamGuard();

  // Copying would restore the saved selection twice; moving would leave a guard with no
  // state to restore. There is no "uninitialized" guard.
  CallerStreamGuard(const CallerStreamGuard&) = delete;
  CallerStreamGuard& operator=(const CallerStreamGuard&) = delete;
  CallerStreamGuard(CallerStreamGuard&&) = delete;
  CallerStreamGuard& operator=(CallerStreamGuard&&) = delete;

  /// The stream this guard selected.
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  cudaStream_t stream_;
  std::optional<cudaStream_t> previous_;
};

static_assert(!std::is_copy_constructible_v<CallerStreamGuard>);
static_assert(!std::is_move_constructible_v<CallerStreamGuard>);
static_assert(!std::is_copy_assignable_v<CallerStreamGuard>);
static_assert(!std::is_move_assignable_v<CallerStreamGuard>);

namespace detail {
/// Replaces this thread's selection and returns the previous one (the C ABI's push/pop).
SLIMCUDA_API std::optional<cudaStream_t> exchange_caller_stream(std::optional<cudaStream_t> next) noexcept;
}  // namespace detail

}  // namespace slimcuda
