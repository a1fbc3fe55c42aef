// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one parser of setting values: the environment and slimcuda_config_set go through it
// alike, so a word means the same wherever it is written.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "csrc/config/settings.h"

namespace slimcuda::config {

/// The one truthiness rule: 1, true, yes, on are true; 0, false, no, off are false; any
/// case. Anything else (an empty text too) is not a boolean.
[[nodiscard]] std::optional<bool> parse_bool(std::string_view text) noexcept;

/// A value of `setting` from `text`: Bool 0 or 1, Integer the number, Enum the word's index,
/// Path 0 (its text is the value). An empty text is the setting's default. nullopt: a bad
/// value. Never allocates.
[[nodiscard]] std::optional<uint64_t> parse(const SettingInfo& setting, std::string_view text) noexcept;

/// The default's value (computed_default, else default_text parsed).
[[nodiscard]] uint64_t default_value(const SettingInfo& setting) noexcept;

/// What a value of `setting` must look like, for messages: "1/true/yes/on or
/// 0/false/no/off", "a non-negative decimal integer", "one of auto, frontend, legacy".
[[nodiscard]] std::string expected(const SettingInfo& setting);

/// The canonical text of a (non-Path) value: "1" or "0", the number, the word.
[[nodiscard]] std::string to_text(const SettingInfo& setting, uint64_t value);

}  // namespace slimcuda::config
