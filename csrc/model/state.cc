// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/state.h"

#include <cuda_runtime_api.h>

#include <cctype>
#include <cstring>
#include <map>
#include <new>
#include <optional>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

constexpr uint64_t kStateAlignment = 256;  // each state constant's start, as the weights'

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The source with comments and string literals blanked (same length, so positions stay):
// kernels' Python source, the "Source Nodes" notes and the constants' names in
// constants_info_ are text, not uses of the constants' variables.
std::string without_comments(std::string_view src) {
  std::string out(src);
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '"') {  // a string literal: blanked too (names in it are text, not uses)
      for (++i; i < out.size() && out[i] != '"' && out[i] != '\n'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i] = ' ';
      }
    } else if (out[i] == '/' && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      for (; i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/'); ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

// The arguments between the parenthesis at `open` and its match, split at top-level
// commas; false when it never closes.
bool call_args(std::string_view s, size_t open, std::vector<std::string_view>* args, size_t* close) {
  args->clear();
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        args->push_back(trim(s.substr(start, i - start)));
        *close = i;
        return true;
      }
    } else if (c == ',' && depth == 1) {
      args->push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return false;
}

// Whether `arg` holds the identifier `name`.
bool mentions(std::string_view arg, std::string_view name) {
  for (size_t at = arg.find(name); at != std::string_view::npos; at = arg.find(name, at + 1)) {
    const bool left = at == 0 || !ident(arg[at - 1]);
    const bool right = at + name.size() >= arg.size() || !ident(arg[at + name.size()]);
    if (left && right) return true;
  }
  return false;
}

// Each Triton launcher's parameter names, in order ("static inline void call_triton_K(
// const in_ptr0_type_& in_ptr0, ...)").
std::map<std::string, std::vector<std::string>, std::less<>> launchers(std::string_view src) {
  std::map<std::string, std::vector<std::string>, std::less<>> out;
  constexpr std::string_view kHead = "static inline void call_triton_";
  for (size_t at = src.find(kHead); at != std::string_view::npos; at = src.find(kHead, at + 1)) {
    const size_t name_start = at + kHead.size() - std::strlen("call_triton_");
    const size_t open = src.find('(', name_start);
    if (open == std::string_view::npos) break;
    std::vector<std::string_view> params;
    size_t close = 0;
    if (!call_args(src, open, &params, &close)) break;
    std::vector<std::string>& names = out[std::string(trim(src.substr(name_start, open - name_start)))];
    for (std::string_view p : params) {
      size_t end = p.size();
      size_t begin = end;
      while (begin > 0 && ident(p[begin - 1])) --begin;
      names.emplace_back(p.substr(begin, end - begin));
    }
  }
  return out;
}

// Fallbacks whose first argument is their result and the rest only read, and fallbacks
// that write nothing they are given (their results come back through handle pointers).
bool reads_after_first(std::string_view op) {
  for (std::string_view f : {"mm_out", "addmm_out", "bmm_out"}) {
    if (op == f) return true;
  }
  return false;
}
bool functional(std::string_view op) {
  return op == "convolution" || op == "_convolution" || starts_with(op, "_scaled_dot_product_");
}

// Whether the use of `name` at `at` (in the comment-free source) is proven a read.
bool read_use(std::string_view src, size_t at, std::string_view name,
              const std::map<std::string, std::vector<std::string>, std::less<>>& params) {
  size_t start = src.find_last_of(";{}", at);
  start = start == std::string_view::npos ? 0 : start + 1;
  const size_t end = src.find(';', at);
  const std::string_view stmt = trim(src.substr(start, (end == std::string_view::npos ? src.size() : end) - start));
  std::vector<std::string_view> args;
  size_t close = 0;
  if (starts_with(stmt, "call_triton_")) {
    const size_t open = stmt.find('(');
    const auto it = params.find(stmt.substr(0, open));
    if (open == std::string_view::npos || it == params.end() || !call_args(stmt, open, &args, &close)) return false;
    bool seen = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!mentions(args[i], name)) continue;
      if (args[i] != name || i >= it->second.size() || !starts_with(it->second[i], "in_ptr")) return false;
      seen = true;
    }
    return seen;
  }
  constexpr std::string_view kCheck = "AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_";
  if (starts_with(stmt, kCheck)) {
    std::string_view rest = stmt.substr(kCheck.size());
    for (std::string_view dev : {"cuda_", "cpu_"}) {
      if (starts_with(rest, dev)) rest.remove_prefix(dev.size());
    }
    const size_t open = rest.find('(');
    if (open == std::string_view::npos) return false;
    const std::string_view op = rest.substr(0, open);
    if (!call_args(rest, open, &args, &close) || args.empty()) return false;
    if (functional(op)) return true;
    return reads_after_first(op) && !mentions(args[0], name);
  }
  // A CPU kernel's `(const T*)(name.data_ptr())`.
  const std::string_view before = src.substr(0, at);
  const std::string_view after = src.substr(at + name.size());
  if (starts_with(after, ".data_ptr())") && before.size() >= 3 && before.substr(before.size() - 3) == "*)(") {
    const size_t cast = before.rfind('(', before.size() - 3);
    return cast != std::string_view::npos && starts_with(before.substr(cast), "(const ");
  }
  return false;
}

}  // namespace

