// SPDX-License-Identifier: Apache-2.0
// The C ABI of the configuration and the log (slimcuda.h) over csrc/config.
#include <cstring>
#include <string>

#include "csrc/config/config.h"
#include "csrc/config/log.h"
#include "csrc/entry/c_entry.h"
#include "slimcuda/error.h"
#include "slimcuda/last_error.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda {
namespace {

static_assert(SLIMCUDA_LOG_DEBUG == static_cast<int>(config::LogLevel::Debug));
static_assert(SLIMCUDA_LOG_INFO == static_cast<int>(config::LogLevel::Info));
static_assert(SLIMCUDA_LOG_WARNING == static_cast<int>(config::LogLevel::Warning));
static_assert(SLIMCUDA_LOG_ERROR == static_cast<int>(config::LogLevel::Error));

// The configuration reports what went wrong in `why`; the entry point names itself.
Error failed(Error e, const std::string& why) {
  // An empty `why`: the text itself could not be allocated.
  return set_last_error(e, "%s", why.empty() ? "out of host memory" : why.c_str());
}

}  // namespace
}  // namespace slimcuda

using namespace slimcuda;  // NOLINT: the C entry points below are thin shells

extern "C" {

int32_t slimcuda_config_set(const char* name, const char* value) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(name != nullptr, Error::InvalidArgument, "null name");
    std::string why;
    const Error e = config::set(name, value, &why);
    return e == Error::Ok ? e : failed(e, why);
  });
}

int32_t slimcuda_config_get(const char* name, char* buf, size_t capacity, size_t* ret_len) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(name != nullptr, Error::InvalidArgument, "null name");
    SLIMCUDA_CHECK_OR_RETURN(ret_len != nullptr, Error::InvalidArgument, "null ret_len");
    SLIMCUDA_CHECK_OR_RETURN(buf != nullptr || capacity == 0, Error::InvalidArgument, "null buf with capacity %zu",
                             capacity);
    std::string value, why;
    const Error e = config::get_text(name, &value, &why);
    if (e != Error::Ok) return failed(e, why);
    if (capacity > 0) {
      const size_t n = value.size() < capacity ? value.size() : capacity - 1;
      std::memcpy(buf, value.data(), n);
      buf[n] = '\0';
    }
    *ret_len = value.size();
    return Error::Ok;
  });
}

int32_t slimcuda_set_log_callback(slimcuda_log_fn fn, void* user) {
  config::set_log_callback(fn, user);
  return SLIMCUDA_OK;
}

}  // extern "C"
