// SPDX-License-Identifier: Apache-2.0
#pragma once

// The settings in force (the table: settings.h). A setting's value is, first found:
//   1. an override set from code (set(), slimcuda_config_set, Go's SetConfig);
//   2. its environment variable, non-empty;
//   3. its default.
// The environment is read once per process, for every setting at once, at the first read
// of any; a bad value there is logged once (log.h), naming the variable, the value and the
// default used instead. Thread-safe: any thread may read or set at any time.
//
// Readers call get_*() where they use the value, so an override applies to the next use.
// A read_once setting (settings.h) is fixed by its first use: setting it afterwards to
// another value fails with InvalidState.

#include <cstdint>
#include <string>
#include <string_view>

#include "csrc/config/settings.h"
#include "slimcuda/error.h"

namespace slimcuda::config {

/// The value of a Bool, Integer or Enum setting (Enum: the word's index in its words).
/// One or two atomic loads once the environment is read.
[[nodiscard]] bool get_bool(Key key) noexcept;
[[nodiscard]] uint64_t get_integer(Key key) noexcept;
[[nodiscard]] size_t get_enum(Key key) noexcept;

/// The value of a Path setting ("": none set and no default). Throws std::bad_alloc.
[[nodiscard]] std::string get_path(Key key);

/// Overrides the setting called `name` with `value` (parsed as in the environment; "" is
/// the default) or, for value nullptr, drops the override (back to the environment or the
/// default). Ok, or with *why set:
///  - InvalidArgument: no setting has that name, or the value is bad (nothing changes);
///  - InvalidState: a read_once setting already read, asked to change.
[[nodiscard]] Error set(std::string_view name, const char* value, std::string* why) noexcept;
[[nodiscard]] Error set(Key key, const char* value, std::string* why) noexcept;

/// The canonical text of the value in force ("1"/"0", a number, a word, a path) without
/// counting as a use. InvalidArgument (with *why) for an unknown name.
[[nodiscard]] Error get_text(std::string_view name, std::string* value, std::string* why) noexcept;

}  // namespace slimcuda::config
