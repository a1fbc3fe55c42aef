// SPDX-License-Identifier: Apache-2.0
#pragma once

// For the model's own tests (constants_test, state_test): one run of a test model of
// models/testing (one float32 input x [1], one output y [1]) on the CPU.

#include <gtest/gtest.h>

#include "csrc/model/model.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {

/// y for input x; a failed run fails the test and gives -1.
inline float run_test_model(Model& m, float x) {
  SlimTensor* in = nullptr;
  const int64_t sizes[1] = {1};
  EXPECT_EQ(from_blob(&x, 1, sizes, nullptr, 0, 6, 0, 0, &in), Error::Ok);
  SlimTensor* out = nullptr;
  const Error e = m.run(&in, 1, &out, 1, StreamContext::unselected(0));
  delete in;
  EXPECT_EQ(e, Error::Ok) << last_error_message();
  if (e != Error::Ok) return -1;
  const float y = *static_cast<const float*>(out->data_ptr());
  delete out;
  return y;
}

}  // namespace slimcuda::testing
