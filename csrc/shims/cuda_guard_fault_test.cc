// SPDX-License-Identifier: Apache-2.0
// The stream-guard shim when its device guard fails: the caller gets the guard's code and
// reads its reason, not a bare Internal (issue 12 item 9). A guard: on the H200 it passed on
// the shim before commit 7dd88c4 too, since DeviceGuard records its reason itself.
// cudaGetDevice cannot fail on demand, so this binary defines it over the runtime's (the
// library is linked in statically, so its calls bind here) and fails it while armed.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace {
std::atomic<bool> fail_get_device{false};
}  // namespace

extern "C" cudaError_t cudaGetDevice(int* device) {
  using Real = cudaError_t (*)(int*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "cudaGetDevice"));
  if (fail_get_device.load()) return cudaErrorDevicesUnavailable;
  return real != nullptr ? real(device) : cudaErrorUnknown;
}

namespace slimcuda::testing {
namespace {

TEST(CudaGuardShimFaults, AFailingDeviceGuardGivesItsCodeAndReason) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CUDAStreamGuardHandle guard = nullptr;
  fail_get_device = true;
  const AOTITorchError rc = SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard);
  const std::string why = last_error_message();
  fail_get_device = false;
  EXPECT_EQ(rc, code_of(Error::Internal));
  EXPECT_EQ(guard, nullptr);
  EXPECT_NE(why.find("selecting device 0: cudaErrorDevicesUnavailable"), std::string::npos) << why;
  // Disarmed, the same call works.
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(nullptr, 0, &guard), 0) << last_error_message();
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(guard), 0);
}

}  // namespace
}  // namespace slimcuda::testing
