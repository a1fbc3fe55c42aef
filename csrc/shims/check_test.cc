// SPDX-License-Identifier: Apache-2.0
// aoti_torch_check: a passing check returns; a failing one records its message and throws.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

TEST(CheckShim, APassingCheckReturns) {
  EXPECT_NO_THROW(SLIMCUDA_SHIM(aoti_torch_check)(true, "fn", "f.cpp", 3, "never seen"));
  EXPECT_NO_THROW(SLIMCUDA_SHIM(aoti_torch_check)(true, nullptr, nullptr, 0, nullptr));
}

TEST(CheckShim, AFailingCheckThrowsWithItsMessage) {
  try {
    SLIMCUDA_SHIM(aoti_torch_check)
    (false, "cpp_fused_embedding_0", "model.wrapper.cpp", 42, "index out of bounds: 0 <= tmp3 < 1000");
    FAIL() << "a failed check returned";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("index out of bounds: 0 <= tmp3 < 1000"), std::string::npos) << what;
    EXPECT_NE(what.find("cpp_fused_embedding_0, model.wrapper.cpp:42"), std::string::npos) << what;
    EXPECT_NE(std::string(last_error_message()).find(what), std::string::npos) << last_error_message();
  }
}

TEST(CheckShim, NullStringsInAFailingCheckAreTolerated) {
  EXPECT_THROW(SLIMCUDA_SHIM(aoti_torch_check)(false, nullptr, nullptr, 0, nullptr), std::runtime_error);
  EXPECT_NE(std::string(last_error_message()).find("check failed in the model"), std::string::npos);
}

}  // namespace
}  // namespace slimcuda::testing
