// SPDX-License-Identifier: Apache-2.0
#include "csrc/config/config.h"

#include <cstdlib>
#include <mutex>
#include <new>

#include "csrc/config/detail/store.h"
#include "csrc/config/log.h"
#include "csrc/config/parse.h"

namespace slimcuda::config {
namespace detail {
namespace {

// Long values are cut in messages: a setting's name and what was used matter more.
std::string quoted(std::string_view v) {
  constexpr size_t kShown = 200;
  return v.size() <= kShown ? std::string(v) : std::string(v.substr(0, kShown)) + "...";
}

std::string default_text(const SettingInfo& info) {
  if (info.type == Type::Path) return info.default_text[0] != '\0' ? info.default_text : "none";
  return to_text(info, default_value(info));
}

}  // namespace

Store::Store(Lookup env) {
  for (const SettingInfo& info : settings()) {
    Slot& s = slot(info.key);
    const char* v = env != nullptr ? env(info.name) : nullptr;
    // An empty variable is an unset one, as it always was for every setting here.
    if (v != nullptr && v[0] != '\0') {
      if (info.type == Type::Path) {
        s.from_env = true;
        s.env_path = v;
      } else if (const std::optional<uint64_t> parsed = parse(info, v)) {
        s.from_env = true;
        s.env_value = *parsed;
      } else {
        reports_.push_back(std::string(info.name) + "=" + quoted(v) + " is not " + expected(info) +
                           "; using the default, " + default_text(info));
      }
    }
    s.value.store(s.from_env ? s.env_value : default_value(info), std::memory_order_relaxed);
  }
}

void Store::mark_used(const SettingInfo& info, Slot& s) noexcept {
  // Under the lock, so that a set() racing with the first use either lands before it or
  // sees it: the value a read_once setting's first reader gets is its value for good.
  if (info.read_once && !s.used.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mu_);
    s.used.store(true, std::memory_order_release);
  }
}

uint64_t Store::value(Key key) noexcept {
  const SettingInfo& i = info(key);
  Slot& s = slot(key);
  mark_used(i, s);
  return s.value.load(std::memory_order_acquire);
}

std::string Store::path_locked(const SettingInfo& info, const Slot& s) const {
  if (s.overridden && !s.override_path.empty()) return s.override_path;
  if (!s.overridden && s.from_env) return s.env_path;
  return info.default_text;
}

std::string Store::path(Key key) {
  const SettingInfo& i = info(key);
  Slot& s = slot(key);
  std::lock_guard<std::mutex> lock(mu_);
  if (i.read_once) s.used.store(true, std::memory_order_release);
  return path_locked(i, s);
}

bool Store::used(Key key) const noexcept { return slots_[static_cast<size_t>(key)].used.load(); }

std::string Store::text(Key key) {
  const SettingInfo& i = info(key);
  const Slot& s = slots_[static_cast<size_t>(key)];
  if (i.type == Type::Path) {
    std::lock_guard<std::mutex> lock(mu_);
    return path_locked(i, s);
  }
  return to_text(i, s.value.load(std::memory_order_acquire));
}

Error Store::set(Key key, const char* value, std::string* why) noexcept {
  try {
    const SettingInfo& i = info(key);
    Slot& s = slot(key);
    uint64_t parsed = 0;
    if (value != nullptr && i.type != Type::Path) {
      const std::optional<uint64_t> p = parse(i, value);
      if (!p) {
        *why = std::string(i.name) + "=" + quoted(value) + " is not " + expected(i);
        return Error::InvalidArgument;
      }
      parsed = *p;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (i.read_once && s.used.load(std::memory_order_relaxed)) {
      // Asking for the value already in force changes nothing, so it is no error.
      bool same = false;
      if (i.type == Type::Path) {
        const std::string now = path_locked(i, s);
        if (value == nullptr) {
          same = now == (s.from_env ? s.env_path : std::string(i.default_text));
        } else {
          same = now == (value[0] != '\0' ? std::string(value) : std::string(i.default_text));
        }
      } else {
        const uint64_t want = value != nullptr ? parsed : (s.from_env ? s.env_value : default_value(i));
        same = want == s.value.load(std::memory_order_relaxed);
      }
      if (!same) {
        std::string stays = i.type == Type::Path ? quoted(path_locked(i, s)) : to_text(i, s.value.load());
        if (stays.empty()) stays = "unset";
        *why = std::string(i.name) + " is read once, at its first use, and has been used: it stays " + stays;
        return Error::InvalidState;
      }
      return Error::Ok;
    }
    if (value == nullptr) {
      s.overridden = false;
      s.override_path.clear();
      s.value.store(s.from_env ? s.env_value : default_value(i), std::memory_order_release);
    } else {
      s.overridden = true;
      if (i.type == Type::Path) s.override_path = value;
      s.value.store(parsed, std::memory_order_release);
    }
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return Error::MemoryAllocationFailed;  // *why may be empty: the caller says what failed
  }
}

std::vector<std::string> Store::take_reports() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(reports_);
  return out;
}

namespace {

const char* real_environment(const char* name) { return std::getenv(name); }

std::atomic<Store*> g_store{nullptr};

Store* build_store(std::vector<std::string>* reports) noexcept {
  try {
    auto* s = new Store(&real_environment);  // never freed: settings are read during exit too
    *reports = s->take_reports();
    return s;
  } catch (const std::bad_alloc&) {
    // Out of memory this early: the defaults, which need none.
    static Store defaults(nullptr);
    return &defaults;
  }
}

Store& build_once() noexcept {
  static std::once_flag once;
  std::vector<std::string> reports;
  std::call_once(once, [&] { g_store.store(build_store(&reports), std::memory_order_release); });
  // Logged after the store is in place: the log reads SLIMCUDA_LOG_LEVEL from it.
  for (const std::string& r : reports) log(LogLevel::Warning, "%s", r.c_str());
  return *g_store.load(std::memory_order_acquire);
}

}  // namespace

Store& store() noexcept {
  Store* s = g_store.load(std::memory_order_acquire);
  return s != nullptr ? *s : build_once();
}

}  // namespace detail

bool get_bool(Key key) noexcept { return detail::store().value(key) != 0; }
uint64_t get_integer(Key key) noexcept { return detail::store().value(key); }
size_t get_enum(Key key) noexcept { return static_cast<size_t>(detail::store().value(key)); }
std::string get_path(Key key) { return detail::store().path(key); }

Error set(Key key, const char* value, std::string* why) noexcept { return detail::store().set(key, value, why); }

namespace {

Error unknown(std::string_view name, std::string* why) noexcept {
  try {
    *why = "no setting is called \"" + std::string(name) + "\" (docs/configuration.md lists them:";
    for (const SettingInfo& s : settings()) *why += std::string(" ") + s.name;
    *why += ")";
  } catch (const std::bad_alloc&) {
  }
  return Error::InvalidArgument;
}

}  // namespace

Error set(std::string_view name, const char* value, std::string* why) noexcept {
  const SettingInfo* s = find(name);
  if (s == nullptr) return unknown(name, why);
  return set(s->key, value, why);
}

Error get_text(std::string_view name, std::string* value, std::string* why) noexcept {
  const SettingInfo* s = find(name);
  if (s == nullptr) return unknown(name, why);
  try {
    *value = detail::store().text(s->key);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return Error::MemoryAllocationFailed;
  }
}

}  // namespace slimcuda::config
