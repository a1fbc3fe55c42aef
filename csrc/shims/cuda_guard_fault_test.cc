// SPDX-License-Identifier: Apache-2.0
// The stream-guard shim when its device guard fails: the caller gets the guard's code and
// reads its reason, not a bare Internal. CUDA calls cannot fail on demand, so this binary
// defines the few the path makes over the runtime's (the library is linked in statically,
// so its calls bind here) and fakes them while armed: a device count (so the path is reached
// without a GPU, in CI too) and a cudaGetDevice that fails.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace {

std::atomic<bool> armed{false};

template <typename Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// Armed: two devices, whatever the machine has. The library counts once per process, so it
// may keep this count, or a real one taken first: either has the device 0 used here.
extern "C" cudaError_t cudaGetDeviceCount(int* count) {
  static const auto next = real<cudaError_t (*)(int*)>("cudaGetDeviceCount");
  if (armed.load()) {
    *count = 2;
    return cudaSuccess;
  }
  return next != nullptr ? next(count) : cudaErrorUnknown;
}

extern "C" cudaError_t cudaGetDevice(int* device) {
  static const auto next = real<cudaError_t (*)(int*)>("cudaGetDevice");
  if (armed.load()) return cudaErrorDevicesUnavailable;
  return next != nullptr ? next(device) : cudaErrorUnknown;
}

namespace slimcuda::testing {
namespace {

// Arms the fakes for its scope.
class Armed {
 public:
  Armed() { armed = true; }
  ~Armed() { armed = false; }
  Armed(const Armed&) = delete;  // one scope arms once
  Armed& operator=(const Armed&) = delete;
};

TEST(CudaGuardShimFaults, DisarmedTheSameCallWorks) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CUDAStreamGuardHandle guard = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard), 0) << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(guard), 0);
}

// No GPU needed: every CUDA call on this path is faked.
TEST(CudaGuardShimFaults, AFailingDeviceGuardGivesItsCodeAndReason) {
  CUDAStreamGuardHandle guard = nullptr;
  AOTITorchError rc;
  std::string why;
  {
    Armed fault;
    rc = SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard);
    why = last_error_message();
  }
  EXPECT_EQ(rc, code_of(Error::Internal));
  EXPECT_EQ(guard, nullptr);
  EXPECT_NE(why.find("selecting device 0: cudaErrorDevicesUnavailable"), std::string::npos) << why;
}

}  // namespace
}  // namespace slimcuda::testing
