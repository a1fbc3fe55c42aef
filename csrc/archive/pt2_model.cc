// SPDX-License-Identifier: Apache-2.0
#include "csrc/archive/pt2_model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <optional>

#include "csrc/core/limits.h"
#include "csrc/package/elf_check.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr std::string_view kModelsDir = "data/aotinductor/";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "<root>data/aotinductor/<name>/<file>" -> (root+dir, name); the model's files lie directly
// in its folder.
bool split_model_path(std::string_view path, std::string_view* folder, std::string_view* name) {
  const size_t at = path.find(kModelsDir);
  if (at == std::string_view::npos) return false;
  const std::string_view root = path.substr(0, at);  // empty, or one folder ("xdata/" is not it)
  if (!root.empty() && root.find('/') != root.size() - 1) return false;
  const size_t name_start = at + kModelsDir.size();
  const size_t slash = path.find('/', name_start);
  if (slash == std::string_view::npos || slash == name_start) return false;
  if (path.find('/', slash + 1) != std::string_view::npos || slash + 1 == path.size()) return false;
  *folder = path.substr(0, slash + 1);
  *name = path.substr(name_start, slash - name_start);
  return true;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + ("'" + n + "'");
  return s;
}

std::optional<ScalarType> dtype_named(std::string_view n) {
  static const std::map<std::string_view, ScalarType> kDtypes = {
      {"float32", ScalarType::Float},  {"float16", ScalarType::Half}, {"bfloat16", ScalarType::BFloat16},
      {"float64", ScalarType::Double}, {"int64", ScalarType::Long},   {"int32", ScalarType::Int},
      {"int16", ScalarType::Short},    {"int8", ScalarType::Char},    {"uint8", ScalarType::Byte},
      {"bool", ScalarType::Bool},
  };
  const auto it = kDtypes.find(n);
  if (it == kDtypes.end()) return std::nullopt;
  return it->second;
}

// Parses a decimal integer at the start of `s` (after spaces); advances past it.
bool take_int(std::string_view* s, int64_t* v) {
  size_t i = 0;
  while (i < s->size() && (*s)[i] == ' ') ++i;
  size_t j = i;
  if (j < s->size() && (*s)[j] == '-') ++j;
  const size_t digits = j;
  while (j < s->size() && (*s)[j] >= '0' && (*s)[j] <= '9') ++j;
  if (j == digits || j - i > 20) return false;
  const std::string text(s->substr(i, j - i));
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0) return false;
  *v = x;
  s->remove_prefix(j);
  return true;
}

// One input's facts, filled from its check function's lines.
struct Facts {
  std::optional<ScalarType> dtype;
  std::string dtype_name;
  std::map<int64_t, int64_t> exact, low, high, stride;
  std::optional<int> device_type;
};

// Reads one check_input_<i> body whose handle variable is `var`.
void read_facts(std::string_view body, const std::string& var, Facts* f) {
  const std::string size_ref = var + "_size[", stride_ref = var + "_stride[";
  size_t pos = 0;
  while (pos < body.size()) {
    size_t eol = body.find('\n', pos);
    if (eol == std::string_view::npos) eol = body.size();
    std::string_view line = body.substr(pos, eol - pos);
    pos = eol + 1;
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    int64_t k = 0, d = 0;
    const std::string dtype_decl = "int32_t " + var + "_expected_dtype = aoti_torch_dtype_";
    const std::string device_decl = "int32_t " + var + "_expected_device_type = ";
    if (line.substr(0, dtype_decl.size()) == dtype_decl) {
      std::string_view rest = line.substr(dtype_decl.size());
      const size_t paren = rest.find('(');
      if (paren != std::string_view::npos) {
        f->dtype_name = std::string(rest.substr(0, paren));
        f->dtype = dtype_named(f->dtype_name);
      }
    } else if (line.substr(0, device_decl.size()) == device_decl) {
      std::string_view rest = line.substr(device_decl.size());
      if (take_int(&rest, &k)) f->device_type = static_cast<int>(k);
    } else if (line.substr(0, 4) == "if (") {
      std::string_view rest = line.substr(4);
      // "K != var_size[D])" or "K != var_stride[D])"
      if (take_int(&rest, &k) && rest.substr(0, 4) == " != ") {
        rest.remove_prefix(4);
        const bool is_size = rest.substr(0, size_ref.size()) == size_ref;
        const bool is_stride = rest.substr(0, stride_ref.size()) == stride_ref;
        if (is_size || is_stride) {
          rest.remove_prefix(is_size ? size_ref.size() : stride_ref.size());
          if (take_int(&rest, &d) && rest.substr(0, 2) == "])") (is_size ? f->exact : f->stride)[d] = k;
        }
      } else if (rest = line.substr(4); rest.substr(0, size_ref.size()) == size_ref) {
        // "var_size[D] < L)" or "var_size[D] > U)"
        rest.remove_prefix(size_ref.size());
        if (take_int(&rest, &d) && rest.substr(0, 4).size() == 4 && rest.substr(0, 2) == "] ") {
          const char op = rest[2];
          rest.remove_prefix(3);
          if ((op == '<' || op == '>') && take_int(&rest, &k) && rest.substr(0, 1) == ")") {
            (op == '<' ? f->low : f->high)[d] = k;
          }
        }
      }
    }
  }
}

}  // namespace

