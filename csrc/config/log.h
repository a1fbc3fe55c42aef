// SPDX-License-Identifier: Apache-2.0
#pragma once

// The library's log: one process-wide sink for what the library has to say outside a
// call's error (a bad setting, a model's warning). By default it writes "slimcuda: <message>"
// lines to stderr; a host program can take the messages instead (slimcuda_set_log_callback,
// Go's SetLogger). Messages less severe than SLIMCUDA_LOG_LEVEL (default warning) are dropped.

#include <cstdint>

namespace slimcuda::config {

/// Severities; the values are the C ABI's SLIMCUDA_LOG_* (slimcuda.h).
enum class LogLevel : int32_t { Debug = 10, Info = 20, Warning = 30, Error = 40 };

/// slimcuda_log_fn: called with a NUL-terminated message (no trailing newline), valid only
/// during the call.
using LogFn = void (*)(int32_t level, const char* message, void* user);

/// Sends the library's messages to `fn` (with `user`) from now on; nullptr restores the
/// stderr sink. Once this returns, the previous callback is not running and is never called
/// again, so its `user` may be freed. Callbacks run on the thread that logs, possibly on
/// several threads at once; one must neither call set_log_callback (it would wait for
/// itself) nor log (a waiting set_log_callback goes first, and waits for it).
void set_log_callback(LogFn fn, void* user) noexcept;

/// Whether a message of `level` would be passed on (SLIMCUDA_LOG_LEVEL).
[[nodiscard]] bool log_enabled(LogLevel level) noexcept;

/// Formats one message (printf-style; truncated past 2 KiB) and passes it to the sink if
/// log_enabled(level). Never allocates, never throws.
void log(LogLevel level, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));

}  // namespace slimcuda::config
