// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/op_schema.h"

#include <cctype>
#include <cstdlib>
#include <utility>

#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

// A cursor over the schema text, skipping spaces between tokens.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool eat(std::string_view word) {
    skip();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  char peek() {
    skip();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  // Letters, digits and underscores (and `::` inside a qualified name when `qualified`).
  std::string word(bool qualified = false) {
    skip();
    const size_t start = i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') {
        ++i_;
      } else if (qualified && c == ':' && i_ + 1 < s_.size() && s_[i_ + 1] == ':') {
        i_ += 2;
      } else {
        break;
      }
    }
    return std::string(s_.substr(start, i_ - start));
  }
  // Everything up to the next `,` or `)` outside brackets and quotes: a default's text.
  std::string until_separator() {
    skip();
    const size_t start = i_;
    int depth = 0;
    char quote = '\0';
    for (; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (quote != '\0') {
        if (c == quote) quote = '\0';
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '[') {
        ++depth;
      } else if (c == ']') {
        --depth;
      } else if ((c == ',' || c == ')') && depth == 0) {
        break;
      }
    }
    std::string_view t = s_.substr(start, i_ - start);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    return std::string(t);
  }
  [[nodiscard]] bool done() {
    skip();
    return i_ == s_.size();
  }
  [[nodiscard]] size_t pos() const { return i_; }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

Error fail(std::string_view text, const Cursor& c, const char* what) {
  return set_last_error(Error::InvalidArgument, "op schema '%.*s': %s at offset %zu", static_cast<int>(text.size()),
                        text.data(), what, c.pos());
}

bool base_type(const std::string& base, bool list, bool element_optional, SchemaType* out) {
  struct Row {
    const char* name;
    SchemaType one;
    SchemaType many;
  };
  static const Row rows[] = {
      {"Tensor", SchemaType::Tensor, SchemaType::TensorList},
      {"int", SchemaType::Int, SchemaType::IntList},
      {"SymInt", SchemaType::Int, SchemaType::IntList},
      {"float", SchemaType::Float, SchemaType::FloatList},
      {"bool", SchemaType::Bool, SchemaType::BoolList},
      {"str", SchemaType::String, SchemaType::None},
      {"Scalar", SchemaType::Scalar, SchemaType::None},
      {"ScalarType", SchemaType::ScalarType, SchemaType::None},
      {"Layout", SchemaType::Layout, SchemaType::None},
      {"Device", SchemaType::Device, SchemaType::None},
      {"MemoryFormat", SchemaType::MemoryFormat, SchemaType::None},
  };
  for (const Row& r : rows) {
    if (base != r.name) continue;
    if (!list) {
      *out = r.one;
      return true;
    }
    if (element_optional) {
      if (r.one != SchemaType::Tensor) return false;
      *out = SchemaType::OptionalTensorList;
      return true;
    }
    *out = r.many;
    return r.many != SchemaType::None;
  }
  return false;
}

// One type: a base name, an optional alias annotation ("(a!)", "(a)", "(a -> *)", "(a|b)"),
// then `?` and `[N]`
// suffixes in either order ("Tensor?[]" is a list of optional tensors, "int[]?" an optional
// list).
Error parse_type(std::string_view text, Cursor& c, SchemaArg* arg) {
  const std::string base = c.word();
  if (base.empty()) return fail(text, c, "a type expected");
  if (base == "None") {
    arg->type = SchemaType::None;
    return Error::Ok;
  }
  if (c.eat('(')) {
    while (c.peek() != ')' && c.peek() != '\0') {
      if (c.eat('!')) {
        arg->mutated = true;
      } else if (c.word().empty() && !c.eat('|') && !c.eat('-') && !c.eat('>') && !c.eat('*')) {
        return fail(text, c, "an alias annotation expected");
      }
    }
    if (!c.eat(')')) return fail(text, c, "')' expected after the alias annotation");
  }
  bool list = false, element_optional = false;
  for (;;) {
    if (c.eat('?')) {
      if (list) {
        arg->optional = true;
      } else {
        element_optional = true;
      }
    } else if (c.eat('[')) {
      if (list) return fail(text, c, "nested lists are not schema types");
      list = true;
      c.word();  // a fixed size ("int[2]") binds like any list
      if (!c.eat(']')) return fail(text, c, "']' expected");
    } else {
      break;
    }
  }
  if (!list && element_optional) {
    arg->optional = true;
    element_optional = false;
  }
  if (!base_type(base, list, element_optional, &arg->type)) return fail(text, c, "unknown type");
  return Error::Ok;
}

