// SPDX-License-Identifier: Apache-2.0
// read_regular_file through every C entry point that reads a file: slimcuda_model_load_file
// (the package) and slimcuda_package_pack (the manifest, its "so" and its "weights"), and
// write_regular_file through the one that writes (pack's output). Each
// call runs in a forked child, so a call that blocks (a FIFO), reads without end
// (/dev/zero) or aborts (an exception through noexcept) fails the test instead of hanging
// or killing it. go/slimcuda/file_test.go checks the same codes and messages from Go.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "csrc/c_api/child_call.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

constexpr int kCannotDrop = 201;

// Clears this process's effective capability set (the permitted set stays, so nothing is
// lost for good); glibc has no wrapper, and libcap would be a dependency for one call.
bool drop_effective_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  for (auto& d : data) d.effective = 0;
  return syscall(SYS_capset, &header, data) == 0;
}

int32_t load_file(const std::string& path) {
  slimcuda_model* m = nullptr;
  const int32_t rc = slimcuda_model_load_file(path.c_str(), 0, 0, &m);
  slimcuda_model_free(m);
  return rc;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A manifest naming `so` (and `weights` when not empty), written into dir.
std::string manifest(const std::string& dir, const std::string& name, const std::string& so,
                     const std::string& weights = "") {
  const std::string path = dir + "/" + name;
  write(path, R"({"libraries": [{"device": "cpu", "so": ")" + so + R"(", "methods": [{"name": "forward",
    "inputs": [{"name": "x", "dtype": "int64", "sizes": [3], "device": "cpu"}],
    "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}])" +
                  (weights.empty() ? "" : R"(, "weights": ")" + weights + "\"") + "}");
  return path;
}

class FileReader : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/file_reader_" + std::to_string(getpid());
    ASSERT_EQ(mkdir(dir_.c_str(), 0755) == 0 || errno == EEXIST, true);
    write(dir_ + "/m.so", "not really a library");
    fifo_ = dir_ + "/fifo";
    unlink(fifo_.c_str());
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0644), 0);
    subdir_ = dir_ + "/subdir";
    ASSERT_EQ(mkdir(subdir_.c_str(), 0755) == 0 || errno == EEXIST, true);
  }
  std::string dir_, fifo_, subdir_;
};

struct FileCase {
  const char* description;
  std::string path;  // the file the entry point is given or the manifest names
  int32_t want;
  const char* message;
};

