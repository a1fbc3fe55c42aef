// A C++ program against the installed slimcuda: the caller-stream guard from
// <slimcuda/caller_stream.h>, which needs no CUDA headers. Built by tools/consumer/check.sh.
#include <slimcuda/caller_stream.h>
#include <slimcuda/slimcuda.h>

#include <cstdio>

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
  std::printf("consumer.cc: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
