// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "slimcuda/error.h"

namespace slimcuda {

/// Records this thread's last-error text as "<function>: <message>", where <function> is the
/// C function this thread is running (ErrorContext; "slimcuda" outside any), and returns
/// `error`, so a failing path reads `return set_last_error(Error::InvalidArgument, "...")`.
/// printf-style formatting; never throws (a failed allocation keeps a truncated message).
Error set_last_error(Error error, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));

/// Names the C function this thread is running for every message recorded while it lives:
/// the entry layer opens one per C ABI call and shim (c_entry), so code below it never
/// passes its caller's name along. Thread-local, as the caller stream is; restores the
/// previous name on destruction, so a shim called from inside a model run names itself and
/// the run names itself again once the shim returns.
class ErrorContext {
 public:
  explicit ErrorContext(const char* function) noexcept;
  ~ErrorContext();
  ErrorContext(const ErrorContext&) = delete;  // a scope belongs to one call on one thread
  ErrorContext& operator=(const ErrorContext&) = delete;

  /// The innermost open context's name on this thread; nullptr when none is open.
  [[nodiscard]] static const char* current() noexcept;

 private:
  const char* previous_;
};

/// This thread's text for its last failed call; "" when none. Valid until the thread's
/// next set_last_error.
[[nodiscard]] const char* last_error_message() noexcept;

/// Empties this thread's last-error text.
void clear_last_error() noexcept;

/// This thread's last-error text when the snapshot was taken, put back byte for byte by
/// restore(): for a call that answers "not here, try elsewhere" (NotSupported from a fast
/// path with a fallback) without leaving a trace of what it tried.
class LastErrorSnapshot {
 public:
  static constexpr size_t kCapacity = 1024;  ///< the per-thread message buffer's size
  LastErrorSnapshot() noexcept;
  LastErrorSnapshot(const LastErrorSnapshot&) = delete;  // a snapshot belongs to one call
  LastErrorSnapshot& operator=(const LastErrorSnapshot&) = delete;
  void restore() const noexcept;

 private:
  char saved_[kCapacity];
};

}  // namespace slimcuda

/// Returns `error` with a message (ErrorContext names the function) when `cond` is false.
#define SLIMCUDA_CHECK_OR_RETURN(cond, error, ...)             \
  do {                                                         \
    if (!(cond)) {                                             \
      return ::slimcuda::set_last_error((error), __VA_ARGS__); \
    }                                                          \
  } while (0)

/// Propagates a non-Ok Error from `expr`.
#define SLIMCUDA_RETURN_IF_ERROR(expr)                                \
  do {                                                                \
    const ::slimcuda::Error slimcuda_err_ = (expr);                   \
    if (slimcuda_err_ != ::slimcuda::Error::Ok) return slimcuda_err_; \
  } while (0)
