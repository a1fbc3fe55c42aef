// SPDX-License-Identifier: Apache-2.0
#pragma once

// The settings' values (config.h is its interface). A class of its own so that tests can
// build one from an environment of their choosing; the process has one, built from the
// real environment on first use.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "csrc/config/settings.h"
#include "slimcuda/error.h"

namespace slimcuda::config::detail {

class Store {
 public:
  /// getenv's shape; nullptr: an empty environment.
  using Lookup = const char* (*)(const char* name);

  /// Reads every setting's variable through `env` now. Bad values are kept as messages
  /// (take_reports). Throws std::bad_alloc.
  explicit Store(Lookup env);
  Store(const Store&) = delete;  // one set of values, referred to by address
  Store& operator=(const Store&) = delete;

  /// The value in force of a non-Path setting; counts as a use.
  [[nodiscard]] uint64_t value(Key key) noexcept;
  /// The value in force of a Path setting; counts as a use. Throws std::bad_alloc.
  [[nodiscard]] std::string path(Key key);
  /// config::set for one setting (see config.h).
  [[nodiscard]] Error set(Key key, const char* value, std::string* why) noexcept;
  /// The canonical text of the value in force; not a use. Throws std::bad_alloc.
  [[nodiscard]] std::string text(Key key);
  /// Whether a read_once setting has been used.
  [[nodiscard]] bool used(Key key) const noexcept;

  /// The messages about bad values found in the environment, once: a second call returns none.
  [[nodiscard]] std::vector<std::string> take_reports();

 private:
  struct Slot {
    std::atomic<uint64_t> value{0};  // in force (non-Path); written under mu_
    std::atomic<bool> used{false};   // read_once only; set under mu_
    bool from_env = false;           // the environment set it (validly)
    uint64_t env_value = 0;
    std::string env_path;
    bool overridden = false;
    std::string override_path;
  };

  Slot& slot(Key key) noexcept { return slots_[static_cast<size_t>(key)]; }
  void mark_used(const SettingInfo& info, Slot& s) noexcept;
  std::string path_locked(const SettingInfo& info, const Slot& s) const;

  std::array<Slot, kSettingCount> slots_;
  std::vector<std::string> reports_;
  mutable std::mutex mu_;
};

/// The process's store, built on first use from the environment; its bad-value reports
/// are logged then, once.
[[nodiscard]] Store& store() noexcept;

}  // namespace slimcuda::config::detail
