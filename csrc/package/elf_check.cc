// SPDX-License-Identifier: Apache-2.0
// The shape checks glibc's loader relies on before it maps a shared object: a library that
// passes them is mapped within its own bytes (no SIGBUS from a segment past the end of the
// memfd, no dynamic table read out of bounds).
#include "csrc/package/elf_check.h"

#include <elf.h>

#include <cstring>

#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// Far above any real model library, far below what would overflow the checks' arithmetic.
constexpr uint64_t kMaxMemory = uint64_t{1} << 40;
constexpr uint16_t kMaxProgramHeaders = 256;

const char* machine_name(uint16_t m) {
  switch (m) {
    case EM_386:
      return "x86 (32-bit)";
    case EM_ARM:
      return "arm";
    case EM_AARCH64:
      return "aarch64";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv";
    case EM_S390:
      return "s390";
    case EM_CUDA:
      return "cuda";
    default:
      return "unknown";
  }
}

template <typename T>
T read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the bytes need not be aligned
  return v;
}

bool inside(uint64_t offset, uint64_t length, uint64_t size) { return offset <= size && length <= size - offset; }

bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

Error check_elf(const uint8_t* data, size_t size, const char* function) noexcept {
  SLIMCUDA_CHECK_OR_RETURN_AT(function, data != nullptr || size == 0, Error::InvalidArgument, "null library bytes");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, size >= sizeof(Elf64_Ehdr), Error::InvalidProgram,
                              "library of %zu bytes: too short for an ELF header", size);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, std::memcmp(data, ELFMAG, SELFMAG) == 0, Error::InvalidProgram,
                              "the library is not an ELF file (bad magic)");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, data[EI_CLASS] == ELFCLASS64, Error::InvalidProgram,
                              "the library is a %s ELF; want 64-bit",
                              data[EI_CLASS] == ELFCLASS32 ? "32-bit" : "malformed");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, data[EI_DATA] == ELFDATA2LSB, Error::InvalidProgram,
                              "the library is a big-endian ELF; want little-endian x86-64");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, data[EI_VERSION] == EV_CURRENT, Error::InvalidProgram,
                              "ELF identification version %u", data[EI_VERSION]);
  const auto eh = read<Elf64_Ehdr>(data);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, eh.e_machine == EM_X86_64, Error::InvalidProgram,
                              "the library is an ELF for machine %u (%s); this slimcuda runs x86-64 libraries",
                              eh.e_machine, machine_name(eh.e_machine));
  SLIMCUDA_CHECK_OR_RETURN_AT(function, eh.e_type == ET_DYN, Error::InvalidProgram,
                              "the library is an ELF of type %u; want a shared object (ET_DYN)", eh.e_type);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, eh.e_version == EV_CURRENT && eh.e_ehsize == sizeof(Elf64_Ehdr),
                              Error::InvalidProgram, "malformed ELF header (version %u, header size %u)", eh.e_version,
                              eh.e_ehsize);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, eh.e_phentsize == sizeof(Elf64_Phdr), Error::InvalidProgram,
                              "program header entries of %u bytes; want %zu", eh.e_phentsize, sizeof(Elf64_Phdr));
  SLIMCUDA_CHECK_OR_RETURN_AT(function, eh.e_phnum > 0 && eh.e_phnum <= kMaxProgramHeaders, Error::InvalidProgram,
                              "%u program headers (want 1..%u)", eh.e_phnum, kMaxProgramHeaders);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, inside(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), size),
                              Error::InvalidProgram,
                              "program headers at offset %llu run past the end of the %zu-byte library "
                              "(truncated?)",
                              static_cast<unsigned long long>(eh.e_phoff), size);

  // Loadable segments: inside the file, in address order, not overlapping.
  int loads = 0, dynamics = 0;
  uint64_t last_end = 0, memory = 0;
  Elf64_Phdr dynamic{};
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const auto ph = read<Elf64_Phdr>(data + eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    switch (ph.p_type) {
      case PT_INTERP:
        return set_last_error(Error::InvalidProgram, function,
                              "the library has an interpreter (PT_INTERP): it is an executable, not a shared object");
      case PT_LOAD: {
        SLIMCUDA_CHECK_OR_RETURN_AT(function, inside(ph.p_offset, ph.p_filesz, size), Error::InvalidProgram,
                                    "loadable segment %u (file bytes %llu..+%llu) runs past the end of the %zu-byte "
                                    "library (truncated?)",
                                    i, static_cast<unsigned long long>(ph.p_offset),
                                    static_cast<unsigned long long>(ph.p_filesz), size);
        SLIMCUDA_CHECK_OR_RETURN_AT(
            function, ph.p_filesz <= ph.p_memsz && ph.p_memsz <= kMaxMemory && ph.p_vaddr <= kMaxMemory,
            Error::InvalidProgram, "loadable segment %u has sizes file %llu, memory %llu", i,
            static_cast<unsigned long long>(ph.p_filesz), static_cast<unsigned long long>(ph.p_memsz));
        SLIMCUDA_CHECK_OR_RETURN_AT(
            function,
            ph.p_align <= 1 || (is_power_of_two(ph.p_align) && ph.p_offset % ph.p_align == ph.p_vaddr % ph.p_align),
            Error::InvalidProgram, "loadable segment %u is misaligned (align %llu)", i,
            static_cast<unsigned long long>(ph.p_align));
        SLIMCUDA_CHECK_OR_RETURN_AT(function, loads == 0 || ph.p_vaddr >= last_end, Error::InvalidProgram,
                                    "loadable segment %u overlaps or precedes the one before it", i);
        last_end = ph.p_vaddr + ph.p_memsz;
        memory += ph.p_memsz;
        SLIMCUDA_CHECK_OR_RETURN_AT(function, memory <= kMaxMemory, Error::InvalidProgram,
                                    "the library's segments need more than %llu bytes",
                                    static_cast<unsigned long long>(kMaxMemory));
        ++loads;
        break;
      }
      case PT_DYNAMIC:
        dynamic = ph;
        ++dynamics;
        break;
      case PT_TLS:
      case PT_GNU_RELRO:
      case PT_GNU_EH_FRAME:
      case PT_NOTE:
        SLIMCUDA_CHECK_OR_RETURN_AT(
            function, inside(ph.p_offset, ph.p_filesz, size) && ph.p_filesz <= ph.p_memsz && ph.p_memsz <= kMaxMemory,
            Error::InvalidProgram, "segment %u (type 0x%x) lies outside the library", i, ph.p_type);
        break;
      default:
        break;  // PT_GNU_STACK, PT_PHDR, vendor types: nothing the loader maps from the file
    }
  }
  SLIMCUDA_CHECK_OR_RETURN_AT(function, loads > 0, Error::InvalidProgram, "the library has no loadable segment");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, dynamics == 1, Error::InvalidProgram,
                              "the library has %d dynamic sections; a shared object has one", dynamics);

  // The dynamic table: inside a loadable segment's file bytes, whole entries, ending in DT_NULL.
  SLIMCUDA_CHECK_OR_RETURN_AT(function,
                              inside(dynamic.p_offset, dynamic.p_filesz, size) &&
                                  dynamic.p_filesz % sizeof(Elf64_Dyn) == 0 && dynamic.p_filesz > 0,
                              Error::InvalidProgram, "the dynamic section (offset %llu, %llu bytes) is malformed",
                              static_cast<unsigned long long>(dynamic.p_offset),
                              static_cast<unsigned long long>(dynamic.p_filesz));
  // Addresses in the dynamic table must land in loaded memory: map each to its segment.
  auto loaded = [&](uint64_t vaddr, uint64_t length) {
    for (uint16_t i = 0; i < eh.e_phnum; ++i) {
      const auto ph = read<Elf64_Phdr>(data + eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
      if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && inside(vaddr - ph.p_vaddr, length, ph.p_memsz)) return true;
    }
    return false;
  };
  SLIMCUDA_CHECK_OR_RETURN_AT(function, loaded(dynamic.p_vaddr, dynamic.p_filesz), Error::InvalidProgram,
                              "the dynamic section is not inside a loadable segment");
  const size_t entries = dynamic.p_filesz / sizeof(Elf64_Dyn);
  bool terminated = false;
  uint64_t strtab = 0, strsz = 0, symtab = 0;
  bool has_strtab = false, has_strsz = false, has_symtab = false;
  for (size_t k = 0; k < entries && !terminated; ++k) {
    const auto d = read<Elf64_Dyn>(data + dynamic.p_offset + k * sizeof(Elf64_Dyn));
    switch (d.d_tag) {
      case DT_NULL:
        terminated = true;
        break;
      case DT_STRTAB:
        strtab = d.d_un.d_ptr;
        has_strtab = true;
        break;
      case DT_STRSZ:
        strsz = d.d_un.d_val;
        has_strsz = true;
        break;
      case DT_SYMTAB:
        symtab = d.d_un.d_ptr;
        has_symtab = true;
        break;
      default:
        break;
    }
  }
  SLIMCUDA_CHECK_OR_RETURN_AT(function, terminated, Error::InvalidProgram,
                              "the dynamic section does not end with DT_NULL");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, has_strtab && has_strsz && has_symtab, Error::InvalidProgram,
                              "the dynamic section lacks its string or symbol table");
  SLIMCUDA_CHECK_OR_RETURN_AT(function, loaded(strtab, strsz) && loaded(symtab, sizeof(Elf64_Sym)),
                              Error::InvalidProgram, "the dynamic string or symbol table is outside loaded memory");
  return Error::Ok;
}

}  // namespace slimcuda
