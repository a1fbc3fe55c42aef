// SPDX-License-Identifier: Apache-2.0
// Clone and copy do work bounded by storage, not by numel: a 4-byte tensor viewed as
// [2^40] with stride 0 is a valid view, but cloning it must not loop 2^40 times, and
// copying into it (or into any destination whose elements alias) is refused. Each call
// runs in a forked child, so a regression fails (after a deadline that only a hang reaches)
// instead of hanging. testdata/tensor.json has the same cases for both languages (op copy, clone).
// The CUDA cases (GPU only) run in-process, since CUDA does not survive fork: a call that
// has not returned by that deadline ends the test binary with a failure instead.

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/child_call.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

constexpr int64_t kHuge = int64_t{1} << 40;

// One float32 element holding 7, and a view of it as `sizes` with `strides`.
struct Viewed {
  slimcuda_tensor* base = nullptr;
  slimcuda_tensor* view = nullptr;
  Viewed(std::initializer_list<int64_t> sizes, std::initializer_list<int64_t> strides, int64_t storage = 1) {
    EXPECT_EQ(slimcuda_tensor_empty(1, &storage, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, 0, 0, &base), 0);
    std::vector<float> seven(static_cast<size_t>(storage), 7.0f);
    EXPECT_EQ(slimcuda_tensor_copy_from_host(base, seven.data(), seven.size() * 4, SLIMCUDA_FLOAT32), 0);
    EXPECT_EQ(slimcuda_tensor_view(base, static_cast<int64_t>(sizes.size()), sizes.begin(), strides.begin(), 0, &view),
              0)
        << slimcuda_last_error_message();
  }
  ~Viewed() {
    slimcuda_tensor_delete(view);
    slimcuda_tensor_delete(base);
  }
  Viewed(const Viewed&) = delete;
  Viewed& operator=(const Viewed&) = delete;
};

TEST(BoundedWork, ClonePreservingStridesOfAHugeStrideZeroViewCopiesItsStorage) {
  Viewed x({kHuge}, {0});
  EXPECT_EQ(call_in_child([&] {
              slimcuda_tensor* out = nullptr;
              int32_t rc = slimcuda_tensor_clone(x.view, 1, &out);
              slimcuda_tensor_info info{};
              if (rc == 0) rc = slimcuda_tensor_get_info(out, &info);
              float v = 0;
              if (rc == 0 && (info.storage_bytes != 4 || info.strides[0] != 0 || info.sizes[0] != kHuge)) rc = 100;
              if (rc == 0) std::memcpy(&v, info.data, 4);
              if (rc == 0 && v != 7.0f) rc = 101;
              slimcuda_tensor_delete(out);
              return rc;
            }),
            code(0));
}

TEST(BoundedWork, CopyBetweenHugeStrideZeroViewsIsRefusedAtOnce) {
  Viewed dst({kHuge}, {0}), src({kHuge}, {0});
  EXPECT_EQ(call_in_child([&] { return slimcuda_tensor_copy(dst.view, src.view); },
                          "the destination has overlapping elements"),
            code(SLIMCUDA_ERROR_INVALID_ARGUMENT));
}

TEST(BoundedWork, CopyIntoAliasingDestinationsIsRefused) {
  Viewed stride0({3}, {0}), inner_stride0({2, 2}, {2, 0}, 4), more_than_storage({4, 4}, {1, 1}, 7);
  for (auto* dst : {&stride0, &inner_stride0, &more_than_storage}) {
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(dst->view, &info), 0);
    slimcuda_tensor* src = nullptr;
    ASSERT_EQ(slimcuda_tensor_empty(info.ndim, info.sizes, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CPU, 0, 0, &src),
              0);
    EXPECT_EQ(
        call_in_child([&] { return slimcuda_tensor_copy(dst->view, src); }, "the destination has overlapping elements"),
        code(SLIMCUDA_ERROR_INVALID_ARGUMENT))
        << "sizes[0] " << info.sizes[0];
    slimcuda_tensor_delete(src);
  }
}

