// SPDX-License-Identifier: Apache-2.0
// A C++ program against the installed slimcuda: the caller-stream guard from
// <slimcuda/caller_stream.h>, which needs no CUDA headers. Built by tools/consumer/check.sh.
#include <slimcuda/caller_stream.h>
#include <slimcuda/slimcuda.h>

#include <cstdio>
#include <cstring>

int main() {
  int failures = 0;
  auto* stream = reinterpret_cast<cudaStream_t>(0x5678);  // stand-in handle, never dereferenced
  failures += slimcuda::getCallerStream().has_value();
  {
    slimcuda::CallerStreamGuard guard(stream);
    failures += slimcuda::getCallerStream() != stream;
    void* got = nullptr;
    int32_t is_set = 0;
    failures += slimcuda_caller_stream_get(&got, &is_set) != SLIMCUDA_OK || is_set != 1 || got != stream;
    {
      slimcuda::CallerStreamGuard legacy(nullptr);  // the legacy default stream is a selection
      failures += !slimcuda::getCallerStream().has_value() || *slimcuda::getCallerStream() != nullptr;
    }
    failures += slimcuda::getCallerStream() != stream;
  }
  failures += slimcuda::getCallerStream().has_value();
  // The library is the version of the headers it was installed with.
  failures += std::strcmp(slimcuda_version(), SLIMCUDA_VERSION_STRING) != 0;
  std::printf("consumer.cc: slimcuda %s: %s\n", slimcuda_version(), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
