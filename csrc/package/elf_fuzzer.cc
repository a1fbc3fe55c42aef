// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the ELF check: any bytes must give Ok or InvalidProgram, never a
// crash or a sanitizer report; and whatever it accepts must have its program headers and
// dynamic table inside the bytes (re-read here independently). Built and run by
// tools/fuzz/fuzz.sh.
#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "csrc/package/elf_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const slimcuda::Error e = slimcuda::check_elf(data, size);
  if (e != slimcuda::Error::Ok && e != slimcuda::Error::InvalidProgram) __builtin_trap();
  if (e != slimcuda::Error::Ok) return 0;
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_phoff > size || uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) > size - eh.e_phoff) __builtin_trap();
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data + eh.e_phoff + uint64_t{i} * sizeof ph, sizeof ph);
    if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) && (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)) {
      __builtin_trap();
    }
  }
  return 0;
}
