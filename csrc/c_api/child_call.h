// SPDX-License-Identifier: Apache-2.0
#pragma once

// One C ABI call in a forked child, for tests whose failure mode is a hang or a crash
// (bounded_work_test, file_reader_test): the parent survives either and says which.

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "slimcuda/slimcuda.h"

namespace slimcuda::testing {

/// The child's exit status when the call's last-error message lacks the wanted text.
inline constexpr int kChildMessageMismatch = 200;

/// A "code N" result, as call_in_child returns it.
inline std::string code(int32_t c) { return "code " + std::to_string(c); }

/// Long enough that only a hang reaches it (a call answers in milliseconds): no timing of
/// a healthy call is asserted.
inline constexpr int kChildHangSeconds = 60;

/// Runs `before` (may be empty) then `call` in a child, which exits with the call's code,
/// or kChildMessageMismatch when the last-error message after the call lacks `message`
/// (empty: any). Returns "code N", "signal N", "message lacks ...", "timed out (hung)" or
/// "fork failed". The parent waits on a pipe the child holds open (it closes when the
/// child ends), not a poll loop.
inline std::string call_in_child(const std::function<int32_t()>& call, const std::string& message = "",
                                 const std::function<void()>& before = {}) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (before) before();
    const int32_t rc = call();
    if (std::string(slimcuda_last_error_message()).find(message) == std::string::npos) {
      std::fprintf(stderr, "message: %s\n", slimcuda_last_error_message());
      _exit(kChildMessageMismatch);
    }
    _exit(rc);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return "fork failed";
  }
  pollfd p{fds[0], POLLIN, 0};
  int ready = 0;
  while ((ready = poll(&p, 1, kChildHangSeconds * 1000)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  int status = 0;
  if (ready == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return "timed out (hung)";
  }
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) == kChildMessageMismatch) return "message lacks \"" + message + "\"";
  return "code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace slimcuda::testing
