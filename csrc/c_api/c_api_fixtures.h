// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shared fixtures (csrc/testing/fixtures.h) for tests that go through the C ABI.

#include <cstdint>

#include "csrc/testing/fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {

/// expect_code for a C ABI result, against this thread's slimcuda_last_error_message()
/// (read once the call that returned `got` is done).
inline void expect_code(const Case& c, int32_t got) { expect_code(c, got, slimcuda_last_error_message()); }

}  // namespace slimcuda::testing
