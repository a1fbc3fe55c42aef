// SPDX-License-Identifier: Apache-2.0
// Hostile .pt2 archives cost what they weigh (docs/hostile-archives.md), from
// testdata/hostile_pt2.json (go/slimcuda/hostile_test.go runs the same cases): each load, from
// the file and from memory, runs in a forked child that measures its own peak resident memory
// (getrusage's ru_maxrss against its resident size just before the load), and must give the
// fixture's code and message within max_extra_mb of extra peak memory.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/c_api/c_api_fixtures.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

const bool kOwnsFixture = own_fixture("hostile_pt2.json");

// What the child saw: the load's code and message, and its extra peak memory.
struct Outcome {
  int32_t code = -1;
  long long extra_kb = -1;
  std::string message;
};

long long resident_kb() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = -1;
  if (std::fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The child: one load, then its code, extra peak (KiB) and message down the pipe.
[[noreturn]] void child(int fd, const std::string& path, const std::vector<uint8_t>* bytes) {
  const long long before = resident_kb();
  slimcuda_model* m = nullptr;
  const int32_t code = bytes == nullptr ? slimcuda_model_load_file(path.c_str(), -1, -1, &m)
                                        : slimcuda_model_load(bytes->data(), bytes->size(), -1, -1, &m);
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  const std::string message = code == SLIMCUDA_OK ? "" : slimcuda_last_error_message();
  slimcuda_model_free(m);
  const long long extra = before < 0 ? -1 : static_cast<long long>(ru.ru_maxrss) - before;
  const bool ok = write_all(fd, &code, sizeof code) && write_all(fd, &extra, sizeof extra) &&
                  write_all(fd, message.data(), message.size());
  ::_exit(ok ? 0 : 3);
}

Outcome load_in_child(const std::string& path, const std::vector<uint8_t>* bytes) {
  Outcome o;
  int fds[2];
  if (::pipe(fds) != 0) return o;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], path, bytes);
  }
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return o;
  if (got.size() < sizeof o.code + sizeof o.extra_kb) return o;
  std::memcpy(&o.code, got.data(), sizeof o.code);
  std::memcpy(&o.extra_kb, got.data() + sizeof o.code, sizeof o.extra_kb);
  o.message = got.substr(sizeof o.code + sizeof o.extra_kb);
  return o;
}

TEST(HostilePt2, RefusedWithinTheirMemoryBound) {
  for (const Case& c : cases("hostile_pt2.json", "load")) {
    SCOPED_TRACE(c.name);
    if (!begin_case(c)) continue;
    const std::string path = fixture_relative("hostile_pt2.json", c.data.at("file"));
    const std::vector<uint8_t> bytes = read_bytes(path);
    const long long bound_kb = c.data.at("max_extra_mb").get<long long>() * 1024;
    for (const bool from_file : {true, false}) {
      SCOPED_TRACE(from_file ? "file" : "memory");
      const Outcome o = load_in_child(path, from_file ? nullptr : &bytes);
      ASSERT_GE(o.extra_kb, 0) << "the child reported nothing (killed?)";
      expect_code(c, o.code, o.message);
      // Under ThreadSanitizer every allocation carries shadow memory of several times its
      // size (CI, 2026-12-03: 164 MiB for what costs 35 MiB without it): the bound is
      // measured in the plain and ASan builds; the codes and messages are checked here too.
      if (!kThreadSanitizer) {
        EXPECT_LE(o.extra_kb, bound_kb) << "peak extra memory " << o.extra_kb << " KiB";
      }
      // The measurements docs/hostile-archives.md's table quotes.
      std::printf("hostile: %s (%zu bytes, %s): %.1f MiB extra peak: %s\n", c.name.c_str(), bytes.size(),
                  from_file ? "file" : "memory", static_cast<double>(o.extra_kb) / 1024, o.message.c_str());
    }
  }
  SLIMCUDA_SKIP_IF_NO_CASE_RAN();
}

}  // namespace
}  // namespace slimcuda::testing
