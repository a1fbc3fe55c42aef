// SPDX-License-Identifier: Apache-2.0
#include "slimcuda/last_error.h"

#include <string>

#include <gtest/gtest.h>

namespace slimcuda {
namespace {

TEST(LastError, FormatsFunctionAndMessage) {
  EXPECT_EQ(set_last_error(Error::InvalidArgument, "f", "bad %d", 7), Error::InvalidArgument);
  EXPECT_STREQ(last_error_message(), "f: bad 7");
  clear_last_error();
  EXPECT_STREQ(last_error_message(), "");
}

// Wrapping a lower layer's message passes last_error_message() as an argument: the new
// message must contain the old one intact, not a copy of itself being overwritten.
TEST(LastError, WrapsThePreviousMessage) {
  (void)set_last_error(Error::NotSupported, "inner", "no CUDA device");
  (void)set_last_error(Error::NotSupported, "outer", "pinned memory needs a GPU: %s", last_error_message());
  EXPECT_STREQ(last_error_message(), "outer: pinned memory needs a GPU: inner: no CUDA device");
}

TEST(LastError, SnapshotPutsTheTextBackByteForByte) {
  (void)slimcuda::set_last_error(slimcuda::Error::InvalidArgument, "earlier_call", "sentinel: %d", 7);
  const slimcuda::LastErrorSnapshot snapshot;
  (void)slimcuda::set_last_error(slimcuda::Error::NotSupported, "fast_path", "declined");
  snapshot.restore();
  EXPECT_STREQ(slimcuda::last_error_message(), "earlier_call: sentinel: 7");
  slimcuda::clear_last_error();
  const slimcuda::LastErrorSnapshot empty;
  (void)slimcuda::set_last_error(slimcuda::Error::NotSupported, "fast_path", "declined");
  empty.restore();
  EXPECT_STREQ(slimcuda::last_error_message(), "");
}

TEST(LastError, LongMessagesAreTruncatedNotOverrun) {
  const std::string long_text(5000, 'x');
  (void)set_last_error(Error::Internal, "g", "%s", long_text.c_str());
  const std::string m = last_error_message();
  EXPECT_EQ(m.rfind("g: xxx", 0), 0u);
  EXPECT_LT(m.size(), 1024u);
}

}  // namespace
}  // namespace slimcuda
