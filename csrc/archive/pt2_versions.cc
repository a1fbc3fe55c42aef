// SPDX-License-Identifier: Apache-2.0
#include "csrc/archive/pt2_versions.h"

#include <array>
#include <cctype>
#include <new>
#include <string>
#include <vector>

#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// A version record is a few digits and maybe a newline; more than this is no record.
constexpr uint64_t kMaxRecordBytes = 32;

// Reads the decimal number in record `name` of the archive; *found false when it is absent.
Error read_record(const Pt2Archive& archive, const std::string& name, bool* found, int64_t* value) {
  *found = false;
  const ArchiveEntry* e = archive.find(name);
  if (e == nullptr) return Error::Ok;
  SLIMCUDA_CHECK_OR_RETURN(e->size <= kMaxRecordBytes, Error::InvalidProgram, "%s: %llu bytes, not a version number",
                           name.c_str(), static_cast<unsigned long long>(e->size));
  std::string text(static_cast<size_t>(e->size), '\0');
  SLIMCUDA_RETURN_IF_ERROR(archive.read(*e, 0, e->size, text.data()));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  int64_t v = 0;
  bool digits = !text.empty() && text.size() <= 18;
  for (const char c : text) {
    digits = digits && c >= '0' && c <= '9';
    if (!digits) break;  // at most 18 digits: v cannot overflow
    v = v * 10 + (c - '0');
  }
  SLIMCUDA_CHECK_OR_RETURN(digits, Error::InvalidProgram, "%s holds '%.*s', not a version number", name.c_str(),
                           static_cast<int>(text.size() > 16 ? 16 : text.size()), text.c_str());
  *found = true;
  *value = v;
  return Error::Ok;
}

// What slimcuda calls, as PyTorch 2.11 to 2.15 define it in the wrapper source (parameter
// types only, spelled as the source spells them).
struct KnownFunction {
  const char* name;
  std::vector<const char*> params;
};

const std::vector<KnownFunction>& known_functions() {
  static const auto* kKnown = [] {
    const char* h = "AOTInductorModelContainerHandle";
    const char* map = "AOTInductorConstantMapHandle";
    const std::vector<const char*> run = {h,
                                          "AtenTensorHandle*",
                                          "size_t",
                                          "AtenTensorHandle*",
                                          "size_t",
                                          "AOTInductorStreamHandle",
                                          "AOTIProxyExecutorHandle"};
    return new std::vector<KnownFunction>{
        {"AOTInductorModelContainerCreateWithDevice",
         {"AOTInductorModelContainerHandle*", "size_t", "const char*", "const char*"}},
        {"AOTInductorModelContainerDelete", {h}},
        {"AOTInductorModelContainerRun", run},
        {"AOTInductorModelContainerRunSingleThreaded", run},
        {"AOTInductorModelContainerGetNumInputs", {h, "size_t*"}},
        {"AOTInductorModelContainerGetNumOutputs", {h, "size_t*"}},
        {"AOTInductorModelContainerGetInputName", {h, "size_t", "const char**"}},
        {"AOTInductorModelContainerGetOutputName", {h, "size_t", "const char**"}},
        {"AOTInductorModelContainerGetNumConstants", {h, "size_t*"}},
        {"AOTInductorModelContainerGetConstantName", {h, "size_t", "const char**"}},
        {"AOTInductorModelContainerGetConstantOriginalFQN", {h, "size_t", "const char**"}},
        {"AOTInductorModelContainerGetConstantFromFolded", {h, "size_t", "bool*"}},
        {"AOTInductorModelContainerGetConstantDtype", {h, "size_t", "int32_t*"}},
        {"AOTInductorModelContainerGetConstantDataSize", {h, "size_t", "size_t*"}},
        {"AOTInductorModelContainerGetConstantType", {h, "size_t", "int32_t*"}},
        {"AOTInductorModelContainerExtractConstantsMap", {h, map, "bool"}},
        {"AOTInductorModelContainerUpdateUserManagedConstantBufferPairs",
         {h, "const AOTInductorConstantMapEntry*", "size_t", "bool", "bool"}},
        {"AOTInductorModelContainerUpdateUserManagedConstantBuffer", {h, map, "bool", "bool"}},
        {"AOTInductorModelContainerUpdateConstantBuffer", {h, map, "bool", "bool"}},
        {"AOTInductorModelContainerSwapConstantBuffer", {h}},
        {"AOTInductorModelContainerFreeInactiveConstantBuffer", {h}},
    };
  }();
  return *kKnown;
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The parameter list's text from just past '(' to its ')', comments dropped; false when the
// list does not end (no ')').
bool parameter_text(std::string_view s, size_t at, std::string* out) {
  out->clear();
  for (size_t i = at; i < s.size(); ++i) {
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string_view::npos) return false;
      out->push_back(' ');
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i + 2);
      if (i == std::string_view::npos) return false;
      ++i;
      out->push_back(' ');
    } else if (s[i] == ')') {
      return true;
    } else {
      out->push_back(s[i]);
    }
  }
  return false;
}

