// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "slimcuda/error.h"

namespace slimcuda {

/// Checks that `size` bytes are a shared object the dynamic loader can map and link
/// without reading or writing out of bounds or failing one of its assertions: a 64-bit
/// little-endian x86-64 ELF of type ET_DYN (not a position-independent executable), its
/// program headers inside the file, every PT_LOAD's file range inside the file and its
/// alignment consistent, the loadable segments in order and not overlapping, the segments
/// glibc reads at their address (PT_DYNAMIC, PT_PHDR, notes, TLS, RELRO) inside them, and
/// the dynamic-linking tables glibc trusts: every table inside the library's bytes and
/// aligned, the constants it asserts, relocations writing only into writable memory outside
/// the dynamic section and naming existing symbols, hash tables, symbol versions, imported
/// symbols of default visibility, functions and init/fini entries pointing into code.
/// What it cannot judge is the code: a well-formed library still runs its constructors when
/// loaded (see model.h), and corrupted code, or an init function moved to other code, can
/// still crash there. InvalidProgram with the reason otherwise (another machine's ELF names
/// the machine).
[[nodiscard]] Error check_elf(const uint8_t* data, size_t size) noexcept;

/// check_elf's checks of the ELF header alone, from the first `n` bytes of a library of
/// `size` bytes (its program headers must lie inside those `size`): what can be judged from
/// a compressed library's first inflated bytes, before the rest is paid for. The same errors
/// as check_elf's for the header (n < 64 -> InvalidProgram).
[[nodiscard]] Error check_elf_header(const uint8_t* data, size_t n, uint64_t size) noexcept;
/// check_elf, and on success the names of the symbols the loader must find elsewhere for the
/// library to link: undefined, not weak, named by a relocation (sorted, each once). Left
/// empty on failure.
[[nodiscard]] Error check_elf(const uint8_t* data, size_t size, std::vector<std::string>* imports) noexcept;

}  // namespace slimcuda
