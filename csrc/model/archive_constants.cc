// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/archive_constants.h"

#include <cctype>
#include <cstring>
#include <new>
#include <string_view>

#include <nlohmann/json.hpp>

#include "csrc/core/limits.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// More constants than any model has; bounds what an index in the text can make us allocate.
constexpr uint64_t kMaxConstants = uint64_t{1} << 17;

// A cursor over the text, for one statement at a time.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  void spaces() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  bool eat(char c) {
    spaces();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool integer(int64_t* out) {
    spaces();
    const size_t start = i;
    uint64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      const uint64_t d = static_cast<uint64_t>(s[i] - '0');
      if (v > (static_cast<uint64_t>(INT64_MAX) - d) / 10) return false;
      v = v * 10 + d;
      ++i;
    }
    *out = static_cast<int64_t>(v);
    return i > start;
  }
  bool ident(std::string_view* out) {
    const size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    *out = s.substr(start, i - start);
    return i > start;
  }
  bool string(std::string* out) {
    if (!eat('"')) return false;
    const size_t start = i;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' || s[i] == '\n') return false;
      ++i;
    }
    if (i >= s.size()) return false;
    out->assign(s.substr(start, i - start));
    ++i;
    return true;
  }
  bool list(std::vector<int64_t>* out) {
    out->clear();
    if (!eat('{')) return false;
    if (eat('}')) return true;
    for (;;) {
      int64_t v = 0;
      if (!integer(&v) || static_cast<int64_t>(out->size()) >= kMaxDims) return false;
      out->push_back(v);
      if (eat('}')) return true;
      if (!eat(',')) return false;
    }
  }
};

// Line numbers for messages, counted forward only (the statements come in order): a wrapper
// of many megabytes is read once.
struct Lines {
  std::string_view s;
  size_t pos = 0, line = 1;
  size_t at(size_t offset) {
    for (; pos < offset && pos < s.size(); ++pos) line += s[pos] == '\n' ? 1 : 0;
    return line;
  }
};

struct Seen {
  bool name = false, shape = false, stride = false;
};

}  // namespace

