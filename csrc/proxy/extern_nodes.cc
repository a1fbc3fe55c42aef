// SPDX-License-Identifier: Apache-2.0
#include "csrc/proxy/extern_nodes.h"

#include <nlohmann/json.hpp>

#include <utility>

#include "slimcuda/last_error.h"

namespace slimcuda::proxy {
namespace {

using nlohmann::json;

// A node is {"name", "node": {"target", "inputs": [{"name", "arg": {form: value}}]}}: a
// value sits at most 8 levels down; anything deeper is not a node file.
constexpr int kMaxDepth = 12;

struct Where {
  size_t node;
  const std::string* target;  // null until read
  const char* field;
};

Error bad(const Where& w, const char* what) {
  return set_last_error(Error::InvalidProgram, "extern-kernel node %zu (%s): %s: %s", w.node,
                        w.target != nullptr ? w.target->c_str() : "?", w.field, what);
}

Error text_of(const json& j, const Where& w, std::string* out) {
  if (!j.is_string()) return bad(w, "not a string");
  const auto& s = j.get_ref<const json::string_t&>();
  if (s.size() > kMaxNodeText) return bad(w, "a string longer than 1024 bytes");
  *out = s;
  return Error::Ok;
}

Error list_of(const json& j, const Where& w, size_t* n) {
  if (!j.is_array()) return bad(w, "not a list");
  if (j.size() > kMaxListItems) return bad(w, "a list of more than 65536 items");
  *n = j.size();
  return Error::Ok;
}

Error tensor_name(const json& j, const Where& w) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return bad(w, "a tensor without a name");
  return Error::Ok;
}

// {"as_name": "s0"} or {"as_int": 3}: a symbolic int; the generated code passes its value.
Error sym_int(const json& j, const Where& w) {
  if (j.is_object() && j.size() == 1 && (j.contains("as_name") || (j.contains("as_int") && j["as_int"].is_number())))
    return Error::Ok;
  return bad(w, "a symbolic int is {\"as_name\": ...} or {\"as_int\": N}");
}

Error numbers(const json& j, const Where& w, NodeArg* a, bool integral) {
  SLIMCUDA_RETURN_IF_ERROR(list_of(j, w, &a->length));
  for (const json& x : j) {
    if (integral ? !x.is_number_integer() : !x.is_number()) return bad(w, "a list item of the wrong type");
    if (integral) {
      a->ints.push_back(x.get<int64_t>());
    } else {
      a->floats.push_back(x.get<double>());
    }
  }
  return Error::Ok;
}

Error device(const json& v, const Where& w, NodeArg* a) {
  if (!v.is_object() || !v.contains("type")) return bad(w, "a device without a type");
  SLIMCUDA_RETURN_IF_ERROR(text_of(v["type"], w, &a->string_value));
  a->int_value = -1;
  if (v.contains("index") && !v["index"].is_null()) {
    if (!v["index"].is_number_integer()) return bad(w, "a device index that is not an integer");
    a->int_value = v["index"].get<int64_t>();
  }
  return Error::Ok;
}

Error optional_tensors(const json& v, const Where& w, NodeArg* a) {
  SLIMCUDA_RETURN_IF_ERROR(list_of(v, w, &a->length));
  for (const json& item : v) {
    if (!item.is_object() || item.size() != 1) return bad(w, "an optional tensor is {\"as_tensor\"|\"as_none\": ...}");
    if (item.contains("as_tensor")) {
      SLIMCUDA_RETURN_IF_ERROR(tensor_name(item["as_tensor"], w));
      a->present.push_back(true);
    } else if (item.contains("as_none")) {
      a->present.push_back(false);
    } else {
      return bad(w, "an optional tensor is {\"as_tensor\"|\"as_none\": ...}");
    }
  }
  return Error::Ok;
}

Error scalar_forms(const std::string& form, const json& v, const Where& w, NodeArg* a, bool* known) {
  *known = true;
  if (form == "as_int" || form == "as_scalar_type" || form == "as_memory_format" || form == "as_layout") {
    if (!v.is_number_integer()) return bad(w, "not an integer");
    a->int_value = v.get<int64_t>();
    a->form = form == "as_int"             ? ArgForm::Int
              : form == "as_scalar_type"   ? ArgForm::ScalarType
              : form == "as_memory_format" ? ArgForm::MemoryFormat
                                           : ArgForm::Layout;
  } else if (form == "as_float") {
    if (!v.is_number()) return bad(w, "not a number");
    a->form = ArgForm::Float;
    a->float_value = v.get<double>();
  } else if (form == "as_bool") {
    if (!v.is_boolean()) return bad(w, "not a bool");
    a->form = ArgForm::Bool;
    a->bool_value = v.get<bool>();
  } else if (form == "as_string") {
    a->form = ArgForm::String;
    SLIMCUDA_RETURN_IF_ERROR(text_of(v, w, &a->string_value));
  } else if (form == "as_sym_int") {
    a->form = ArgForm::SymInt;
    SLIMCUDA_RETURN_IF_ERROR(sym_int(v, w));
  } else if (form == "as_device") {
    a->form = ArgForm::Device;
    SLIMCUDA_RETURN_IF_ERROR(device(v, w, a));
  } else if (form == "as_none") {
    a->form = ArgForm::None;
  } else if (form == "as_tensor") {
    a->form = ArgForm::Tensor;
    SLIMCUDA_RETURN_IF_ERROR(tensor_name(v, w));
  } else if (form == "as_optional_tensor") {
    a->form = ArgForm::OptionalTensor;
    if (!v.is_object() || v.size() != 1 || !(v.contains("as_tensor") || v.contains("as_none")))
      return bad(w, "an optional tensor is {\"as_tensor\"|\"as_none\": ...}");
    a->bool_value = v.contains("as_tensor");
    if (a->bool_value) SLIMCUDA_RETURN_IF_ERROR(tensor_name(v["as_tensor"], w));
  } else {
    *known = false;
  }
  return Error::Ok;
}

Error list_forms(const std::string& form, const json& v, const Where& w, NodeArg* a, bool* known) {
  *known = true;
  if (form == "as_tensors") {
    a->form = ArgForm::Tensors;
    SLIMCUDA_RETURN_IF_ERROR(list_of(v, w, &a->length));
    for (const json& t : v) SLIMCUDA_RETURN_IF_ERROR(tensor_name(t, w));
  } else if (form == "as_optional_tensors") {
    a->form = ArgForm::OptionalTensors;
    SLIMCUDA_RETURN_IF_ERROR(optional_tensors(v, w, a));
  } else if (form == "as_ints") {
    a->form = ArgForm::Ints;
    SLIMCUDA_RETURN_IF_ERROR(numbers(v, w, a, true));
  } else if (form == "as_floats") {
    a->form = ArgForm::Floats;
    SLIMCUDA_RETURN_IF_ERROR(numbers(v, w, a, false));
  } else if (form == "as_sym_ints") {
    a->form = ArgForm::SymInts;
    SLIMCUDA_RETURN_IF_ERROR(list_of(v, w, &a->length));
    for (const json& x : v) {
      if (!x.is_number_integer()) SLIMCUDA_RETURN_IF_ERROR(sym_int(x, w));
    }
  } else if (form == "as_bools") {
    a->form = ArgForm::Bools;
    SLIMCUDA_RETURN_IF_ERROR(list_of(v, w, &a->length));
    for (const json& x : v) {
      if (!x.is_boolean()) return bad(w, "a list item that is not a bool");
      a->bools.push_back(x.get<bool>());
    }
  } else if (form == "as_strings") {
    a->form = ArgForm::Strings;
    SLIMCUDA_RETURN_IF_ERROR(list_of(v, w, &a->length));
    for (const json& x : v) {
      a->strings.emplace_back();
      SLIMCUDA_RETURN_IF_ERROR(text_of(x, w, &a->strings.back()));
    }
  } else {
    *known = false;
  }
  return Error::Ok;
}

// {form: value}: exactly one form.
Error argument(const json& j, const Where& w, NodeArg* a) {
  if (!j.is_object() || j.size() != 1) return bad(w, "an argument is an object of exactly one form");
  const std::string& form = j.begin().key();
  const json& v = j.begin().value();
  bool known = false;
  SLIMCUDA_RETURN_IF_ERROR(scalar_forms(form, v, w, a, &known));
  if (!known) SLIMCUDA_RETURN_IF_ERROR(list_forms(form, v, w, a, &known));
  if (known) return Error::Ok;
  if (form == "as_custom_obj" || form == "as_graph" || form == "as_sym_float" || form == "as_sym_bool" ||
      form == "as_sym_floats" || form == "as_sym_bools") {
    return set_last_error(Error::NotSupported,
                          "extern-kernel node %zu (%s): %s: arguments of form %s are not supported", w.node,
                          w.target != nullptr ? w.target->c_str() : "?", w.field, form.c_str());
  }
  return bad(w, ("an unknown argument form " + form.substr(0, 64)).c_str());
}

Error node(const json& entry, size_t index, ExternNode* out) {
  Where w{index, nullptr, "node"};
  if (!entry.is_object() || !entry.contains("node") || !entry["node"].is_object()) return bad(w, "not a node");
  if (entry.contains("name") && entry["name"].is_string()) {
    w.field = "name";
    SLIMCUDA_RETURN_IF_ERROR(text_of(entry["name"], w, &out->name));
  }
  const json& n = entry["node"];
  w.field = "target";
  if (!n.contains("target")) return bad(w, "missing");
  SLIMCUDA_RETURN_IF_ERROR(text_of(n["target"], w, &out->target));
  w.target = &out->target;
  w.field = "inputs";
  size_t count = 0;
  if (!n.contains("inputs") || !n.contains("outputs")) return bad(w, "a node has inputs and outputs");
  SLIMCUDA_RETURN_IF_ERROR(list_of(n["inputs"], w, &count));
  if (count > kMaxNodeArgs) return bad(w, "more than 256 arguments");
  for (const json& in : n["inputs"]) {
    NodeArg a;
    if (!in.is_object() || !in.contains("name") || !in.contains("arg")) return bad(w, "an input is {name, arg}");
    SLIMCUDA_RETURN_IF_ERROR(text_of(in["name"], w, &a.name));
    SLIMCUDA_RETURN_IF_ERROR(argument(in["arg"], w, &a));
    out->inputs.push_back(std::move(a));
  }
  w.field = "outputs";
  SLIMCUDA_RETURN_IF_ERROR(list_of(n["outputs"], w, &count));
  if (count > kMaxNodeArgs) return bad(w, "more than 256 outputs");
  for (const json& o : n["outputs"]) {
    NodeArg a;
    SLIMCUDA_RETURN_IF_ERROR(argument(o, w, &a));
    out->outputs.push_back(std::move(a));
  }
  return Error::Ok;
}

}  // namespace

