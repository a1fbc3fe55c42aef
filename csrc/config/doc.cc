// SPDX-License-Identifier: Apache-2.0
#include "csrc/config/doc.h"

#include "csrc/config/settings.h"

namespace slimcuda::config {
namespace {

std::string type_cell(const SettingInfo& s) {
  switch (s.type) {
    case Type::Bool:
      return "bool";
    case Type::Integer:
      return "integer";
    case Type::Enum: {
      std::string cell = "one of";
      for (size_t i = 0; s.words[i] != nullptr; ++i) cell += std::string(i > 0 ? ", `" : " `") + s.words[i] + "`";
      return cell;
    }
    case Type::Path:
      break;
  }
  return "path";
}

std::string default_cell(const SettingInfo& s) {
  if (s.computed_default != nullptr) return s.default_text;
  if (s.default_text[0] == '\0') return "none";
  return std::string("`") + s.default_text + "`";
}

}  // namespace

std::string markdown_table() {
  std::string t =
      "| Setting | Type | Default | Read | Meaning |\n"
      "|---|---|---|---|---|\n";
  for (const SettingInfo& s : settings()) {
    t += std::string("| `") + s.name + "` | " + type_cell(s) + " | " + default_cell(s) + " | " +
         (s.read_once ? "once" : "each use") + " | " + s.meaning + " |\n";
  }
  return t;
}

bool with_table(const std::string& doc, std::string* out) {
  const size_t begin = doc.find(kDocBegin);
  if (begin == std::string::npos) return false;
  const size_t body = doc.find('\n', begin);
  const size_t end = doc.find(kDocEnd, begin);
  if (body == std::string::npos || end == std::string::npos || end < body) return false;
  *out = doc.substr(0, body + 1) + markdown_table() + doc.substr(end);
  return true;
}

}  // namespace slimcuda::config