// One parameter's type: its words without the trailing name, "T *x" and "T* x" both "T*".
std::string parameter_type(std::string_view p) {
  std::vector<std::string> words;
  std::string w;
  for (const char c : p) {
    if (c == '*' || c == '&') {
      if (!w.empty()) words.push_back(w), w.clear();
      words.emplace_back(1, c);
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!w.empty()) words.push_back(w), w.clear();
    } else {
      w.push_back(c);
    }
  }
  if (!w.empty()) words.push_back(w);
  // The last word is the name when a type precedes it (AOTInductor names every parameter).
  if (words.size() > 1 && is_ident(words.back()[0])) words.pop_back();
  std::string t;
  for (const std::string& word : words) {
    if (!t.empty() && word != "*" && word != "&") t += ' ';
    t += word;
  }
  return t;
}

std::vector<std::string> parameter_types(const std::string& text) {
  std::vector<std::string> types;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string t =
        parameter_type(std::string_view(text).substr(start, comma == std::string::npos ? comma : comma - start));
    if (!t.empty() && t != "void") types.push_back(t);
    if (comma == std::string::npos) return types;
    start = comma + 1;
  }
}

std::string listed(const std::vector<std::string>& types) {
  std::string s = "(";
  for (const std::string& t : types) s += (s.size() > 1 ? ", " : "") + t;
  return s + ")";
}

// Each definition of `f` in the source ("AOTIRuntimeError <name>(" with any spacing) must
// take its known parameter types.
Error check_function(std::string_view source, const KnownFunction& f) {
  const std::string_view name = f.name;
  std::vector<std::string> want;
  for (const char* p : f.params) want.emplace_back(p);
  for (size_t at = source.find(name); at != std::string_view::npos; at = source.find(name, at + 1)) {
    size_t before = at;
    while (before > 0 && std::isspace(static_cast<unsigned char>(source[before - 1]))) --before;
    constexpr std::string_view kReturn = "AOTIRuntimeError";
    const bool defined_here = before != at && before >= kReturn.size() &&
                              source.substr(before - kReturn.size(), kReturn.size()) == kReturn &&
                              (before == kReturn.size() || !is_ident(source[before - kReturn.size() - 1]));
    size_t paren = at + name.size();
    while (paren < source.size() && std::isspace(static_cast<unsigned char>(source[paren]))) ++paren;
    if (!defined_here || paren >= source.size() || source[paren] != '(') continue;
    std::string text;
    SLIMCUDA_CHECK_OR_RETURN(parameter_text(source, paren + 1, &text), Error::InvalidProgram,
                             "the wrapper source's %s has no end to its parameter list", f.name);
    const std::vector<std::string> got = parameter_types(text);
    SLIMCUDA_CHECK_OR_RETURN(got == want, Error::NotSupported,
                             "the model's container C ABI is not one slimcuda knows: its %s takes %s; slimcuda "
                             "calls it as PyTorch %s to %s define it, %s (the .pt2 comes from another PyTorch "
                             "version, probably a newer one)",
                             f.name, listed(got).c_str(), kOldestPyTorch, kNewestPyTorch, listed(want).c_str());
  }
  return Error::Ok;
}

}  // namespace

Error check_pt2_versions(const Pt2Archive& archive, const Pt2Model& model) noexcept {
  try {
    // model.folder is "<root>data/aotinductor/<name>/"; the records lie in <root>.
    const std::string root = model.folder.substr(0, model.folder.rfind("data/aotinductor/"));
    bool found = false;
    int64_t v = 0;
    SLIMCUDA_RETURN_IF_ERROR(read_record(archive, root + "archive_version", &found, &v));
    SLIMCUDA_CHECK_OR_RETURN(!found || v == kPt2ArchiveVersion, Error::NotSupported,
                             "the .pt2 states archive_version %lld; slimcuda reads archive_version %lld, which "
                             "PyTorch %s to %s write: the archive comes from a PyTorch slimcuda does not know",
                             static_cast<long long>(v), static_cast<long long>(kPt2ArchiveVersion), kOldestPyTorch,
                             kNewestPyTorch);
    SLIMCUDA_RETURN_IF_ERROR(read_record(archive, root + ".data/version", &found, &v));
    SLIMCUDA_CHECK_OR_RETURN(!found || v <= kPt2MaxDataVersion, Error::NotSupported,
                             "the .pt2 states .data/version %lld; slimcuda reads .data/version up to %lld, which "
                             "PyTorch %s to %s write: the archive comes from a newer PyTorch than slimcuda knows",
                             static_cast<long long>(v), static_cast<long long>(kPt2MaxDataVersion), kOldestPyTorch,
                             kNewestPyTorch);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the archive's versions");
  }
}

Error check_container_abi(std::string_view wrapper_source) noexcept {
  try {
    for (const KnownFunction& f : known_functions()) SLIMCUDA_RETURN_IF_ERROR(check_function(wrapper_source, f));
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the container ABI");
  }
}

}  // namespace slimcuda
