// SPDX-License-Identifier: Apache-2.0
#pragma once

// The table of the library's settings: every one declared once (settings.cc), with its
// name, type, default and meaning. The environment variable, the slimcuda_config_set name
// and the row of docs/configuration.md are all this entry.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace slimcuda::config {

/// One per setting, in the table's order.
enum class Key : uint8_t {
  CachingAllocator,
  StagingThreshold,
  StagingChunk,
  StagingBuffers,
  StagingThreads,
  StagingFlags,
  Conv,
  CudnnBenchmark,
  Attention,
  GemmPlain,
  CpuThreads,
  CublasLtLibrary,
  CudnnLibrary,
  LogLevel,
  Tmpdir,
  kCount
};

inline constexpr size_t kSettingCount = static_cast<size_t>(Key::kCount);

enum class Type : uint8_t {
  Bool,     ///< 1/true/yes/on or 0/false/no/off, any case (parse.h)
  Integer,  ///< a non-negative decimal number, up to 2^64 - 1
  Enum,     ///< one of the entry's words, any case; the value is the word's index
  Path,     ///< any text
};

struct SettingInfo {
  Key key;
  const char* name;  ///< the environment variable, also the name slimcuda_config_set takes
  Type type;
  /// The default as text, parsed like any value (an empty Path: none). With
  /// computed_default, only what docs/configuration.md says.
  const char* default_text;
  /// Enum: the allowed words in value order, nullptr-terminated; else nullptr.
  const char* const* words;
  /// Read once, at its first use; later changes fail (the reason is in `meaning`).
  bool read_once;
  const char* meaning;  ///< one line, Markdown, for docs/configuration.md
  /// A default that depends on the machine (nullptr: default_text's value).
  uint64_t (*computed_default)();
};

/// The words of the enum settings, in the order of the C++ enums that read them (their
/// readers static_assert it).
inline constexpr const char* kConvWords[] = {"legacy", "frontend", "auto", nullptr};
inline constexpr const char* kAttentionWords[] = {"auto", "kernel", "cudnn", nullptr};
inline constexpr const char* kLogLevelWords[] = {"debug", "info", "warning", "error", nullptr};

/// Every setting, in Key order.
[[nodiscard]] const std::array<SettingInfo, kSettingCount>& settings() noexcept;

[[nodiscard]] inline const SettingInfo& info(Key key) noexcept { return settings()[static_cast<size_t>(key)]; }

/// The setting called `name` (exact spelling); nullptr when there is none.
[[nodiscard]] const SettingInfo* find(std::string_view name) noexcept;

}  // namespace slimcuda::config
