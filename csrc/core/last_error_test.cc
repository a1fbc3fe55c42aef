// SPDX-License-Identifier: Apache-2.0
#include "slimcuda/last_error.h"

#include <string>

#include <gtest/gtest.h>

namespace slimcuda {
namespace {

TEST(LastError, FormatsFunctionAndMessage) {
  const ErrorContext context("f");
  EXPECT_EQ(set_last_error(Error::InvalidArgument, "bad %d", 7), Error::InvalidArgument);
  EXPECT_STREQ(last_error_message(), "f: bad 7");
  clear_last_error();
  EXPECT_STREQ(last_error_message(), "");
}

// Wrapping a lower layer's message passes last_error_message() as an argument: the new
// message must contain the old one intact, not a copy of itself being overwritten.
TEST(LastError, WrapsThePreviousMessage) {
  {
    const ErrorContext inner("inner");
    (void)set_last_error(Error::NotSupported, "no CUDA device");
  }
  const ErrorContext outer("outer");
  (void)set_last_error(Error::NotSupported, "pinned memory needs a GPU: %s", last_error_message());
  EXPECT_STREQ(last_error_message(), "outer: pinned memory needs a GPU: inner: no CUDA device");
}

TEST(LastError, SnapshotPutsTheTextBackByteForByte) {
  {
    const ErrorContext context("earlier_call");
    (void)slimcuda::set_last_error(slimcuda::Error::InvalidArgument, "sentinel: %d", 7);
  }
  const slimcuda::LastErrorSnapshot snapshot;
  (void)slimcuda::set_last_error(slimcuda::Error::NotSupported, "declined");
  snapshot.restore();
  EXPECT_STREQ(slimcuda::last_error_message(), "earlier_call: sentinel: 7");
  slimcuda::clear_last_error();
  const slimcuda::LastErrorSnapshot empty;
  (void)slimcuda::set_last_error(slimcuda::Error::NotSupported, "declined");
  empty.restore();
  EXPECT_STREQ(slimcuda::last_error_message(), "");
}

TEST(LastError, LongMessagesAreTruncatedNotOverrun) {
  const std::string long_text(5000, 'x');
  const ErrorContext context("g");
  (void)set_last_error(Error::Internal, "%s", long_text.c_str());
  const std::string m = last_error_message();
  EXPECT_EQ(m.rfind("g: xxx", 0), 0u);
  EXPECT_LT(m.size(), 1024u);
}

// The entry layer names the C function once; code below it records messages without
// knowing its caller, and a nested entry (a shim called from a model run) names itself
// only while it runs.
TEST(ErrorContext, NamesTheInnermostOpenFunctionAndRestoresTheOuter) {
  EXPECT_EQ(ErrorContext::current(), nullptr);
  (void)set_last_error(Error::Internal, "outside");
  EXPECT_STREQ(last_error_message(), "slimcuda: outside");
  {
    const ErrorContext run("slimcuda_model_run");
    {
      const ErrorContext shim("aoti_torch_empty_strided");
      (void)set_last_error(Error::MemoryAllocationFailed, "out of memory");
      EXPECT_STREQ(last_error_message(), "aoti_torch_empty_strided: out of memory");
    }
    EXPECT_STREQ(ErrorContext::current(), "slimcuda_model_run");
    (void)set_last_error(Error::InvalidProgram, "the model's run failed: %s", last_error_message());
    EXPECT_STREQ(last_error_message(),
                 "slimcuda_model_run: the model's run failed: aoti_torch_empty_strided: out of memory");
  }
  EXPECT_EQ(ErrorContext::current(), nullptr);
}

}  // namespace
}  // namespace slimcuda