TEST(BoundedWork, CopyIntoNonOverlappingStridedDestinationsStillWorks) {
  Viewed padded({2, 2}, {4, 1}, 8), interleaved({2, 3}, {3, 2}, 8), transposed({3, 2}, {1, 3}, 6);
  for (auto* dst : {&padded, &interleaved, &transposed}) {
    slimcuda_tensor_info info{};
    ASSERT_EQ(slimcuda_tensor_get_info(dst->view, &info), 0);
    Viewed src({info.sizes[0], info.sizes[1]}, {0, 0});
    EXPECT_EQ(slimcuda_tensor_copy(dst->view, src.view), 0) << slimcuda_last_error_message();
  }
}

// `call` on this thread's behalf in another thread; its code, or the process ends with a
// failure when it has not returned within kChildHangSeconds (a thread cannot be stopped, and a
// hung CUDA call would otherwise hang the binary until the test runner's own timeout).
int32_t in_process(const std::function<int32_t()>& call) {
  std::packaged_task<int32_t()> task(call);
  std::future<int32_t> done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(std::chrono::seconds(kChildHangSeconds)) != std::future_status::ready) {
    std::fprintf(stderr, "bounded_work_test: a CUDA call did not return within %d s (hung)\n", kChildHangSeconds);
    std::_Exit(1);
  }
  return done.get();
}

// One float32 element holding 7 on cuda:0, and a view of it as [2^40] with stride 0.
struct CudaViewed {
  slimcuda_tensor* base = nullptr;
  slimcuda_tensor* view = nullptr;
  CudaViewed() {
    const int64_t one = 1, huge = kHuge, zero = 0;
    EXPECT_EQ(slimcuda_tensor_empty(1, &one, nullptr, SLIMCUDA_FLOAT32, SLIMCUDA_DEVICE_CUDA, 0, 0, &base), 0)
        << slimcuda_last_error_message();
    const float seven = 7.0f;
    EXPECT_EQ(slimcuda_tensor_copy_from_host(base, &seven, 4, SLIMCUDA_FLOAT32), 0) << slimcuda_last_error_message();
    EXPECT_EQ(slimcuda_tensor_view(base, 1, &huge, &zero, 0, &view), 0) << slimcuda_last_error_message();
  }
  ~CudaViewed() {
    slimcuda_tensor_delete(view);
    slimcuda_tensor_delete(base);
  }
  CudaViewed(const CudaViewed&) = delete;
  CudaViewed& operator=(const CudaViewed&) = delete;
};

TEST(BoundedWork, OnCudaClonePreservingStridesOfAHugeStrideZeroViewCopiesItsStorage) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CudaViewed x;
  slimcuda_tensor* out = nullptr;
  std::string message;  // the last error is the calling thread's
  ASSERT_EQ(in_process([&] {
              const int32_t rc = slimcuda_tensor_clone(x.view, 1, &out);
              message = slimcuda_last_error_message();
              return rc;
            }),
            0)
      << message;
  slimcuda_tensor_info info{};
  ASSERT_EQ(slimcuda_tensor_get_info(out, &info), 0);
  EXPECT_EQ(info.storage_bytes, 4u);
  EXPECT_EQ(info.sizes[0], kHuge);
  EXPECT_EQ(info.strides[0], 0);
  // Its one element, read back through a [1] view of the clone.
  const int64_t one = 1;
  slimcuda_tensor* first = nullptr;
  ASSERT_EQ(slimcuda_tensor_view(out, 1, &one, &one, 0, &first), 0) << slimcuda_last_error_message();
  float v = 0;
  EXPECT_EQ(slimcuda_tensor_copy_to_host(first, &v, 4, SLIMCUDA_FLOAT32), 0) << slimcuda_last_error_message();
  EXPECT_EQ(v, 7.0f);
  slimcuda_tensor_delete(first);
  slimcuda_tensor_delete(out);
}

TEST(BoundedWork, OnCudaCopyBetweenHugeStrideZeroViewsIsRefusedAtOnce) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  CudaViewed dst, src;
  std::string message;  // the last error is the calling thread's
  EXPECT_EQ(in_process([&] {
              const int32_t rc = slimcuda_tensor_copy(dst.view, src.view);
              message = slimcuda_last_error_message();
              return rc;
            }),
            SLIMCUDA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("the destination has overlapping elements"), std::string::npos) << message;
}

}  // namespace
}  // namespace slimcuda::testing
