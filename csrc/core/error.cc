#include "slimcuda/error.h"

namespace slimcuda {

const char* error_name(Error error) noexcept {
  switch (error) {
    case Error::Ok: return "Ok";
    case Error::Internal: return "Internal";
    case Error::InvalidState: return "InvalidState";
    case Error::NotSupported: return "NotSupported";
    case Error::NotImplemented: return "NotImplemented";
    case Error::InvalidArgument: return "InvalidArgument";
    case Error::InvalidType: return "InvalidType";
    case Error::NotFound: return "NotFound";
    case Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::AccessFailed: return "AccessFailed";
    case Error::InvalidProgram: return "InvalidProgram";
    case Error::OutOfResources: return "OutOfResources";
  }
  return "Unknown";
}

}  // namespace slimcuda
