// SPDX-License-Identifier: Apache-2.0
#include "csrc/core/model_checks.h"

#include <atomic>
#include <mutex>

namespace slimcuda {
namespace {

std::atomic<uint64_t> g_count{0};

std::mutex& message_mutex() {
  static std::mutex* m = new std::mutex();  // never destroyed: models may fail checks at exit
  return *m;
}

std::string& message() {
  static std::string* s = new std::string();
  return *s;
}

}  // namespace

void note_check_failure(const std::string& text) noexcept {
  try {
    std::lock_guard<std::mutex> lock(message_mutex());
    message() = text;
  } catch (...) {  // out of memory: the count below still fails the run
  }
  g_count.fetch_add(1, std::memory_order_acq_rel);
}

uint64_t check_failure_count() noexcept { return g_count.load(std::memory_order_acquire); }

std::string last_check_failure() {
  std::lock_guard<std::mutex> lock(message_mutex());
  return message();
}

}  // namespace slimcuda
