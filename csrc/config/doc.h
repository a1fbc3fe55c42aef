// SPDX-License-Identifier: Apache-2.0
#pragma once

// docs/configuration.md's table of settings, generated from the table (settings.h), so
// the two cannot disagree (config_doc_test checks the file).

#include <string>

namespace slimcuda::config {

/// The markers around the generated table in docs/configuration.md.
inline constexpr char kDocBegin[] =
    "<!-- BEGIN settings table: generated from csrc/config/settings.cc by "
    "`bazel run //csrc/config:config_doc -- --update docs/configuration.md`; edit the table there -->";
inline constexpr char kDocEnd[] = "<!-- END settings table -->";

/// The Markdown table: one row per setting (name, type, default, when it is read, meaning).
[[nodiscard]] std::string markdown_table();

/// `doc` with what lies between the markers replaced by markdown_table(). False (and
/// *out untouched) when the markers are missing or out of order.
[[nodiscard]] bool with_table(const std::string& doc, std::string* out);

}  // namespace slimcuda::config