Error pt2_model_names(const Pt2Archive& archive, std::vector<std::string>* out) noexcept {
  try {
    std::vector<std::string> names;
    for (const ArchiveEntry& e : archive.entries()) {
      std::string_view folder, name;
      if (!split_model_path(e.name, &folder, &name)) continue;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
    }
    SLIMCUDA_CHECK_OR_RETURN(!names.empty(), Error::InvalidProgram,
                             "no model in the archive (no data/aotinductor/<name>/ folder): not an AOTInductor "
                             ".pt2");
    std::sort(names.begin(), names.end());
    *out = std::move(names);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory listing models");
  }
}

Error find_pt2_model(const Pt2Archive& archive, const char* name, Pt2Model* out) noexcept {
  try {
    std::vector<std::string> names;
    SLIMCUDA_RETURN_IF_ERROR(pt2_model_names(archive, &names));
    std::string want;
    if (name != nullptr) {
      want = name;
    } else if (names.size() == 1) {
      want = names[0];
    } else {
      SLIMCUDA_CHECK_OR_RETURN(std::find(names.begin(), names.end(), kDefaultPt2ModelName) != names.end(),
                               Error::InvalidArgument,
                               "the archive holds %zu models (%s) and none is called '%s': choose one by name "
                               "(load option model_name)",
                               names.size(), joined(names).c_str(), kDefaultPt2ModelName);
      want = kDefaultPt2ModelName;
    }
    SLIMCUDA_CHECK_OR_RETURN(std::find(names.begin(), names.end(), want) != names.end(), Error::InvalidArgument,
                             "no model '%s' in the archive (it holds %s)", want.c_str(), joined(names).c_str());
    Pt2Model m;
    m.name = want;
    std::vector<const ArchiveEntry*> libraries;
    for (const ArchiveEntry& e : archive.entries()) {
      std::string_view folder, model;
      if (!split_model_path(e.name, &folder, &model) || model != want) continue;
      if (m.folder.empty()) m.folder = std::string(folder);
      SLIMCUDA_CHECK_OR_RETURN(folder == m.folder, Error::InvalidProgram,
                               "model '%s' has files under two roots ('%s' and '%.*s')", want.c_str(), m.folder.c_str(),
                               static_cast<int>(folder.size()), folder.data());
      m.files.push_back(&e);
      if (ends_with(e.name, ".so")) libraries.push_back(&e);
    }
    SLIMCUDA_CHECK_OR_RETURN(libraries.size() == 1, Error::InvalidProgram,
                             "model '%s': %zu .so files in %s (want exactly one)", want.c_str(), libraries.size(),
                             m.folder.c_str());
    m.library = libraries[0];
    const std::string stem = m.library->name.substr(0, m.library->name.size() - 3);
    m.metadata = archive.find(stem + "_metadata.json");
    m.wrapper_source = archive.find(stem + ".cpp");
    m.extern_nodes = archive.find(stem + ".json");
    SLIMCUDA_CHECK_OR_RETURN(m.metadata != nullptr, Error::InvalidProgram,
                             "model '%s': no %s_metadata.json beside its library", want.c_str(), stem.c_str());
    std::string text;
    SLIMCUDA_RETURN_IF_ERROR(read_entry_text(archive, *m.metadata, kMaxMetadataBytes, kMaxMetadataBytes, &text));
    const nlohmann::json meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    SLIMCUDA_CHECK_OR_RETURN(meta.is_object(), Error::InvalidProgram, "model '%s': %s is not a JSON object",
                             want.c_str(), m.metadata->name.c_str());
    const auto key = meta.find("AOTI_DEVICE_KEY");
    SLIMCUDA_CHECK_OR_RETURN(key != meta.end() && key->is_string(), Error::InvalidProgram,
                             "model '%s': its metadata has no AOTI_DEVICE_KEY string", want.c_str());
    const std::string device = key->get<std::string>();
    if (device == "cpu") {
      m.device_type = DeviceType::CPU;
    } else if (device == "cuda") {
      m.device_type = DeviceType::CUDA;
    } else {
      return set_last_error(Error::InvalidProgram,
                            "model '%s': AOTI_DEVICE_KEY '%s' (slimcuda runs 'cpu' and 'cuda' models)", want.c_str(),
                            device.c_str());
    }
    const auto isa = meta.find("AOTI_CPU_ISA");
    if (isa != meta.end() && isa->is_string()) m.cpu_isa = isa->get<std::string>().substr(0, 64);
    *out = std::move(m);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the archive");
  }
}

