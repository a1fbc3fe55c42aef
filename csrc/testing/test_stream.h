// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

#include "csrc/memory/retire_stream.h"

namespace slimcuda::testing {

/// A non-blocking stream of the current device, for tests that link the library statically
/// (slimcuda_cc_test with internals = True). Made by the CUDA runtime and destroyed the way
/// slimcuda_stream_destroy destroys a stream: the pools' cached blocks are retired from it
/// first (memory::retire_stream), so none keeps its address. ok() says whether it exists.
class TestStream {
 public:
  TestStream() noexcept {
    ok_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess;
    if (!ok_) (void)cudaGetLastError();
  }
  ~TestStream() {
    if (!ok_) return;
    memory::retire_stream(stream_);
    if (cudaStreamDestroy(stream_) != cudaSuccess) (void)cudaGetLastError();
  }
  TestStream(const TestStream&) = delete;  // owns its stream
  TestStream& operator=(const TestStream&) = delete;
  TestStream(TestStream&&) = delete;
  TestStream& operator=(TestStream&&) = delete;

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  bool ok_ = false;
};

}  // namespace slimcuda::testing
