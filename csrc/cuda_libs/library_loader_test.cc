// SPDX-License-Identifier: Apache-2.0
// The vendor library loader: search order, messages, and the remembered failure of the
// cuBLASLt/cuDNN tables (no vendor library is present on CI machines, where the failure
// and its message are checked; on the GPU machine, SLIMCUDA_REQUIRE_GPU=1, they must load).
#include "csrc/cuda_libs/library_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "csrc/config/config.h"
#include "csrc/cuda_libs/cublaslt.h"
#include "csrc/cuda_libs/cudnn.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

cuda_libs::LibrarySpec spec(const char* soname) {
  return {"TestLib", "SLIMCUDA_TEST_VENDOR_LIBRARY", soname, "apt-get install testlib", RTLD_NOW | RTLD_LOCAL};
}

TEST(LibraryLoader, OwnDirectoryIsLibslimcudasFolder) {
  const std::string dir = cuda_libs::own_library_dir();
  ASSERT_FALSE(dir.empty());
}

TEST(LibraryLoader, MissingLibraryNamesEveryPlaceAndTheFix) {
  cuda_libs::OpenedLibrary lib;
  std::string why;
  EXPECT_EQ(cuda_libs::open_library(spec("libslimcuda_no_such_library.so.7"), "", &lib, &why), Error::NotSupported);
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_NE(why.find("TestLib"), std::string::npos) << why;
  EXPECT_NE(why.find("SLIMCUDA_TEST_VENDOR_LIBRARY: not set"), std::string::npos) << why;
  EXPECT_NE(why.find(cuda_libs::own_library_dir() + "/libslimcuda_no_such_library.so.7: no such file"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("apt-get install testlib"), std::string::npos) << why;
}

TEST(LibraryLoader, ChosenPathIsFinal) {
  cuda_libs::OpenedLibrary lib;
  std::string why;
  // libc.so.6 is on the loader's path, but an explicit choice that fails is not replaced.
  EXPECT_EQ(cuda_libs::open_library(spec("libc.so.6"), "/nonexistent/libc.so.6", &lib, &why), Error::NotSupported);
  EXPECT_NE(why.find("/nonexistent/libc.so.6"), std::string::npos) << why;
  EXPECT_NE(why.find("set SLIMCUDA_TEST_VENDOR_LIBRARY to the full path"), std::string::npos) << why;
}

TEST(LibraryLoader, LoaderPathAndSymbols) {
  cuda_libs::OpenedLibrary lib;
  std::string why;
  ASSERT_EQ(cuda_libs::open_library(spec("libc.so.6"), "", &lib, &why), Error::Ok) << why;
  EXPECT_EQ(lib.where, "libc.so.6");
  void* p = nullptr;
  EXPECT_TRUE(cuda_libs::resolve_symbol(lib, "malloc", &p, &why));
  EXPECT_NE(p, nullptr);
  std::string missing;
  EXPECT_FALSE(cuda_libs::resolve_symbol(lib, "slimcuda_no_such_symbol", &p, &missing));
  EXPECT_NE(missing.find("slimcuda_no_such_symbol"), std::string::npos);
}

// Whatever the machine has, the tables never abort, and a failure is remembered: the
// second call gives the same message. The GPU machine has both libraries.
TEST(VendorTables, CublasLtLoadsOrExplains) {
  auto first = cuda_libs::cublaslt();
  if (gpu_required()) {
    ASSERT_TRUE(first.ok()) << "SLIMCUDA_REQUIRE_GPU=1: " << last_error_message();
  }
  if (first.ok()) {
    EXPECT_GE(first.value()->version, cuda_libs::kMinCublasLtVersion);
    return;
  }
  EXPECT_EQ(first.error(), Error::NotSupported);
  const std::string msg = last_error_message();
  EXPECT_NE(msg.find("cuBLASLt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SLIMCUDA_CUBLASLT_LIBRARY"), std::string::npos) << msg;
  clear_last_error();
  EXPECT_EQ(cuda_libs::cublaslt().error(), Error::NotSupported);
  EXPECT_EQ(msg, last_error_message());
}

TEST(VendorTables, CudnnLoadsOrExplains) {
  auto first = cuda_libs::cudnn();
  if (gpu_required()) {
    ASSERT_TRUE(first.ok()) << "SLIMCUDA_REQUIRE_GPU=1: " << last_error_message();
  }
  if (first.ok()) {
    EXPECT_GE(first.value()->version, cuda_libs::kMinCudnnVersion);
    EXPECT_NE(first.value()->handle, nullptr);
    return;
  }
  EXPECT_EQ(first.error(), Error::NotSupported);
  const std::string msg = last_error_message();
  EXPECT_NE(msg.find("libcudnn.so.9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nvidia-cudnn-cu13"), std::string::npos) << msg;
}

// A library's path setting is read as the library is opened, once: changing it afterwards
// fails (it would change nothing); its value in force may still be set.
TEST(VendorTables, PathSettingIsFixedOnceOpened) {
  (void)cuda_libs::cublaslt();
  std::string why, now;
  EXPECT_EQ(config::set("SLIMCUDA_CUBLASLT_LIBRARY", "/elsewhere/libcublasLt.so.13", &why), Error::InvalidState);
  EXPECT_NE(why.find("read once"), std::string::npos) << why;
  ASSERT_EQ(config::get_text("SLIMCUDA_CUBLASLT_LIBRARY", &now, &why), Error::Ok);
  EXPECT_EQ(config::set("SLIMCUDA_CUBLASLT_LIBRARY", now.c_str(), &why), Error::Ok) << why;
}

}  // namespace
}  // namespace slimcuda::testing
