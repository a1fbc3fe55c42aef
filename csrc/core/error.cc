// SPDX-License-Identifier: Apache-2.0
#include "slimcuda/error.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda {

const char* error_name(Error error) noexcept {
  switch (error) {
    case Error::Ok:
      return "Ok";
    case Error::Internal:
      return "Internal";
    case Error::InvalidState:
      return "InvalidState";
    case Error::NotSupported:
      return "NotSupported";
    case Error::NotImplemented:
      return "NotImplemented";
    case Error::InvalidArgument:
      return "InvalidArgument";
    case Error::InvalidType:
      return "InvalidType";
    case Error::NotFound:
      return "NotFound";
    case Error::MemoryAllocationFailed:
      return "MemoryAllocationFailed";
    case Error::AccessFailed:
      return "AccessFailed";
    case Error::InvalidProgram:
      return "InvalidProgram";
    case Error::OutOfResources:
      return "OutOfResources";
  }
  return "Unknown";
}

const char* scalar_type_name(ScalarType type) noexcept {
  switch (type) {
    case ScalarType::Byte:
      return "uint8";
    case ScalarType::Char:
      return "int8";
    case ScalarType::Short:
      return "int16";
    case ScalarType::Int:
      return "int32";
    case ScalarType::Long:
      return "int64";
    case ScalarType::Half:
      return "float16";
    case ScalarType::Float:
      return "float32";
    case ScalarType::Double:
      return "float64";
    case ScalarType::Bool:
      return "bool";
    case ScalarType::BFloat16:
      return "bfloat16";
  }
  return "unknown";
}

}  // namespace slimcuda