std::set<std::string> wrapper_read_only_constants(std::string_view source) {
  std::set<std::string> proven;
  try {
    const std::string clean = without_comments(source);
    const std::string_view src = clean;
    const auto params = launchers(src);
    // The run's variables for the constants: "auto& <name> = constants_->at(<i>);".
    std::set<std::string> names;
    constexpr std::string_view kBind = " = constants_->at(";
    for (size_t at = src.find(kBind); at != std::string_view::npos; at = src.find(kBind, at + 1)) {
      size_t begin = at;
      while (begin > 0 && ident(src[begin - 1])) --begin;
      if (begin >= 6 && src.substr(begin - 6, 6) == "auto& ") names.emplace(src.substr(begin, at - begin));
    }
    for (const std::string& name : names) {
      bool ok = true;
      for (size_t at = src.find(name); ok && at != std::string_view::npos; at = src.find(name, at + 1)) {
        if ((at > 0 && ident(src[at - 1])) || (at + name.size() < src.size() && ident(src[at + name.size()]))) {
          continue;
        }
        const size_t line = src.rfind('\n', at);
        const std::string_view rest = src.substr(line == std::string_view::npos ? 0 : line + 1);
        const std::string_view text = trim(rest.substr(0, rest.find('\n')));
        if (text.find(kBind) != std::string_view::npos && mentions(text.substr(0, text.find(kBind)), name)) continue;
        ok = read_use(src, at, name, params);
      }
      if (ok) proven.insert(name);
    }
  } catch (const std::bad_alloc&) {
    proven.clear();  // nothing proven: every buffer is state
  }
  return proven;
}

bool is_state(const ContainerConstant& c, const std::set<std::string>* read_only) noexcept {
  if (c.from_folded || c.kind == ConstantKind::Parameter || c.kind == ConstantKind::Folded) return false;
  return read_only == nullptr || read_only->count(c.name) == 0;
}

Error ModelState::create(const std::vector<std::string>& names, const std::vector<const SlimTensor*>& initial,
                         Device device, const StreamContext& ctx, std::shared_ptr<const void> keep_initial,
                         std::unique_ptr<ModelState>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(names.size() == initial.size() && out != nullptr, Error::InvalidArgument,
                           "%zu names for %zu constants", names.size(), initial.size());
  try {
    std::unique_ptr<ModelState> s(new ModelState());
    s->device_ = device;
    s->keep_initial_ = std::move(keep_initial);
    std::vector<uint64_t> offsets(initial.size());
    uint64_t total = 0;
    for (size_t i = 0; i < initial.size(); ++i) {
      const SlimTensor* t = initial[i];
      SLIMCUDA_CHECK_OR_RETURN(t != nullptr && t->storage() != nullptr, Error::InvalidProgram,
                               "the container gives no tensor for constant '%s'", names[i].c_str());
      // A CUDA model's CPU constant that a run may write (not proven read-only): its reset,
      // save and restore would be host copies ordered with the device's; not built.
      SLIMCUDA_CHECK_OR_RETURN(
          t->device().type == device.type, Error::NotSupported,
          "constant '%s' lives on the %s in a %s model and its runs may write it (the wrapper source does not "
          "show it read-only): state on another device than the model's is not supported",
          names[i].c_str(), t->device().is_cuda() ? "GPU" : "CPU", device.is_cuda() ? "CUDA" : "CPU");
      total = (total + kStateAlignment - 1) / kStateAlignment * kStateAlignment;
      offsets[i] = total;
      total += t->storage()->nbytes();
      // Our own view of the initial value: the container's handle goes when it is handed
      // the state, its memory does not.
      s->initial_.push_back(
          std::make_unique<SlimTensor>(Storage::borrow(t->storage()->data(), t->storage()->nbytes(), t->device()),
                                       t->sizes(), t->strides(), t->dtype(), t->storage_offset()));
    }
    std::shared_ptr<Storage> memory;
    const cudaStream_t stream = device.is_cuda() ? ctx.stream() : nullptr;
    SLIMCUDA_RETURN_IF_ERROR(allocate_constants(total, device, ctx, &memory));
    char* base = static_cast<char*>(memory->data());
    std::vector<std::unique_ptr<SlimTensor>> tensors;
    for (size_t i = 0; i < initial.size(); ++i) {
      const SlimTensor& t = *s->initial_[i];
      const size_t n = t.storage()->nbytes();
      tensors.push_back(std::make_unique<SlimTensor>(Storage::borrow(n > 0 ? base + offsets[i] : nullptr, n, device),
                                                     t.sizes(), t.strides(), t.dtype(), t.storage_offset()));
    }
    s->current_ = std::make_shared<DeviceWeights>(std::move(memory), names, std::move(tensors));
    SLIMCUDA_RETURN_IF_ERROR(s->reset(stream));
    if (device.is_cuda()) SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(stream, device.index));
    *out = std::move(s);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory for the model's state");
  }
}