Error parse_input_checks(std::string_view source, size_t num_inputs, std::vector<TensorSpec>* out) noexcept {
  try {
    std::vector<TensorSpec> specs;
    for (size_t i = 0;; ++i) {
      const std::string head = "static void check_input_" + std::to_string(i) + "(";
      const size_t at = source.find(head);
      if (at == std::string_view::npos) break;
      SLIMCUDA_CHECK_OR_RETURN(i < num_inputs, Error::InvalidProgram,
                               "the wrapper checks input %zu of a model with %zu inputs", i, num_inputs);
      size_t end = source.find("\n}", at);
      if (end == std::string_view::npos) end = source.size();
      const std::string_view body = source.substr(at, end - at);
      const std::string handle = "ConstantHandle(input_handles[" + std::to_string(i) + "]);";
      const size_t h = body.find(handle);
      SLIMCUDA_CHECK_OR_RETURN(h != std::string_view::npos, Error::InvalidProgram,
                               "check_input_%zu names no handle of input %zu", i, i);
      // "ConstantHandle VAR = ConstantHandle(input_handles[i]);"
      const size_t line_start = body.rfind('\n', h) + 1;
      std::string_view decl = body.substr(line_start, h - line_start);
      while (!decl.empty() && decl.front() == ' ') decl.remove_prefix(1);
      SLIMCUDA_CHECK_OR_RETURN(decl.substr(0, 15) == "ConstantHandle " && ends_with(decl, " = "), Error::InvalidProgram,
                               "check_input_%zu: unexpected handle declaration", i);
      const std::string var(decl.substr(15, decl.size() - 18));
      Facts f;
      read_facts(body, var, &f);
      SLIMCUDA_CHECK_OR_RETURN(f.dtype.has_value(), Error::InvalidProgram,
                               "input %zu '%s': dtype %s, which slimcuda does not have", i, var.c_str(),
                               f.dtype_name.empty() ? "(none found)" : f.dtype_name.c_str());
      // The rank: one past the highest dimension any check mentions (AOTInductor checks each
      // static size and stride; a dynamic dimension gets its bounds checked).
      int64_t rank = 0;
      for (const auto* m : {&f.exact, &f.low, &f.high, &f.stride}) {
        if (!m->empty()) rank = std::max(rank, m->rbegin()->first + 1);
      }
      SLIMCUDA_CHECK_OR_RETURN(rank <= kMaxDims && (f.exact.empty() || f.exact.begin()->first >= 0),
                               Error::InvalidProgram, "input %zu '%s': rank %lld", i, var.c_str(),
                               static_cast<long long>(rank));
      TensorSpec s;
      s.name = var;
      s.dtype = *f.dtype;
      s.device = Device{f.device_type.value_or(0) == 1 ? DeviceType::CUDA : DeviceType::CPU, -1};
      bool dynamic = false;
      s.sizes.assign(static_cast<size_t>(rank), 0);
      s.min_sizes.assign(static_cast<size_t>(rank), 0);
      for (int64_t d = 0; d < rank; ++d) {
        const auto exact = f.exact.find(d);
        if (exact != f.exact.end()) {
          s.sizes[d] = s.min_sizes[d] = exact->second;
          continue;
        }
        dynamic = true;
        const auto low = f.low.find(d), high = f.high.find(d);
        s.min_sizes[d] = low == f.low.end() ? 0 : std::max<int64_t>(0, low->second);
        s.sizes[d] = high == f.high.end() ? std::numeric_limits<int64_t>::max() : high->second;
      }
      s.dynamism = dynamic ? Dynamism::DynamicBounded : Dynamism::Static;
      if (!dynamic) s.min_sizes.clear();
      // Every stride fixed: the layout is fixed too (a dim order, outermost first).
      if (static_cast<int64_t>(f.stride.size()) == rank && rank > 0 && !dynamic) {
        std::vector<uint8_t> order(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; ++d) order[d] = static_cast<uint8_t>(d);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint8_t a, uint8_t b) { return f.stride.at(a) > f.stride.at(b); });
        s.dim_order = std::move(order);
      }
      specs.push_back(std::move(s));
    }
    if (specs.empty()) {
      return set_last_error(Error::NotFound, "the wrapper source holds no input checks");
    }
    SLIMCUDA_CHECK_OR_RETURN(specs.size() == num_inputs, Error::InvalidProgram,
                             "the wrapper checks %zu inputs of a model with %zu", specs.size(), num_inputs);
    *out = std::move(specs);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading input checks");
  }
}

