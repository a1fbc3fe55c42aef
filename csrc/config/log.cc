// SPDX-License-Identifier: Apache-2.0
#include "csrc/config/log.h"

#include <pthread.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

#include "csrc/config/config.h"

namespace slimcuda::config {
namespace {

// Read-locked while a message is delivered, write-locked while the callback changes: once
// set_log_callback returns, no thread is still inside the old callback. The lock prefers
// writers: with readers preferred (std::shared_mutex's pthread default), threads that log
// without pause keep a set_log_callback waiting for ever. Nothing of ours logs while
// holding it, so a reader never takes it twice.
struct Sink {
  Sink() noexcept {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  pthread_rwlock_t lock;
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
  pthread_rwlock_wrlock(&s.lock);
  s.fn = fn;
  s.user = user;
  pthread_rwlock_unlock(&s.lock);
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
  pthread_rwlock_rdlock(&s.lock);
  if (s.fn != nullptr) {
    s.fn(static_cast<int32_t>(level), message, s.user);
  } else {
    std::fprintf(stderr, "slimcuda: %s\n", message);
  }
  pthread_rwlock_unlock(&s.lock);
}

}  // namespace slimcuda::config
