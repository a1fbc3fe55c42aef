// SPDX-License-Identifier: Apache-2.0
#include "csrc/config/parse.h"

#include <cstddef>

namespace slimcuda::config {
namespace {

bool same_word(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::optional<uint64_t> parse_integer(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;  // past 2^64 - 1
    v = v * 10 + digit;
  }
  return v;
}

}  // namespace

std::optional<bool> parse_bool(std::string_view text) noexcept {
  for (const char* w : {"1", "true", "yes", "on"}) {
    if (same_word(text, w)) return true;
  }
  for (const char* w : {"0", "false", "no", "off"}) {
    if (same_word(text, w)) return false;
  }
  return std::nullopt;
}

std::optional<uint64_t> parse(const SettingInfo& setting, std::string_view text) noexcept {
  if (text.empty()) return default_value(setting);
  switch (setting.type) {
    case Type::Bool: {
      const std::optional<bool> b = parse_bool(text);
      if (!b) return std::nullopt;
      return *b ? 1 : 0;
    }
    case Type::Integer:
      return parse_integer(text);
    case Type::Enum:
      for (uint64_t i = 0; setting.words[i] != nullptr; ++i) {
        if (same_word(text, setting.words[i])) return i;
      }
      return std::nullopt;
    case Type::Path:
      return 0;
  }
  return std::nullopt;
}

uint64_t default_value(const SettingInfo& setting) noexcept {
  if (setting.computed_default != nullptr) return setting.computed_default();
  if (setting.type == Type::Path || setting.default_text[0] == '\0') return 0;
  // A non-empty text never asks for the default again. The table's defaults parse
  // (config_test checks every one); 0 stands in for one that did not.
  return parse(setting, setting.default_text).value_or(0);
}

std::string expected(const SettingInfo& setting) {
  switch (setting.type) {
    case Type::Bool:
      return "1/true/yes/on or 0/false/no/off";
    case Type::Integer:
      return "a non-negative decimal integer";
    case Type::Enum: {
      std::string s = "one of ";
      for (size_t i = 0; setting.words[i] != nullptr; ++i) {
        if (i > 0) s += ", ";
        s += setting.words[i];
      }
      return s;
    }
    case Type::Path:
      break;
  }
  return "a path";
}

std::string to_text(const SettingInfo& setting, uint64_t value) {
  switch (setting.type) {
    case Type::Bool:
      return value != 0 ? "1" : "0";
    case Type::Integer:
      return std::to_string(value);
    case Type::Enum:
      for (uint64_t i = 0; setting.words[i] != nullptr; ++i) {
        if (i == value) return setting.words[i];
      }
      return std::to_string(value);
    case Type::Path:
      break;
  }
  return "";
}

}  // namespace slimcuda::config
