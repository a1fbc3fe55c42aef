// SPDX-License-Identifier: Apache-2.0
#include "slimcuda/last_error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace slimcuda {
namespace {

// A fixed buffer per thread: recording an error must not allocate (it may report an
// allocation failure) and must not throw.
constexpr int kMessageCapacity = static_cast<int>(LastErrorSnapshot::kCapacity);
thread_local char tls_message[kMessageCapacity] = {0};
thread_local const char* tls_function = nullptr;

}  // namespace

Error set_last_error(Error error, const char* format, ...) noexcept {
  // Formatted into a local buffer first: an argument may be last_error_message() itself
  // (wrapping a lower layer's message), which must not be overwritten while it is read.
  char message[kMessageCapacity];
  int used = std::snprintf(message, kMessageCapacity, "%s: ", tls_function ? tls_function : "slimcuda");
  if (used < 0 || used >= kMessageCapacity) used = 0;
  va_list args;
  va_start(args, format);
  std::vsnprintf(message + used, kMessageCapacity - used, format, args);
  va_end(args);
  std::memcpy(tls_message, message, kMessageCapacity);
  return error;
}

ErrorContext::ErrorContext(const char* function) noexcept : previous_(tls_function) { tls_function = function; }

ErrorContext::~ErrorContext() { tls_function = previous_; }

const char* ErrorContext::current() noexcept { return tls_function; }

const char* last_error_message() noexcept { return tls_message; }

void clear_last_error() noexcept { tls_message[0] = '\0'; }

LastErrorSnapshot::LastErrorSnapshot() noexcept { std::memcpy(saved_, tls_message, kCapacity); }

void LastErrorSnapshot::restore() const noexcept { std::memcpy(tls_message, saved_, kCapacity); }

}  // namespace slimcuda