TEST_F(FileReader, EveryEntryPointRefusesWhatIsNotARegularFile) {
  const std::string big = dir_ + "/big.slimcuda";  // sparse: larger than the package cap
  {
    const int fd = open(big.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t{3} << 30), 0);
    close(fd);
  }
  const FileCase cases[] = {
      {"missing", dir_ + "/missing", SLIMCUDA_ERROR_NOT_FOUND, "No such file or directory"},
      {"directory", subdir_, SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (directory)"},
      {"fifo", fifo_, SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (fifo)"},
      {"char device", "/dev/zero", SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (device)"},
      {"over the cap", big, SLIMCUDA_ERROR_INVALID_ARGUMENT, "3221225472 bytes, over the cap of 2147483646 bytes"},
  };
  for (const FileCase& c : cases) {
    SCOPED_TRACE(c.description);
    EXPECT_EQ(call_in_child([&] { return load_file(c.path); }, c.message), code(c.want)) << "load_file";
    EXPECT_EQ(call_in_child([&] { return slimcuda_package_pack(c.path.c_str(), (dir_ + "/o").c_str()); },
                            c.path == big ? "over the cap of 16777216 bytes" : c.message),
              code(c.want))
        << "pack: manifest";
    const std::string so = manifest(dir_, "so.json", c.path);
    EXPECT_EQ(call_in_child([&] { return slimcuda_package_pack(so.c_str(), (dir_ + "/o").c_str()); }, c.message),
              code(c.want))
        << "pack: so";
    const std::string weights = manifest(dir_, "weights.json", "m.so", c.path);
    EXPECT_EQ(call_in_child([&] { return slimcuda_package_pack(weights.c_str(), (dir_ + "/o").c_str()); }, c.message),
              code(c.want))
        << "pack: weights";
  }
}

// The package pack writes goes to a regular file only: before, a FIFO nobody reads blocked
// pack forever, and a directory was AccessFailed "cannot write PATH" without the reason.
TEST_F(FileReader, PackWritesOnlyARegularFile) {
  const char* so = std::getenv("SLIMCUDA_TEST_LIBRARY");
  ASSERT_NE(so, nullptr) << "SLIMCUDA_TEST_LIBRARY is not set";
  // The manifest resolves "so" against its own folder: give it an absolute path.
  char* abs = realpath(so, nullptr);
  ASSERT_NE(abs, nullptr) << so;
  const std::string real = manifest(dir_, "real.json", abs);
  free(abs);
  const auto pack_to = [&](const std::string& out) {
    return [real, out] { return slimcuda_package_pack(real.c_str(), out.c_str()); };
  };
  const struct {
    const char* description;
    std::string out;
    int32_t want;
    std::string message;
  } cases[] = {
      {"fifo nobody reads", fifo_, SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (fifo)"},
      {"directory", subdir_, SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (directory)"},
      {"char device", "/dev/null", SLIMCUDA_ERROR_INVALID_ARGUMENT, "is not a regular file (device)"},
      {"missing folder", dir_ + "/missing/out.slimcuda", SLIMCUDA_ERROR_ACCESS_FAILED,
       "cannot create " + dir_ + "/missing/out.slimcuda: No such file or directory"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.description);
    EXPECT_EQ(call_in_child(pack_to(c.out), c.message), code(c.want));
  }
  // A FIFO with a reader: opened without blocking, then refused by fstat.
  EXPECT_EQ(call_in_child(pack_to(fifo_), "is not a regular file (fifo)",
                          [this] {
                            if (open(fifo_.c_str(), O_RDONLY | O_NONBLOCK) < 0) _exit(203);
                          }),
            code(SLIMCUDA_ERROR_INVALID_ARGUMENT));
  // A longer file already there is replaced whole, and what was written reads back.
  const std::string out = dir_ + "/out.slimcuda";
  write(out, std::string(1 << 20, 'x'));
  ASSERT_EQ(slimcuda_package_pack(real.c_str(), out.c_str()), SLIMCUDA_OK) << slimcuda_last_error_message();
  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_LT(bytes.size(), size_t{1} << 20);
  EXPECT_EQ(slimcuda_package_check(bytes.data(), bytes.size()), SLIMCUDA_OK) << slimcuda_last_error_message();
}

TEST_F(FileReader, ManifestOverItsCap) {
  const std::string path = dir_ + "/big.json";
  write(path, std::string(size_t{17} << 20, ' ') + "{}");
  EXPECT_EQ(call_in_child([&] { return slimcuda_package_pack(path.c_str(), (dir_ + "/o").c_str()); },
                          "is 17825794 bytes, over the cap of 16777216 bytes"),
            code(SLIMCUDA_ERROR_INVALID_ARGUMENT));
}

// Root reads any file whatever its mode (CI runs as root), so the child drops to nobody.
TEST_F(FileReader, PermissionDeniedIsAccessFailed) {
  // In /tmp, which nobody may traverse (the test's own temporary folder may be under /root).
  char tmpl[] = "/tmp/slimcuda_file_reader_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  const std::string path = dir + "/secret.slimcuda";
  write(path, "bytes");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  const std::string m = manifest(dir, "secret.json", "secret.slimcuda");  // readable; its library is not
  ASSERT_EQ(chmod(m.c_str(), 0644), 0);
  // Root reads a mode-0 file through CAP_DAC_OVERRIDE: the child gives up its effective
  // capabilities, which any process may do (also in a user namespace where uid 65534 is not
  // mapped, so no case here has to skip); a non-root test is denied as it is.
  const auto drop = [] {
    if (geteuid() == 0 && !drop_effective_capabilities()) _exit(kCannotDrop);
  };
  const std::string load = call_in_child([&] { return load_file(path); }, "Permission denied", drop);
  ASSERT_NE(load, code(kCannotDrop)) << "capset refused to drop this process's own capabilities";
  EXPECT_EQ(load, code(SLIMCUDA_ERROR_ACCESS_FAILED));
  EXPECT_EQ(call_in_child([&] { return slimcuda_package_pack(m.c_str(), "/dev/null"); },
                          "cannot open " + path + ": Permission denied", drop),
            code(SLIMCUDA_ERROR_ACCESS_FAILED));
  unlink(path.c_str());
  unlink(m.c_str());
  rmdir(dir.c_str());
}

TEST_F(FileReader, NoFileDescriptorLeftIsOutOfResources) {
  const std::string path = dir_ + "/m.so";
  EXPECT_EQ(call_in_child([&] { return load_file(path); }, "Too many open files",
                          [] {
                            // Every descriptor in use: the next open fails with EMFILE.
                            const rlimit limit{3, 3};
                            for (int fd = 3; fd < 4096; ++fd) close(fd);
                            if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(202);
                          }),
            code(SLIMCUDA_ERROR_OUT_OF_RESOURCES));
}

}  // namespace
}  // namespace slimcuda::testing
