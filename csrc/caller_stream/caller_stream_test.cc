// SPDX-License-Identifier: Apache-2.0
// CallerStreamGuard and getCallerStream(): what the type allows, and one selection per
// thread. The fixture sequences run through the guard and the C ABI alike in
// csrc/c_api/caller_stream_api_test.cc.
#include "slimcuda/caller_stream.h"

#include <cstdint>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace slimcuda {
namespace {

// A guard can be neither copied nor moved (the header asserts the same).
static_assert(!std::is_copy_constructible_v<CallerStreamGuard> && !std::is_copy_assignable_v<CallerStreamGuard>);
static_assert(!std::is_move_constructible_v<CallerStreamGuard> && !std::is_move_assignable_v<CallerStreamGuard>);
static_assert(!std::is_default_constructible_v<CallerStreamGuard>, "a guard always selects a stream");

// Many threads selecting their own streams concurrently never see each other's.
TEST(CallerStream, ThreadsNeverSeeEachOther) {
  constexpr int kThreads = 16, kRounds = 2000;
  std::vector<std::thread> threads;
  std::vector<int> mismatches(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &mismatches] {
      const cudaStream_t mine = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x100000 + 0x100 * t));
      for (int i = 0; i < kRounds; ++i) {
        CallerStreamGuard g(mine);
        if (getCallerStream() != std::optional<cudaStream_t>(mine)) ++mismatches[t];
        std::this_thread::yield();
        if (getCallerStream() != std::optional<cudaStream_t>(mine)) ++mismatches[t];
      }
      if (getCallerStream().has_value()) ++mismatches[t];
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace slimcuda