// A default's text: None, True, False, a number, a quoted string, a list of numbers, or a
// bare word (an enum's name: "contiguous_format"), kept as text.
Error parse_default(std::string_view text, const Cursor& c, const std::string& v, SchemaDefault* d) {
  d->present = true;
  if (v == "None") {
    d->none = true;
  } else if (v == "True" || v == "False") {
    d->boolean = v == "True";
    d->number = d->boolean ? 1.0 : 0.0;
  } else if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    d->text = v.substr(1, v.size() - 2);
  } else if (!v.empty() && v.front() == '[') {
    if (v.back() != ']') return fail(text, c, "a list default must end with ']'");
    std::string body = v.substr(1, v.size() - 2);
    const char* p = body.c_str();
    while (*p != '\0') {
      while (*p == ' ' || *p == ',') ++p;
      if (*p == '\0') break;
      char* end = nullptr;
      const double x = std::strtod(p, &end);
      if (end == p) return fail(text, c, "a list default holds a number per item");
      d->numbers.push_back(x);
      p = end;
    }
  } else if (!v.empty()) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end != v.c_str() && *end == '\0') {
      d->number = x;
    } else {
      d->text = v;
    }
  } else {
    return fail(text, c, "an empty default");
  }
  return Error::Ok;
}

Error parse_args(std::string_view text, Cursor& c, bool returns, std::vector<SchemaArg>* out) {
  bool keyword = false;
  if (c.eat(')')) return Error::Ok;
  for (;;) {
    if (!returns && c.eat('*')) {
      keyword = true;
    } else {
      SchemaArg a;
      SLIMCUDA_RETURN_IF_ERROR(parse_type(text, c, &a));
      a.keyword = keyword;
      a.name = c.word();
      if (a.name.empty() && !returns) return fail(text, c, "an argument name expected");
      if (!returns && c.eat('=')) SLIMCUDA_RETURN_IF_ERROR(parse_default(text, c, c.until_separator(), &a.def));
      out->push_back(std::move(a));
    }
    if (c.eat(')')) return Error::Ok;
    if (!c.eat(',')) return fail(text, c, "',' or ')' expected");
  }
}

}  // namespace

Error parse_op_schema(std::string_view text, OpSchema* out) {
  Cursor c(text);
  OpSchema s;
  s.name = c.word(true);
  if (s.name.find("::") == std::string::npos) return fail(text, c, "a qualified name (ns::op) expected");
  if (c.eat('.')) s.overload = c.word();
  if (!c.eat('(')) return fail(text, c, "'(' expected");
  SLIMCUDA_RETURN_IF_ERROR(parse_args(text, c, false, &s.args));
  if (!c.eat("->")) return fail(text, c, "'->' expected");
  if (c.eat('(')) {
    SLIMCUDA_RETURN_IF_ERROR(parse_args(text, c, true, &s.returns));
  } else {
    SchemaArg r;
    SLIMCUDA_RETURN_IF_ERROR(parse_type(text, c, &r));
    r.name = c.word();
    s.returns.push_back(std::move(r));
  }
  if (!c.done()) return fail(text, c, "text after the returns");
  *out = std::move(s);
  return Error::Ok;
}

}  // namespace slimcuda::proxy
