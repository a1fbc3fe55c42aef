// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace slimcuda {

/// Error codes, ABI-stable: the numbers cross the C ABI unchanged (slimcuda.h repeats them
/// as SLIMCUDA_ERROR_*). Grouped by category: 0x0* system, 0x1* logic, 0x2* resource.
enum class Error : int32_t {
  Ok = 0x00,
  Internal = 0x01,      ///< A CUDA or system call failed; the last-error message has its text.
  InvalidState = 0x02,  ///< The call is not valid now (e.g. pop with nothing pushed).
  NotSupported = 0x10,  ///< Valid request this build or machine cannot serve (e.g. no GPU).
  NotImplemented = 0x11,
  InvalidArgument = 0x12,
  InvalidType = 0x13,
  NotFound = 0x20,
  MemoryAllocationFailed = 0x21,
  AccessFailed = 0x22,
  InvalidProgram = 0x23,
  OutOfResources = 0x25,
};

/// "InvalidArgument" for Error::InvalidArgument; "Unknown" for values outside the enum.
[[nodiscard]] const char* error_name(Error error) noexcept;

}  // namespace slimcuda