Error read_entry_text(const Pt2Archive& archive, const ArchiveEntry& e, uint64_t cap, uint64_t inflated_cap,
                      std::string* out) {
  out->clear();
  SLIMCUDA_CHECK_OR_RETURN(e.size <= cap, Error::InvalidProgram, "%s: %llu bytes (at most %llu)", e.name.c_str(),
                           static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(cap));
  SLIMCUDA_CHECK_OR_RETURN(e.stored || e.size <= inflated_cap, Error::InvalidProgram,
                           "%s: compressed, %llu bytes inflated (at most %llu for this entry compressed; store it, as "
                           "PyTorch does)",
                           e.name.c_str(), static_cast<unsigned long long>(e.size),
                           static_cast<unsigned long long>(inflated_cap));
  out->assign(static_cast<size_t>(e.size), '\0');
  return archive.read(e, 0, e.size, out->data());
}

namespace {

// An identifier at the start of `s` (letters, digits, '_'); advances past it.
bool take_identifier(std::string_view* s, std::string* out) {
  size_t n = 0;
  while (n < s->size() && (std::isalnum(static_cast<unsigned char>((*s)[n])) != 0 || (*s)[n] == '_')) ++n;
  if (n == 0) return false;
  out->assign(s->substr(0, n));
  s->remove_prefix(n);
  return true;
}

// `s` after `prefix` when it starts with it (spaces skipped first).
bool take(std::string_view* s, std::string_view prefix) {
  while (!s->empty() && (s->front() == ' ' || s->front() == '\n')) s->remove_prefix(1);
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// The names of `<what>_info_[i].name = "NAME";` lines, into names (sized to the count).
Error read_io_names(std::string_view source, const char* what, std::vector<std::string>* names) {
  const std::string head = std::string(what) + "_info_[";
  for (size_t at = source.find(head); at != std::string_view::npos; at = source.find(head, at + 1)) {
    std::string_view rest = source.substr(at + head.size());
    int64_t i = 0;
    std::string_view name_rest = rest;
    if (!take_int(&name_rest, &i) || !take(&name_rest, "].name = \"")) continue;
    const size_t quote = name_rest.find('"');
    if (quote == std::string_view::npos || name_rest.substr(0, quote).find('\n') != std::string_view::npos) continue;
    SLIMCUDA_CHECK_OR_RETURN(i >= 0 && static_cast<size_t>(i) < names->size(), Error::InvalidProgram,
                             "the wrapper names %s %lld of %zu", what, static_cast<long long>(i), names->size());
    (*names)[static_cast<size_t>(i)] = std::string(name_rest.substr(0, quote));
  }
  return Error::Ok;
}

// The literal sizes of `static constexpr int64_t ARRAY[] = {2L, 3L};`, the last definition
// of `array` before `before`; false when there is none or it holds anything but literals.
bool literal_array(std::string_view source, const std::string& array, size_t before, std::vector<int64_t>* out) {
  const std::string decl = "static constexpr int64_t " + array + "[] = {";
  const size_t at = source.rfind(decl, before);
  if (at == std::string_view::npos) return false;
  std::string_view rest = source.substr(at + decl.size());
  out->clear();
  while (!take(&rest, "}")) {
    int64_t v = 0;
    if (!take_int(&rest, &v) || v < 0 || !take(&rest, "L") || out->size() >= static_cast<size_t>(kMaxDims)) {
      return false;
    }
    out->push_back(v);
    if (!take(&rest, ",") && rest.substr(0, 1) != "}") return false;
  }
  return true;
}

// The spec of the buffer `var` allocated by aoti_torch_empty_strided with literal sizes
// (false: not such a buffer).
bool allocation_of(std::string_view source, const std::string& var, TensorSpec* s) {
  const std::string handle = "&" + var + "_handle));";
  const size_t at = source.find(handle);
  if (at == std::string_view::npos) return false;
  const size_t line = source.rfind('\n', at) + 1;
  const std::string_view head = "aoti_torch_empty_strided(";
  const size_t call = source.find(head, line);
  if (call == std::string_view::npos || call > at) return false;
  std::string_view rest = source.substr(call + head.size());
  int64_t ndim = 0;
  std::string sizes, strides, dtype, device;
  if (!take_int(&rest, &ndim) || !take(&rest, ",") || !take(&rest, "") || !take_identifier(&rest, &sizes) ||
      !take(&rest, ",") || !take(&rest, "") || !take_identifier(&rest, &strides) || !take(&rest, ",") ||
      !take(&rest, "cached_torch_dtype_") || !take_identifier(&rest, &dtype) || !take(&rest, ",") ||
      !take(&rest, "cached_torch_device_type_") || !take_identifier(&rest, &device)) {
    return false;
  }
  const std::optional<ScalarType> t = dtype_named(dtype);
  if (!t.has_value() || (device != "cpu" && device != "cuda")) return false;
  if (!literal_array(source, sizes, call, &s->sizes) || static_cast<int64_t>(s->sizes.size()) != ndim) return false;
  s->dtype = *t;
  s->dynamism = Dynamism::Static;
  s->device = Device{device == "cuda" ? DeviceType::CUDA : DeviceType::CPU, -1};
  s->known = true;
  return true;
}

}  // namespace

Error parse_wrapper_io(std::string_view source, WrapperIo* out) noexcept {
  try {
    const std::string_view ctor = "AOTInductorModelBase(";
    const size_t at = source.find(ctor);
    if (at == std::string_view::npos) {
      return set_last_error(Error::NotFound, "the wrapper source has no AOTInductorModel constructor");
    }
    std::string_view rest = source.substr(at + ctor.size());
    int64_t n_in = 0, n_out = 0;
    SLIMCUDA_CHECK_OR_RETURN(take_int(&rest, &n_in) && take(&rest, ",") && take(&rest, "") && take_int(&rest, &n_out),
                             Error::InvalidProgram,
                             "the wrapper's AOTInductorModelBase( states no input and output counts");
    SLIMCUDA_CHECK_OR_RETURN(n_in >= 0 && n_out >= 0 && static_cast<size_t>(n_in) <= kMaxWrapperIo &&
                                 static_cast<size_t>(n_out) <= kMaxWrapperIo,
                             Error::InvalidProgram, "the wrapper states %lld inputs and %lld outputs",
                             static_cast<long long>(n_in), static_cast<long long>(n_out));
    WrapperIo io;
    io.num_inputs = static_cast<size_t>(n_in);
    io.num_outputs = static_cast<size_t>(n_out);
    io.input_names.resize(io.num_inputs);
    io.output_names.resize(io.num_outputs);
    SLIMCUDA_RETURN_IF_ERROR(read_io_names(source, "inputs", &io.input_names));
    SLIMCUDA_RETURN_IF_ERROR(read_io_names(source, "outputs", &io.output_names));
    *out = std::move(io);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the wrapper's inputs and outputs");
  }
}

Error parse_output_allocations(std::string_view source, const std::vector<std::string>& names,
                               std::vector<TensorSpec>* out) noexcept {
  try {
    // The outputs are set at the end of run_impl; buffers of other functions are not theirs.
    const size_t run = source.find("::run_impl(");
    const std::string_view body = run == std::string_view::npos ? std::string_view() : source.substr(run);
    std::vector<TensorSpec> specs(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      TensorSpec& s = specs[i];
      s.name = names[i];
      s.known = false;
      const std::string set = "output_handles[" + std::to_string(i) + "] = ";
      const size_t at = body.find(set);
      if (at == std::string_view::npos) continue;
      std::string_view rest = body.substr(at + set.size());
      std::string var;
      if (!take_identifier(&rest, &var) || !take(&rest, ".release();")) continue;
      // A buffer reused whole ("auto buf2 = std::move(buf1);  // reuse"), a bounded chain.
      for (int hop = 0; hop < 64; ++hop) {
        const std::string reuse = "auto " + var + " = std::move(";
        const size_t r = body.find(reuse);
        if (r == std::string_view::npos) break;
        std::string_view from = body.substr(r + reuse.size());
        std::string prev;
        if (!take_identifier(&from, &prev) || !take(&from, ");")) break;
        var = prev;
      }
      if (!allocation_of(body, var, &s)) {
        s = TensorSpec{};
        s.name = names[i];
        s.known = false;
      }
    }
    *out = std::move(specs);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the wrapper's outputs");
  }
}

Error read_wrapper_source(const Pt2Archive& archive, const Pt2Model& pm, std::string* out) {
  out->clear();
  if (pm.wrapper_source == nullptr) return Error::Ok;
  return read_entry_text(archive, *pm.wrapper_source, kMaxWrapperSourceBytes, kMaxInflatedTextBytes, out);
}

Error read_pt2_library(const Pt2Archive& archive, const Pt2Model& pm, std::unique_ptr<uint8_t[]>* inflated,
                       ArchiveSpan* so) noexcept {
  const ArchiveEntry& lib = *pm.library;
  const char* name = pm.name.c_str();
  if (lib.stored) {
    SLIMCUDA_RETURN_IF_ERROR(archive.view(lib, so));
    SLIMCUDA_CHECK_OR_RETURN(so->size > 0, Error::InvalidProgram, "model '%s': empty library %s", name,
                             lib.name.c_str());
    SLIMCUDA_RETURN_IF_ERROR(archive.verify_crc(lib));
    return check_elf(so->data, so->size);
  }
  SLIMCUDA_CHECK_OR_RETURN(lib.size <= kMaxCompressedLibraryBytes, Error::NotSupported,
                           "model '%s': its library is compressed and %llu bytes inflated (at most %llu; store it, "
                           "as PyTorch does)",
                           name, static_cast<unsigned long long>(lib.size),
                           static_cast<unsigned long long>(kMaxCompressedLibraryBytes));
  SLIMCUDA_CHECK_OR_RETURN(lib.size > 0, Error::InvalidProgram, "model '%s': empty library %s", name, lib.name.c_str());
  // The header first: a compressed entry that is no library is refused after 64 inflated
  // bytes, not after all of them.
  uint8_t head[64];
  const size_t n = static_cast<size_t>(std::min<uint64_t>(lib.size, sizeof head));
  SLIMCUDA_RETURN_IF_ERROR(archive.read(lib, 0, n, head));
  SLIMCUDA_RETURN_IF_ERROR(check_elf_header(head, n, lib.size));
  // Not zero-filled: only the pages the stream really fills become resident.
  inflated->reset(new (std::nothrow) uint8_t[static_cast<size_t>(lib.size)]);
  SLIMCUDA_CHECK_OR_RETURN(*inflated != nullptr, Error::MemoryAllocationFailed,
                           "out of host memory inflating the library of model '%s' (%llu bytes)", name,
                           static_cast<unsigned long long>(lib.size));
  SLIMCUDA_RETURN_IF_ERROR(archive.read(lib, 0, lib.size, inflated->get()));  // CRC-checked
  *so = ArchiveSpan{inflated->get(), static_cast<size_t>(lib.size)};
  return check_elf(so->data, so->size);
}

}  // namespace slimcuda
