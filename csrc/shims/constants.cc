// SPDX-License-Identifier: Apache-2.0
// Constant shims: dtype, device type and layout codes (c10's numbering), grad mode, warn.
#include "csrc/config/log.h"
#include "csrc/shims/shim_util.h"
#include "slimcuda/scalar_type.h"

using slimcuda::DeviceType;
using slimcuda::ScalarType;

namespace {

constexpr int32_t code(ScalarType t) { return static_cast<int32_t>(t); }
constexpr int32_t code(DeviceType t) { return static_cast<int32_t>(t); }

// Per thread, like PyTorch's GradMode; on by default.
thread_local bool tls_grad_mode = true;

}  // namespace

extern "C" {

int32_t SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(void) { return code(DeviceType::CPU); }
int32_t SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(void) { return code(DeviceType::CUDA); }

int32_t SLIMCUDA_SHIM(aoti_torch_dtype_bfloat16)(void) { return code(ScalarType::BFloat16); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float16)(void) { return code(ScalarType::Half); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float32)(void) { return code(ScalarType::Float); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_float64)(void) { return code(ScalarType::Double); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_uint8)(void) { return code(ScalarType::Byte); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int8)(void) { return code(ScalarType::Char); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int16)(void) { return code(ScalarType::Short); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int32)(void) { return code(ScalarType::Int); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_int64)(void) { return code(ScalarType::Long); }
int32_t SLIMCUDA_SHIM(aoti_torch_dtype_bool)(void) { return code(ScalarType::Bool); }

size_t SLIMCUDA_SHIM(aoti_torch_dtype_element_size)(int32_t dtype) {
  return slimcuda::is_supported_scalar_type(dtype) ? slimcuda::element_size(static_cast<ScalarType>(dtype)) : 0;
}

int32_t SLIMCUDA_SHIM(aoti_torch_layout_strided)(void) { return 0; }

bool SLIMCUDA_SHIM(aoti_torch_grad_mode_is_enabled)(void) { return tls_grad_mode; }
void SLIMCUDA_SHIM(aoti_torch_grad_mode_set_enabled)(bool enabled) { tls_grad_mode = enabled; }

void SLIMCUDA_SHIM(aoti_torch_warn)(const char* func, const char* file, uint32_t line, const char* msg) {
  slimcuda::config::log(slimcuda::config::LogLevel::Warning, "warning from model: %s (%s:%u): %s", func ? func : "?",
                        file ? file : "?", line, msg ? msg : "");
}

}  // extern "C"
