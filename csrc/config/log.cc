// SPDX-License-Identifier: Apache-2.0
#include "csrc/config/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>

#include "csrc/config/config.h"

namespace slimcuda::config {
namespace {

struct Sink {
  // Shared while a message is delivered, exclusive while the callback changes: once
  // set_log_callback returns, no thread is still inside the old callback.
  std::shared_mutex mu;
  LogFn fn = nullptr;  // nullptr: stderr
  void* user = nullptr;
};

Sink& sink() noexcept {
  // Never destroyed (messages may come during exit), and made without the heap.
  alignas(Sink) static unsigned char storage[sizeof(Sink)];
  static Sink* s = new (storage) Sink();
  return *s;
}

static_assert(static_cast<int32_t>(LogLevel::Debug) == 10 && static_cast<int32_t>(LogLevel::Error) == 40);
static_assert(kLogLevelWords[3] != nullptr && kLogLevelWords[4] == nullptr, "debug, info, warning, error");

}  // namespace

void set_log_callback(LogFn fn, void* user) noexcept {
  Sink& s = sink();
  std::unique_lock<std::shared_mutex> lock(s.mu);
  s.fn = fn;
  s.user = user;
}

bool log_enabled(LogLevel level) noexcept {
  // kLogLevelWords in order: debug 10, info 20, warning 30, error 40.
  const int32_t least = static_cast<int32_t>(get_enum(Key::LogLevel) + 1) * 10;
  return static_cast<int32_t>(level) >= least;
}

void log(LogLevel level, const char* format, ...) noexcept {
  if (!log_enabled(level)) return;
  constexpr size_t kCapacity = 2048;
  char message[kCapacity];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(message, kCapacity, format, args);
  va_end(args);
  if (n < 0) return;
  if (static_cast<size_t>(n) >= kCapacity) std::memcpy(message + kCapacity - 4, "...", 4);
  Sink& s = sink();
  std::shared_lock<std::shared_mutex> lock(s.mu);
  if (s.fn != nullptr) {
    s.fn(static_cast<int32_t>(level), message, s.user);
  } else {
    std::fprintf(stderr, "slimcuda: %s\n", message);
  }
}

}  // namespace slimcuda::config
