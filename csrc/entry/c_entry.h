// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <exception>
#include <new>

#include "slimcuda/caller_stream.h"
#include "slimcuda/error.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

/// Runs the body of a C ABI entry point: `body()` returns an Error; exceptions (std::bad_alloc
/// from the standard library) become error codes here, so none crosses the C ABI. `function`
/// is the entry point's name: every message recorded during the call starts with it
/// (ErrorContext), whatever depth records it.
template <typename Body>
int32_t c_entry(const char* function, Body&& body) noexcept {
  ErrorContext context(function);
  try {
    return static_cast<int32_t>(body());
  } catch (const std::bad_alloc&) {
    return static_cast<int32_t>(set_last_error(Error::MemoryAllocationFailed, "out of host memory"));
  } catch (const std::exception& e) {
    return static_cast<int32_t>(set_last_error(Error::Internal, "unexpected exception: %s", e.what()));
  } catch (...) {
    return static_cast<int32_t>(set_last_error(Error::Internal, "unexpected exception"));
  }
}

/// Runs `body()` (a C entry point's call) with `stream` selected as the caller stream for
/// this call only: the `_on` variants of the C ABI, for callers whose threads change
/// between calls (Go).
template <typename Body>
int32_t with_stream(void* stream, Body&& body) noexcept {
  CallerStreamGuard guard(static_cast<cudaStream_t>(stream));
  return body();
}

}  // namespace slimcuda
