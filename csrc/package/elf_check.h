// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "slimcuda/error.h"

namespace slimcuda {

/// Checks that `size` bytes are a shared object the dynamic loader can map without reading
/// past them: a 64-bit little-endian x86-64 ELF of type ET_DYN, its program headers inside
/// the file, every PT_LOAD's file range inside the file and its alignment consistent, the
/// loadable segments in order and not overlapping, one PT_DYNAMIC inside a loaded range
/// ending in DT_NULL, and the dynamic table's string and symbol tables inside loaded
/// memory. What it cannot judge is the code: a well-formed library still runs its
/// constructors when loaded (see model.h). InvalidProgram with the reason otherwise
/// (another machine's ELF names the machine).
[[nodiscard]] Error check_elf(const uint8_t* data, size_t size, const char* function) noexcept;

}  // namespace slimcuda
