// SPDX-License-Identifier: Apache-2.0
// The stream-guard shim when its device guard fails: the caller gets the guard's own code
// (MemoryAllocationFailed when the device's context could not be made for lack of memory, a
// bare Internal before commit 7dd88c4) and reads its reason. CUDA calls cannot fail on
// demand, so this binary defines the few the path makes over the runtime's (the library is
// linked in statically, so its calls bind here) and fakes them while armed: a device count
// (so the path is reached without a GPU, in CI too), cudaGetDevice and cudaSetDevice.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace {

// What the fakes do while armed.
enum class Fault {
  None,                // the runtime's own answers
  GetDeviceFails,      // cudaGetDevice: cudaErrorDevicesUnavailable
  ContextOutOfMemory,  // device 1 current; making device 0 current: cudaErrorMemoryAllocation
};
std::atomic<Fault> fault{Fault::None};

template <typename Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// Armed: two devices, whatever the machine has. The library counts once per process, so it
// may keep this count, or a real one taken first: either has the device 0 used here.
extern "C" cudaError_t cudaGetDeviceCount(int* count) {
  static const auto next = real<cudaError_t (*)(int*)>("cudaGetDeviceCount");
  if (fault.load() != Fault::None) {
    *count = 2;
    return cudaSuccess;
  }
  return next != nullptr ? next(count) : cudaErrorUnknown;
}

extern "C" cudaError_t cudaGetDevice(int* device) {
  static const auto next = real<cudaError_t (*)(int*)>("cudaGetDevice");
  switch (fault.load()) {
    case Fault::GetDeviceFails:
      return cudaErrorDevicesUnavailable;
    case Fault::ContextOutOfMemory:
      *device = 1;
      return cudaSuccess;
    case Fault::None:
      break;
  }
  return next != nullptr ? next(device) : cudaErrorUnknown;
}

extern "C" cudaError_t cudaSetDevice(int device) {
  static const auto next = real<cudaError_t (*)(int)>("cudaSetDevice");
  if (fault.load() == Fault::ContextOutOfMemory) return cudaErrorMemoryAllocation;
  return next != nullptr ? next(device) : cudaErrorUnknown;
}

namespace slimcuda::testing {
namespace {

// Arms the fakes for its scope.
class Armed {
 public:
  explicit Armed(Fault f) { fault = f; }
  ~Armed() { fault = Fault::None; }
  Armed(const Armed&) = delete;  // one scope arms once
  Armed& operator=(const Armed&) = delete;
};

// The shim's code and last-error text with `f` armed.
void create_with(Fault f, AOTITorchError* rc, std::string* why) {
  CUDAStreamGuardHandle guard = nullptr;
  {
    Armed armed(f);
    *rc = SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard);
    *why = last_error_message();
  }
  EXPECT_EQ(guard, nullptr);
}

TEST(CudaGuardShimFaults, DisarmedTheSameCallWorks) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CUDAStreamGuardHandle guard = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard), 0) << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(guard), 0);
}

// No GPU needed in these: every CUDA call on the path is faked.
TEST(CudaGuardShimFaults, AFailingDeviceGuardGivesItsCodeAndReason) {
  AOTITorchError rc;
  std::string why;
  create_with(Fault::GetDeviceFails, &rc, &why);
  EXPECT_EQ(rc, code_of(Error::Internal));
  EXPECT_NE(why.find("selecting device 0: cudaErrorDevicesUnavailable"), std::string::npos) << why;
}

// The code is the guard's, not the Internal the shim returned before 7dd88c4 whatever the
// guard said: a caller told MemoryAllocationFailed can free memory and retry.
TEST(CudaGuardShimFaults, NoMemoryForTheContextIsAnAllocationFailure) {
  AOTITorchError rc;
  std::string why;
  create_with(Fault::ContextOutOfMemory, &rc, &why);
  EXPECT_EQ(rc, code_of(Error::MemoryAllocationFailed)) << why;
  EXPECT_NE(why.find("selecting device 0: cudaErrorMemoryAllocation"), std::string::npos) << why;
}

}  // namespace
}  // namespace slimcuda::testing