std::optional<size_t> ModelState::find(const std::string& name) const noexcept {
  for (size_t i = 0; i < current_->count(); ++i) {
    if (current_->name(i) == name) return i;
  }
  return std::nullopt;
}

Error ModelState::reset(cudaStream_t stream) noexcept {
  for (size_t i = 0; i < initial_.size(); ++i) {
    const Storage& from = *initial_[i]->storage();
    const Storage& to = *current_->tensor(i)->storage();
    if (from.nbytes() == 0) continue;
    if (device_.is_cuda()) {
      cuda::DeviceGuard guard(device_.index);
      SLIMCUDA_RETURN_IF_ERROR(guard.error());
      SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(to.data(), from.data(), from.nbytes(), cudaMemcpyDeviceToDevice, stream));
    } else {
      std::memcpy(to.data(), from.data(), from.nbytes());
    }
  }
  return Error::Ok;
}

Error ModelState::save(cudaStream_t stream, std::shared_ptr<Storage>* saved) noexcept {
  const uint64_t n = bytes();
  const StreamContext ctx =
      device_.is_cuda() ? StreamContext::selected(stream, device_.index) : StreamContext::unselected(0);
  SLIMCUDA_RETURN_IF_ERROR(Storage::allocate(static_cast<size_t>(n), device_, ctx, saved));
  if (n == 0) return Error::Ok;
  const void* from = current_->data();
  if (!device_.is_cuda()) {
    std::memcpy((*saved)->data(), from, static_cast<size_t>(n));
    return Error::Ok;
  }
  cuda::DeviceGuard guard(device_.index);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaMemcpyAsync((*saved)->data(), from, static_cast<size_t>(n), cudaMemcpyDeviceToDevice, stream));
  return Error::Ok;
}

Error ModelState::restore(cudaStream_t stream, const Storage& saved) noexcept {
  const uint64_t n = bytes();
  SLIMCUDA_CHECK_OR_RETURN(saved.nbytes() >= n, Error::Internal, "a saved state of %zu bytes for %llu", saved.nbytes(),
                           static_cast<unsigned long long>(n));
  if (n == 0) return Error::Ok;
  void* to = current_->data();
  if (!device_.is_cuda()) {
    std::memcpy(to, saved.data(), static_cast<size_t>(n));
    return Error::Ok;
  }
  cuda::DeviceGuard guard(device_.index);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(to, saved.data(), static_cast<size_t>(n), cudaMemcpyDeviceToDevice, stream));
  return Error::Ok;
}

Error ModelState::own_initial_values(cudaStream_t stream) noexcept {
  if (own_initial_ != nullptr) return Error::Ok;
  try {
    std::vector<uint64_t> offsets(initial_.size());
    uint64_t total = 0;
    for (size_t i = 0; i < initial_.size(); ++i) {
      total = (total + kStateAlignment - 1) / kStateAlignment * kStateAlignment;
      offsets[i] = total;
      total += initial_[i]->storage()->nbytes();
    }
    const StreamContext ctx =
        device_.is_cuda() ? StreamContext::selected(stream, device_.index) : StreamContext::unselected(0);
    std::shared_ptr<Storage> memory;
    SLIMCUDA_RETURN_IF_ERROR(allocate_constants(total, device_, ctx, &memory));
    char* base = static_cast<char*>(memory->data());
    std::vector<std::unique_ptr<SlimTensor>> moved;
    std::optional<cuda::DeviceGuard> guard;
    if (device_.is_cuda()) {
      guard.emplace(device_.index);
      SLIMCUDA_RETURN_IF_ERROR(guard->error());
    }
    for (size_t i = 0; i < initial_.size(); ++i) {
      const SlimTensor& t = *initial_[i];
      const size_t n = t.storage()->nbytes();
      char* to = n > 0 ? base + offsets[i] : nullptr;
      if (n > 0 && device_.is_cuda()) {
        SLIMCUDA_CUDA_TRY(cudaMemcpyAsync(to, t.storage()->data(), n, cudaMemcpyDeviceToDevice, stream));
      } else if (n > 0) {
        std::memcpy(to, t.storage()->data(), n);
      }
      moved.push_back(std::make_unique<SlimTensor>(Storage::borrow(to, n, device_), t.sizes(), t.strides(), t.dtype(),
                                                   t.storage_offset()));
    }
    if (device_.is_cuda()) SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(stream, device_.index));
    initial_ = std::move(moved);
    own_initial_ = std::move(memory);
    keep_initial_.reset();
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

}  // namespace slimcuda
