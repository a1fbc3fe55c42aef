// SPDX-License-Identifier: Apache-2.0
#include "slimcuda/caller_stream.h"

#include <utility>

namespace slimcuda {
namespace {

// The one thread-local of the process (this file is linked only into libslimcuda.so).
thread_local std::optional<cudaStream_t> tls_caller_stream;

}  // namespace

std::optional<cudaStream_t> getCallerStream() noexcept { return tls_caller_stream; }

namespace detail {
std::optional<cudaStream_t> exchange_caller_stream(std::optional<cudaStream_t> next) noexcept {
  return std::exchange(tls_caller_stream, next);
}
}  // namespace detail

CallerStreamGuard::CallerStreamGuard(cudaStream_t stream) noexcept
    : stream_(stream), previous_(detail::exchange_caller_stream(stream)) {}

CallerStreamGuard::~CallerStreamGuard() { detail::exchange_caller_stream(previous_); }

}  // namespace slimcuda