Error parse_wrapper_constants(const char* text, size_t size, std::vector<WrapperConstant>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN((text != nullptr || size == 0) && out != nullptr, Error::InvalidArgument,
                           "null text or out");
  try {
    const std::string_view s(text, size);
    static constexpr std::string_view kKey = "constants_info_[";
    std::vector<WrapperConstant> constants;
    std::vector<Seen> seen;
    Lines lines{s};
    for (size_t at = s.find(kKey); at != std::string_view::npos; at = s.find(kKey, at + 1)) {
      Cursor c{s, at + kKey.size()};
      const size_t line = lines.at(at);
      int64_t index = 0;
      std::string_view field;
      SLIMCUDA_CHECK_OR_RETURN(c.integer(&index) && c.eat(']') && c.eat('.') && c.ident(&field) && c.eat('='),
                               Error::InvalidProgram, "wrapper source line %zu: not a constants_info_[i].field = ...",
                               line);
      SLIMCUDA_CHECK_OR_RETURN(static_cast<uint64_t>(index) < kMaxConstants, Error::InvalidProgram,
                               "wrapper source line %zu: constant index %lld", line, static_cast<long long>(index));
      if (static_cast<size_t>(index) >= constants.size()) {
        constants.resize(static_cast<size_t>(index) + 1);
        seen.resize(constants.size());
      }
      WrapperConstant& w = constants[static_cast<size_t>(index)];
      bool ok = true;
      if (field == "name") {
        ok = c.string(&w.name) && !w.name.empty();
        seen[index].name = ok;
      } else if (field == "original_fqn") {
        ok = c.string(&w.original_fqn);
      } else if (field == "data_size") {
        int64_t v = 0;
        ok = c.integer(&v);
        w.data_size = static_cast<uint64_t>(v);
      } else if (field == "offset") {
        ok = c.integer(&w.offset);
      } else if (field == "from_folded") {
        std::string_view b;
        c.spaces();
        ok = c.ident(&b) && (b == "true" || b == "false");
        w.from_folded = b == "true";
      } else if (field == "device_type") {
        std::string_view token;
        c.spaces();
        ok = c.ident(&token);
        constexpr std::string_view kPrefix = "cached_torch_device_type_";
        w.device = std::string(token.substr(0, kPrefix.size()) == kPrefix ? token.substr(kPrefix.size()) : token);
      } else if (field == "shape") {
        ok = c.list(&w.shape);
        seen[index].shape = ok;
      } else if (field == "stride") {
        ok = c.list(&w.stride);
        seen[index].stride = ok;
      } else {
        // dtype, type, layout, opaque_metadata: the container reports them.
        const size_t end = s.find(';', c.i);
        const size_t newline = s.find('\n', c.i);
        ok = end != std::string_view::npos && end < newline;
        c.i = ok ? end : c.i;
      }
      SLIMCUDA_CHECK_OR_RETURN(ok && c.eat(';'), Error::InvalidProgram,
                               "wrapper source line %zu: constants_info_[%lld].%.*s has a value slimcuda cannot read",
                               line, static_cast<long long>(index), static_cast<int>(field.size()), field.data());
    }
    for (size_t k = 0; k < constants.size(); ++k) {
      SLIMCUDA_CHECK_OR_RETURN(seen[k].name && seen[k].shape && seen[k].stride, Error::InvalidProgram,
                               "wrapper source: constant %zu lacks its name, shape or stride", k);
      SLIMCUDA_CHECK_OR_RETURN(constants[k].shape.size() == constants[k].stride.size(), Error::InvalidProgram,
                               "wrapper source: constant '%s' has %zu sizes and %zu strides", constants[k].name.c_str(),
                               constants[k].shape.size(), constants[k].stride.size());
    }
    *out = std::move(constants);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error blob_shapes(const std::vector<ContainerConstant>& container, const std::vector<WrapperConstant>& wrapper,
                  DeviceType model_device, std::vector<ConstantShape>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  SLIMCUDA_CHECK_OR_RETURN(container.size() == wrapper.size(), Error::InvalidProgram,
                           "the wrapper source and the library disagree: %zu constants declared, %zu in the library",
                           wrapper.size(), container.size());
  try {
    std::vector<ConstantShape> shapes;
    for (size_t i = 0; i < container.size(); ++i) {
      const ContainerConstant& c = container[i];
      const WrapperConstant& w = wrapper[i];
      SLIMCUDA_CHECK_OR_RETURN(
          c.name == w.name && c.data_size == w.data_size && c.from_folded == w.from_folded, Error::InvalidProgram,
          "the wrapper source and the library disagree on constant %zu: '%s' (%llu bytes%s) "
          "declared, '%s' (%llu bytes%s) in the library",
          i, w.name.c_str(), static_cast<unsigned long long>(w.data_size), w.from_folded ? ", folded" : "",
          c.name.c_str(), static_cast<unsigned long long>(c.data_size), c.from_folded ? ", folded" : "");
      const char* want = model_device == DeviceType::CUDA ? "cuda" : "cpu";
      // A CPU constant of a CUDA model is what the model's CPU code reads: it stays on the host.
      const bool on_cpu = model_device == DeviceType::CUDA && w.device == "cpu";
      SLIMCUDA_CHECK_OR_RETURN(w.device.empty() || w.device == want || on_cpu, Error::NotSupported,
                               "constant '%s' lives on %s in a %s model (slimcuda keeps constants on the model's "
                               "device, or CPU constants of a CUDA model on the host)",
                               w.name.c_str(), w.device.c_str(), want);
      if (!c.from_folded) shapes.push_back(ConstantShape{w.shape, w.stride, w.offset, on_cpu});
    }
    *out = std::move(shapes);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error parse_weights_config(const char* text, size_t size, std::vector<PickledWeight>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN((text != nullptr || size == 0) && out != nullptr, Error::InvalidArgument,
                           "null text or out");
  try {
    const nlohmann::json j = nlohmann::json::parse(text, text + size, nullptr, /*allow_exceptions=*/false);
    SLIMCUDA_CHECK_OR_RETURN(j.is_object(), Error::InvalidProgram, "weights_config.json is not a JSON object");
    std::vector<PickledWeight> weights;
    auto ints = [](const nlohmann::json& v, std::vector<int64_t>* to) {
      if (!v.is_array() || static_cast<int64_t>(v.size()) > kMaxDims) return false;
      for (const auto& x : v) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0) return false;
        to->push_back(x.get<int64_t>());
      }
      return true;
    };
    for (const auto& [fqn, v] : j.items()) {
      PickledWeight w;
      w.fqn = fqn;
      const bool shaped = v.is_array() && v.size() == 4 && v[0].is_string() && ints(v[1], &w.shape) &&
                          ints(v[2], &w.stride) && w.shape.size() == w.stride.size() && v[3].is_number_integer() &&
                          v[3].get<int64_t>() >= 0;
      SLIMCUDA_CHECK_OR_RETURN(shaped, Error::InvalidProgram,
                               "weights_config.json: '%s' is not [file, [sizes], [strides], offset]", fqn.c_str());
      w.file = v[0].get<std::string>();
      w.offset = v[3].get<int64_t>();
      SLIMCUDA_CHECK_OR_RETURN(!w.file.empty() && w.file.find('/') == std::string::npos &&
                                   w.file.find('\\') == std::string::npos && w.file != "." && w.file != "..",
                               Error::InvalidProgram, "weights_config.json: '%s' names the file '%s'", fqn.c_str(),
                               w.file.c_str());
      weights.push_back(std::move(w));
    }
    *out = std::move(weights);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  } catch (const nlohmann::json::exception& e) {
    return set_last_error(Error::InvalidProgram, "weights_config.json: %s", e.what());
  }
}

}  // namespace slimcuda