const char* arg_form_name(ArgForm form) noexcept {
  static const char* const names[] = {"as_tensor",
                                      "as_tensors",
                                      "as_optional_tensors",
                                      "as_optional_tensor",
                                      "as_int",
                                      "as_ints",
                                      "as_sym_int",
                                      "as_sym_ints",
                                      "as_float",
                                      "as_floats",
                                      "as_bool",
                                      "as_bools",
                                      "as_string",
                                      "as_strings",
                                      "as_scalar_type",
                                      "as_memory_format",
                                      "as_layout",
                                      "as_device",
                                      "as_none"};
  const auto i = static_cast<size_t>(form);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

bool serialized_scalar_type(int64_t code, ScalarType* out) noexcept {
  switch (code) {
    case 1:
      *out = ScalarType::Byte;
      return true;
    case 2:
      *out = ScalarType::Char;
      return true;
    case 3:
      *out = ScalarType::Short;
      return true;
    case 4:
      *out = ScalarType::Int;
      return true;
    case 5:
      *out = ScalarType::Long;
      return true;
    case 6:
      *out = ScalarType::Half;
      return true;
    case 7:
      *out = ScalarType::Float;
      return true;
    case 8:
      *out = ScalarType::Double;
      return true;
    case 12:
      *out = ScalarType::Bool;
      return true;
    case 13:
      *out = ScalarType::BFloat16;
      return true;
    default:
      return false;
  }
}

Error parse_extern_nodes(std::string_view text, std::vector<ExternNode>* out) {
  SLIMCUDA_CHECK_OR_RETURN(text.size() <= kMaxExternNodesBytes, Error::InvalidProgram,
                           "extern-kernel nodes: %zu bytes (at most %llu)", text.size(),
                           static_cast<unsigned long long>(kMaxExternNodesBytes));
  bool too_deep = false;
  const json::parser_callback_t limit = [&too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return depth <= kMaxDepth;
  };
  const json j = json::parse(text.begin(), text.end(), limit, /*allow_exceptions=*/false);
  SLIMCUDA_CHECK_OR_RETURN(!j.is_discarded(), Error::InvalidProgram, "extern-kernel nodes: not JSON");
  SLIMCUDA_CHECK_OR_RETURN(!too_deep, Error::InvalidProgram, "extern-kernel nodes: nested deeper than %d levels",
                           kMaxDepth);
  SLIMCUDA_CHECK_OR_RETURN(j.is_object() && j.contains("nodes") && j["nodes"].is_array(), Error::InvalidProgram,
                           "extern-kernel nodes: not {\"nodes\": [...]}");
  const json& nodes = j["nodes"];
  SLIMCUDA_CHECK_OR_RETURN(nodes.size() <= kMaxExternNodes, Error::InvalidProgram,
                           "extern-kernel nodes: %zu nodes (at most %zu)", nodes.size(), kMaxExternNodes);
  std::vector<ExternNode> result(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) SLIMCUDA_RETURN_IF_ERROR(node(nodes[i], i, &result[i]));
  *out = std::move(result);
  return Error::Ok;
}

}  // namespace slimcuda::proxy
