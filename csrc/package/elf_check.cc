// SPDX-License-Identifier: Apache-2.0
// The checks glibc's loader relies on before it maps and links a shared object: a library
// that passes them is mapped within its own bytes (no SIGBUS from a segment past the end of
// the memfd) and linked without glibc reading or writing out of bounds or failing one of
// its assertions (library_test's ElfCheck cases: of 1000 random corruptions of the
// linking tables' structure, 256 killed dlopen with the shape checks alone, none with the
// table checks).
#include "csrc/package/elf_check.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

// The library as glibc maps it: the segments glibc reads from memory, and the
// dynamic-linking tables it reads and writes while it loads a library (relocations,
// symbols, hash tables, versions, init and fini functions). glibc trusts them: an index
// past a table, a relocation aimed at read-only memory or a bad constant crashes the
// process inside dlopen, or stops it with "Inconsistency detected by ld.so" (_exit(127)).
// Each table is checked to lie in the library's file bytes, and each entry to point where
// glibc will use it. What is not checked is what the code does with what it is given.
class LoadedImage {
 public:
  LoadedImage(const uint8_t* data, size_t size, std::vector<Elf64_Phdr> loads, uint64_t tls_memsz)
      : data_(data), size_(size), loads_(std::move(loads)), tls_memsz_(tls_memsz) {}

  Error check(const Elf64_Ehdr& eh, const Elf64_Phdr& dynamic) {
    SLIMCUDA_RETURN_IF_ERROR(check_segments(eh));
    SLIMCUDA_RETURN_IF_ERROR(read_entries(dynamic));
    SLIMCUDA_RETURN_IF_ERROR(check_constants());
    SLIMCUDA_RETURN_IF_ERROR(check_strings());
    SLIMCUDA_RETURN_IF_ERROR(count_symbols());
    SLIMCUDA_RETURN_IF_ERROR(check_versions());
    for (uint64_t k = 0; k < symbols_; ++k) SLIMCUDA_RETURN_IF_ERROR(check_symbol(k));
    SLIMCUDA_RETURN_IF_ERROR(check_relocations());
    return check_init_fini();
  }

 private:
  static constexpr uint32_t kAny = 0;

  // The segment holding [vaddr, vaddr + length) in memory with `flags`, or nullptr.
  const Elf64_Phdr* segment(uint64_t vaddr, uint64_t length, uint32_t flags) const {
    for (const Elf64_Phdr& ph : loads_) {
      if (vaddr >= ph.p_vaddr && inside(vaddr - ph.p_vaddr, length, ph.p_memsz) && (ph.p_flags & flags) == flags) {
        return &ph;
      }
    }
    return nullptr;
  }
  // The file bytes of [vaddr, vaddr + length) when one segment holds them all in the file.
  const uint8_t* file_bytes(uint64_t vaddr, uint64_t length) const {
    for (const Elf64_Phdr& ph : loads_) {
      if (vaddr >= ph.p_vaddr && inside(vaddr - ph.p_vaddr, length, ph.p_filesz)) {
        return data_ + ph.p_offset + (vaddr - ph.p_vaddr);
      }
    }
    return nullptr;
  }
  bool executable(uint64_t vaddr) const { return segment(vaddr, 1, PF_X) != nullptr; }
  bool writable(uint64_t vaddr, uint64_t length) const { return segment(vaddr, length, PF_W) != nullptr; }
  bool in_dynamic(uint64_t vaddr) const { return vaddr >= dynamic_start_ && vaddr - dynamic_start_ < dynamic_size_; }
  bool has(int64_t tag) const { return value_.count(tag) != 0; }
  // Inside the init or fini array (the relocations check_init_fini looks at).
  bool in_arrays(uint64_t vaddr) const {
    for (const auto& [array, bytes] :
         {std::pair<int64_t, int64_t>{DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, {DT_FINI_ARRAY, DT_FINI_ARRAYSZ}}) {
      if (has(array) && vaddr >= get(array) && vaddr - get(array) < get(bytes)) return true;
    }
    return false;
  }
  uint64_t get(int64_t tag) const {
    const auto it = value_.find(tag);
    return it == value_.end() ? 0 : it->second;
  }
  // A string of the dynamic string table: starts and ends (NUL) inside it.
  bool string_ok(uint64_t offset) const {
    return offset < strsz_ && std::memchr(strtab_ + offset, '\0', strsz_ - offset) != nullptr;
  }
  const char* string_at(uint64_t offset) const { return reinterpret_cast<const char*>(strtab_ + offset); }

  // The segments glibc reads or protects at their address once the library is mapped: each
  // inside a loadable segment (their file offsets say nothing about that), the program
  // headers where PT_PHDR says, RELRO in writable memory.
  Error check_segments(const Elf64_Ehdr& eh) {
    for (uint16_t i = 0; i < eh.e_phnum; ++i) {
      const auto ph = read<Elf64_Phdr>(data_ + eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
      switch (ph.p_type) {
        case PT_PHDR:
          SLIMCUDA_CHECK_OR_RETURN(ph.p_offset == eh.e_phoff &&
                                       ph.p_filesz == uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) &&
                                       file_bytes(ph.p_vaddr, ph.p_filesz) == data_ + eh.e_phoff,
                                   Error::InvalidProgram, "PT_PHDR does not describe the program headers");
          break;
        case PT_NOTE:
        case PT_GNU_PROPERTY:
        case PT_TLS:  // its initialization image is copied from the mapped library; .tbss is not mapped
          SLIMCUDA_CHECK_OR_RETURN(file_bytes(ph.p_vaddr, ph.p_filesz) != nullptr &&
                                       segment(ph.p_vaddr, ph.p_type == PT_TLS ? 0 : ph.p_memsz, kAny) != nullptr,
                                   Error::InvalidProgram, "segment %u (type 0x%x) is not inside a loadable segment", i,
                                   ph.p_type);
          SLIMCUDA_CHECK_OR_RETURN(ph.p_type != PT_TLS || ph.p_align <= 1 || is_power_of_two(ph.p_align),
                                   Error::InvalidProgram, "the TLS segment's alignment %llu is not a power of two",
                                   static_cast<unsigned long long>(ph.p_align));
          break;
        case PT_GNU_EH_FRAME:
          SLIMCUDA_CHECK_OR_RETURN(segment(ph.p_vaddr, ph.p_memsz, kAny) != nullptr, Error::InvalidProgram,
                                   "the exception-frame segment is outside loaded memory");
          break;
        case PT_GNU_RELRO: {
          // glibc protects whole pages: lld ends RELRO at the page boundary after its segment.
          const Elf64_Phdr* rw = segment(ph.p_vaddr, 0, PF_W);
          const uint64_t page = rw == nullptr ? 1 : std::min<uint64_t>(std::max<uint64_t>(rw->p_align, 4096), 1 << 30);
          SLIMCUDA_CHECK_OR_RETURN(rw != nullptr && ph.p_memsz <= kMaxMemory &&
                                       ph.p_vaddr + ph.p_memsz <= (rw->p_vaddr + rw->p_memsz + page - 1) / page * page,
                                   Error::InvalidProgram,
                                   "the RELRO segment is not inside one writable loadable segment");
          break;
        }
        default:
          break;
      }
    }
    return Error::Ok;
  }

  // The entries as glibc reads them: at the segment's address in the mapped library.
  Error read_entries(const Elf64_Phdr& dynamic) {
    dynamic_start_ = dynamic.p_vaddr;
    dynamic_size_ = dynamic.p_memsz;
    const uint8_t* table = file_bytes(dynamic.p_vaddr, dynamic.p_filesz);
    SLIMCUDA_CHECK_OR_RETURN(table != nullptr, Error::InvalidProgram,
                             "the dynamic section is not inside a loadable segment");
    const size_t entries = dynamic.p_filesz / sizeof(Elf64_Dyn);
    for (size_t k = 0; k < entries; ++k) {
      const auto d = read<Elf64_Dyn>(table + k * sizeof(Elf64_Dyn));
      if (d.d_tag == DT_NULL) {
        terminated_ = true;
        break;
      }
      if (d.d_tag == DT_NEEDED) needed_.push_back(d.d_un.d_val);
      value_[d.d_tag] = d.d_un.d_val;  // the last one counts, as in glibc
    }
    SLIMCUDA_CHECK_OR_RETURN(terminated_, Error::InvalidProgram, "the dynamic section does not end with DT_NULL");
    return Error::Ok;
  }

  Error check_constants() {
    SLIMCUDA_CHECK_OR_RETURN(has(DT_STRTAB) && has(DT_STRSZ) && has(DT_SYMTAB), Error::InvalidProgram,
                             "the dynamic section lacks its string or symbol table");
    SLIMCUDA_CHECK_OR_RETURN(!has(DT_TEXTREL) && (get(DT_FLAGS) & DF_TEXTREL) == 0, Error::InvalidProgram,
                             "the library has text relocations (not built as position-independent code)");
    SLIMCUDA_CHECK_OR_RETURN((get(DT_FLAGS_1) & DF_1_PIE) == 0, Error::InvalidProgram,
                             "the library is a position-independent executable, not a shared object");
    SLIMCUDA_CHECK_OR_RETURN(!has(DT_REL) && !has(DT_RELSZ), Error::InvalidProgram,
                             "the library has REL relocations; x86-64 uses RELA");
    struct Want {
      int64_t tag;
      uint64_t value;
      const char* what;
    };
    const Want wants[] = {{DT_RELAENT, sizeof(Elf64_Rela), "DT_RELAENT"},
                          {DT_SYMENT, sizeof(Elf64_Sym), "DT_SYMENT"},
                          {DT_PLTREL, DT_RELA, "DT_PLTREL"},
                          {DT_RELRENT, sizeof(Elf64_Addr), "DT_RELRENT"}};
    for (const Want& w : wants) {
      SLIMCUDA_CHECK_OR_RETURN(!has(w.tag) || get(w.tag) == w.value, Error::InvalidProgram,
                               "the dynamic section's %s is %llu; want %llu", w.what,
                               static_cast<unsigned long long>(get(w.tag)), static_cast<unsigned long long>(w.value));
    }
    // glibc reads DT_RELAENT and DT_RELRENT whenever their tables are there, and binds the
    // PLT's relocations only when DT_PLTREL says they are RELA.
    SLIMCUDA_CHECK_OR_RETURN(
        (!has(DT_RELA) || has(DT_RELAENT)) && (!has(DT_RELR) || has(DT_RELRENT)) && (!has(DT_JMPREL) || has(DT_PLTREL)),
        Error::InvalidProgram, "a relocation table without its entry size or type");
    // Linkers align every table to its entries; a pointer that is not was moved.
    struct Aligned {
      int64_t tag;
      uint64_t alignment;
    };
    const Aligned aligned[] = {{DT_SYMTAB, 8},   {DT_RELA, 8},       {DT_JMPREL, 8},    {DT_RELR, 8},
                               {DT_GNU_HASH, 8}, {DT_HASH, 4},       {DT_VERSYM, 2},    {DT_VERNEED, 4},
                               {DT_VERDEF, 4},   {DT_INIT_ARRAY, 8}, {DT_FINI_ARRAY, 8}};
    for (const Aligned& a : aligned) {
      SLIMCUDA_CHECK_OR_RETURN(get(a.tag) % a.alignment == 0, Error::InvalidProgram,
                               "the dynamic section's table (tag 0x%llx) at 0x%llx is not %llu-byte aligned",
                               static_cast<unsigned long long>(a.tag), static_cast<unsigned long long>(get(a.tag)),
                               static_cast<unsigned long long>(a.alignment));
    }
    SLIMCUDA_CHECK_OR_RETURN(
        has(DT_RELA) == has(DT_RELASZ) && has(DT_JMPREL) == has(DT_PLTRELSZ) && has(DT_RELR) == has(DT_RELRSZ),
        Error::InvalidProgram, "a relocation table without its size, or a size without its table");
    SLIMCUDA_CHECK_OR_RETURN(get(DT_RELASZ) % sizeof(Elf64_Rela) == 0 && get(DT_PLTRELSZ) % sizeof(Elf64_Rela) == 0 &&
                                 get(DT_RELRSZ) % sizeof(Elf64_Addr) == 0,
                             Error::InvalidProgram, "a relocation table's size is not a whole number of entries");
    return Error::Ok;
  }

  Error check_strings() {
    strsz_ = get(DT_STRSZ);
    strtab_ = file_bytes(get(DT_STRTAB), strsz_);
    SLIMCUDA_CHECK_OR_RETURN(strtab_ != nullptr && strsz_ > 0, Error::InvalidProgram,
                             "the dynamic string table is outside the library's loaded bytes");
    for (uint64_t n : needed_) {
      SLIMCUDA_CHECK_OR_RETURN(string_ok(n), Error::InvalidProgram, "a DT_NEEDED name lies outside the string table");
    }
    for (int64_t tag : {DT_SONAME, DT_RPATH, DT_RUNPATH}) {
      SLIMCUDA_CHECK_OR_RETURN(!has(tag) || string_ok(get(tag)), Error::InvalidProgram,
                               "the dynamic section's name or path (tag %lld) lies outside the string table",
                               static_cast<long long>(tag));
    }
    return Error::Ok;
  }

  // How many dynamic symbols the hash table knows (glibc finds symbols through it). A
  // relocation may name one past them (GNU ld writes a GNU hash table with no hashed
  // symbols and a meaningless first index when a library exports nothing): each named
  // symbol is checked on its own (check_symbol).
  Error count_symbols() {
    SLIMCUDA_CHECK_OR_RETURN(has(DT_GNU_HASH) || has(DT_HASH), Error::InvalidProgram,
                             "the library has no symbol hash table");
    if (has(DT_HASH)) {
      const uint8_t* h = file_bytes(get(DT_HASH), 8);
      SLIMCUDA_CHECK_OR_RETURN(h != nullptr, Error::InvalidProgram,
                               "the DT_HASH table is outside the library's loaded bytes");
      const auto nbucket = read<uint32_t>(h), nchain = read<uint32_t>(h + 4);
      SLIMCUDA_CHECK_OR_RETURN(nbucket > 0 && file_bytes(get(DT_HASH), 8 + 4 * (uint64_t{nbucket} + nchain)) != nullptr,
                               Error::InvalidProgram, "the DT_HASH table (%u buckets, %u chains) is malformed", nbucket,
                               nchain);
      for (uint64_t k = 0; k < uint64_t{nbucket} + nchain; ++k) {
        SLIMCUDA_CHECK_OR_RETURN(read<uint32_t>(h + 8 + 4 * k) < nchain, Error::InvalidProgram,
                                 "the DT_HASH table names a symbol past its %u", nchain);
      }
      // glibc follows a chain until index 0: one that loops would hang a symbol lookup.
      std::vector<bool> seen(nchain, false);
      for (uint32_t b = 0; b < nbucket; ++b) {
        for (uint32_t i = read<uint32_t>(h + 8 + 4 * uint64_t{b}); i != 0;
             i = read<uint32_t>(h + 8 + 4 * (uint64_t{nbucket} + i))) {
          SLIMCUDA_CHECK_OR_RETURN(!seen[i], Error::InvalidProgram,
                                   "the DT_HASH table's chains loop or merge at symbol %u", i);
          seen[i] = true;
        }
      }
      symbols_ = nchain;
    }
    if (has(DT_GNU_HASH)) {  // glibc uses this one when both are there
      const uint64_t at = get(DT_GNU_HASH);
      const uint8_t* h = file_bytes(at, 16);
      SLIMCUDA_CHECK_OR_RETURN(h != nullptr, Error::InvalidProgram,
                               "the DT_GNU_HASH table is outside the library's loaded bytes");
      const auto nbuckets = read<uint32_t>(h), symoffset = read<uint32_t>(h + 4);
      const auto bloom_words = read<uint32_t>(h + 8), bloom_shift = read<uint32_t>(h + 12);
      const uint64_t buckets_at = at + 16 + 8 * uint64_t{bloom_words};
      const uint8_t* buckets = file_bytes(buckets_at, 4 * uint64_t{nbuckets});
      SLIMCUDA_CHECK_OR_RETURN(nbuckets > 0 && is_power_of_two(bloom_words) && bloom_shift < 64 &&
                                   file_bytes(at + 16, 8 * uint64_t{bloom_words}) != nullptr && buckets != nullptr,
                               Error::InvalidProgram,
                               "the DT_GNU_HASH table (%u buckets, %u bloom words, shift %u) is malformed", nbuckets,
                               bloom_words, bloom_shift);
      const uint64_t chains_at = buckets_at + 4 * uint64_t{nbuckets};
      uint64_t last = 0;  // the highest symbol a bucket starts at
      for (uint32_t b = 0; b < nbuckets; ++b) {
        const uint64_t i = read<uint32_t>(buckets + 4 * uint64_t{b});
        if (i == 0) continue;
        SLIMCUDA_CHECK_OR_RETURN(i >= symoffset, Error::InvalidProgram,
                                 "the DT_GNU_HASH table's bucket %u names symbol %llu, below its first (%u)", b,
                                 static_cast<unsigned long long>(i), symoffset);
        last = std::max(last, i);
      }
      uint64_t count = symoffset;
      if (last != 0) {
        // Chains run upward, each to an entry with its low bit set: every chain ends inside
        // the file when the one from the highest bucket does (one walk, whatever the buckets).
        uint64_t i = last;
        for (;; ++i) {
          const uint8_t* c = file_bytes(chains_at + 4 * (i - symoffset), 4);
          SLIMCUDA_CHECK_OR_RETURN(c != nullptr, Error::InvalidProgram,
                                   "a DT_GNU_HASH chain runs past the library's loaded bytes");
          if (read<uint32_t>(c) & 1) break;
        }
        count = i + 1;
      }
      symbols_ = count;
    }
    return Error::Ok;
  }

  // Symbol k: inside the library's bytes, its name inside the string table, a function's
  // address in code, an object's in the library's memory, its version index defined.
  Error check_symbol(uint64_t k) {
    if (!checked_.insert(k).second) return Error::Ok;
    const uint8_t* entry = file_bytes(get(DT_SYMTAB) + k * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
    SLIMCUDA_CHECK_OR_RETURN(k <= size_ / sizeof(Elf64_Sym) && entry != nullptr, Error::InvalidProgram,
                             "dynamic symbol %llu lies outside the library's loaded bytes",
                             static_cast<unsigned long long>(k));
    const auto sym = read<Elf64_Sym>(entry);
    SLIMCUDA_CHECK_OR_RETURN(string_ok(sym.st_name), Error::InvalidProgram,
                             "dynamic symbol %llu's name lies outside the string table",
                             static_cast<unsigned long long>(k));
    if (has(DT_VERSYM)) {
      const uint8_t* v = file_bytes(get(DT_VERSYM) + k * sizeof(Elf64_Half), sizeof(Elf64_Half));
      SLIMCUDA_CHECK_OR_RETURN(v != nullptr, Error::InvalidProgram,
                               "the symbol version table is outside the library's loaded bytes");
      const uint16_t index = read<uint16_t>(v) & 0x7fff;
      SLIMCUDA_CHECK_OR_RETURN(index <= highest_version_, Error::InvalidProgram,
                               "dynamic symbol %llu has version index %u; the library defines or needs up to %llu",
                               static_cast<unsigned long long>(k), index,
                               static_cast<unsigned long long>(highest_version_));
    }
    // An imported symbol has default visibility: glibc resolves a hidden undefined one to the
    // library's own base address (a weak __gmon_start__ then gets called there).
    SLIMCUDA_CHECK_OR_RETURN(k == 0 || sym.st_shndx != SHN_UNDEF || ELF64_ST_VISIBILITY(sym.st_other) == STV_DEFAULT,
                             Error::InvalidProgram, "undefined symbol '%s' is not of default visibility",
                             string_at(sym.st_name));
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE) return Error::Ok;  // imported, absolute, common
    const char* name = string_at(sym.st_name);
    switch (ELF64_ST_TYPE(sym.st_info)) {
      case STT_FUNC:
      case STT_GNU_IFUNC:  // glibc calls an IFUNC's resolver while it relocates
        SLIMCUDA_CHECK_OR_RETURN(executable(sym.st_value), Error::InvalidProgram,
                                 "function '%s' is not in an executable segment", name);
        break;
      case STT_OBJECT:
        SLIMCUDA_CHECK_OR_RETURN(segment(sym.st_value, sym.st_size, kAny) != nullptr, Error::InvalidProgram,
                                 "object '%s' is outside the library's memory", name);
        break;
      case STT_TLS:
        SLIMCUDA_CHECK_OR_RETURN(inside(sym.st_value, sym.st_size, tls_memsz_), Error::InvalidProgram,
                                 "thread-local '%s' is outside the TLS segment", name);
        break;
      default:
        break;
    }
    return Error::Ok;
  }

  // Version needs and definitions, and every symbol's version index within them: glibc
  // walks each list by its next offsets until one is 0 (the counts are not what it reads),
  // indexes its version array with a symbol's index unchecked, and asserts that each
  // needed file is one of the library's DT_NEEDED.
  Error check_versions() {
    SLIMCUDA_CHECK_OR_RETURN(has(DT_VERSYM) || (!has(DT_VERNEED) && !has(DT_VERDEF)), Error::InvalidProgram,
                             "version tables without a symbol version table (DT_VERSYM)");
    uint64_t highest = 1;  // 0 and 1: local and global, always there
    // One budget for every step of every walk: a real library's entries are distinct and at
    // least 8 bytes each, and hostile next offsets that share a chain cost no more than that.
    uint64_t budget = size_ / 8;
    if (has(DT_VERNEED)) {
      uint64_t at = get(DT_VERNEED), n = 0;
      for (;; ++n) {
        const uint8_t* p = file_bytes(at, sizeof(Elf64_Verneed));
        SLIMCUDA_CHECK_OR_RETURN(p != nullptr && budget-- > 0, Error::InvalidProgram,
                                 "a version need lies outside the library's loaded bytes");
        const auto vn = read<Elf64_Verneed>(p);
        SLIMCUDA_CHECK_OR_RETURN(vn.vn_version == 1 && string_ok(vn.vn_file), Error::InvalidProgram,
                                 "a version need is malformed");
        bool is_needed = false;
        for (uint64_t d : needed_) is_needed = is_needed || std::strcmp(string_at(d), string_at(vn.vn_file)) == 0;
        SLIMCUDA_CHECK_OR_RETURN(is_needed, Error::InvalidProgram,
                                 "the library needs versions of '%s', which it does not list as needed",
                                 string_at(vn.vn_file));
        uint64_t aux = at + vn.vn_aux;
        for (;;) {
          const uint8_t* q = file_bytes(aux, sizeof(Elf64_Vernaux));
          SLIMCUDA_CHECK_OR_RETURN(q != nullptr && budget-- > 0, Error::InvalidProgram,
                                   "a version need's entry lies outside the library's loaded bytes");
          const auto vna = read<Elf64_Vernaux>(q);
          SLIMCUDA_CHECK_OR_RETURN(string_ok(vna.vna_name), Error::InvalidProgram,
                                   "a needed version's name lies outside the string table");
          highest = std::max<uint64_t>(highest, vna.vna_other & 0x7fff);
          if (vna.vna_next == 0) break;
          aux += vna.vna_next;
        }
        if (vn.vn_next == 0) break;
        at += vn.vn_next;
      }
      SLIMCUDA_CHECK_OR_RETURN(n + 1 == get(DT_VERNEEDNUM), Error::InvalidProgram,
                               "%llu version needs; DT_VERNEEDNUM says %llu", static_cast<unsigned long long>(n + 1),
                               static_cast<unsigned long long>(get(DT_VERNEEDNUM)));
    }
    if (has(DT_VERDEF)) {
      uint64_t at = get(DT_VERDEF), n = 0;
      for (;; ++n) {
        const uint8_t* p = file_bytes(at, sizeof(Elf64_Verdef));
        SLIMCUDA_CHECK_OR_RETURN(p != nullptr && budget-- > 0, Error::InvalidProgram,
                                 "a version definition lies outside the library's loaded bytes");
        const auto vd = read<Elf64_Verdef>(p);
        SLIMCUDA_CHECK_OR_RETURN(vd.vd_version == 1, Error::InvalidProgram, "a version definition is malformed");
        highest = std::max<uint64_t>(highest, vd.vd_ndx & 0x7fff);
        const uint8_t* q = file_bytes(at + vd.vd_aux, sizeof(Elf64_Verdaux));  // glibc reads the first name only
        SLIMCUDA_CHECK_OR_RETURN(q != nullptr && string_ok(read<Elf64_Verdaux>(q).vda_name), Error::InvalidProgram,
                                 "a version definition's name is malformed");
        if (vd.vd_next == 0) break;
        at += vd.vd_next;
      }
      SLIMCUDA_CHECK_OR_RETURN(
          n + 1 == get(DT_VERDEFNUM), Error::InvalidProgram, "%llu version definitions; DT_VERDEFNUM says %llu",
          static_cast<unsigned long long>(n + 1), static_cast<unsigned long long>(get(DT_VERDEFNUM)));
    }
    highest_version_ = highest;
    return Error::Ok;
  }

  // Every relocation writes inside a writable segment and names an existing symbol; the
  // first DT_RELACOUNT are relative ones (glibc asserts it); an IRELATIVE's resolver is code.
  Error check_relocations() {
    for (const auto& [table, bytes] : {std::pair<int64_t, int64_t>{DT_RELA, DT_RELASZ}, {DT_JMPREL, DT_PLTRELSZ}}) {
      if (!has(table)) continue;
      const uint64_t n = get(bytes) / sizeof(Elf64_Rela);
      const uint8_t* r = file_bytes(get(table), get(bytes));
      SLIMCUDA_CHECK_OR_RETURN(r != nullptr, Error::InvalidProgram,
                               "a relocation table is outside the library's loaded bytes");
      const uint64_t relative_first = table == DT_RELA ? get(DT_RELACOUNT) : 0;
      SLIMCUDA_CHECK_OR_RETURN(relative_first <= n, Error::InvalidProgram,
                               "DT_RELACOUNT %llu exceeds the %llu relocations",
                               static_cast<unsigned long long>(relative_first), static_cast<unsigned long long>(n));
      for (uint64_t k = 0; k < n; ++k) {
        const auto rela = read<Elf64_Rela>(r + k * sizeof(Elf64_Rela));
        const uint32_t type = ELF64_R_TYPE(rela.r_info);
        const uint64_t sym = ELF64_R_SYM(rela.r_info);
        SLIMCUDA_CHECK_OR_RETURN(k >= relative_first || type == R_X86_64_RELATIVE, Error::InvalidProgram,
                                 "relocation %llu is of type %u within the DT_RELACOUNT relative ones",
                                 static_cast<unsigned long long>(k), type);
        if (type == R_X86_64_NONE) continue;
        const bool narrow = type == R_X86_64_32 || type == R_X86_64_32S || type == R_X86_64_PC32 ||
                            type == R_X86_64_SIZE32 || type == R_X86_64_DTPOFF32 || type == R_X86_64_TPOFF32;
        SLIMCUDA_CHECK_OR_RETURN(writable(rela.r_offset, narrow ? 4 : 8) && !in_dynamic(rela.r_offset),
                                 Error::InvalidProgram,
                                 "relocation %llu writes at 0x%llx, outside the library's writable memory or into "
                                 "its dynamic section",
                                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(rela.r_offset));
        // GOT entries, which linkers align.
        const bool got = type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT || type == R_X86_64_DTPMOD64 ||
                         type == R_X86_64_DTPOFF64 || type == R_X86_64_TPOFF64;
        SLIMCUDA_CHECK_OR_RETURN(!got || rela.r_offset % 8 == 0, Error::InvalidProgram,
                                 "relocation %llu (type %u) writes a GOT entry at unaligned 0x%llx",
                                 static_cast<unsigned long long>(k), type,
                                 static_cast<unsigned long long>(rela.r_offset));
        SLIMCUDA_RETURN_IF_ERROR(check_symbol(sym));
        if (sym != 0) note_import(sym);
        SLIMCUDA_CHECK_OR_RETURN(type != R_X86_64_IRELATIVE || executable(rela.r_addend), Error::InvalidProgram,
                                 "an IRELATIVE relocation's resolver is not code");
        if (type == R_X86_64_RELATIVE && in_arrays(rela.r_offset)) {
          relative_[rela.r_offset] = static_cast<uint64_t>(rela.r_addend);
        }
        if (type == R_X86_64_64 && in_arrays(rela.r_offset)) symbolic_[rela.r_offset] = sym;
      }
    }
    if (has(DT_RELR)) {  // packed relative relocations: addresses, then bitmaps of the next 63 words
      const uint64_t n = get(DT_RELRSZ) / sizeof(Elf64_Addr);
      const uint8_t* r = file_bytes(get(DT_RELR), get(DT_RELRSZ));
      SLIMCUDA_CHECK_OR_RETURN(r != nullptr, Error::InvalidProgram,
                               "the DT_RELR table is outside the library's loaded bytes");
      uint64_t where = 0;
      for (uint64_t k = 0; k < n; ++k) {
        const uint64_t e = read<uint64_t>(r + k * sizeof(Elf64_Addr));
        if ((e & 1) == 0) {
          where = e;
          SLIMCUDA_RETURN_IF_ERROR(relr_at(where));
          where += sizeof(Elf64_Addr);
          continue;
        }
        for (uint64_t bits = e >> 1, w = where; bits != 0; bits >>= 1, w += sizeof(Elf64_Addr)) {
          if (bits & 1) SLIMCUDA_RETURN_IF_ERROR(relr_at(w));
        }
        where += 63 * sizeof(Elf64_Addr);
      }
    }
    return Error::Ok;
  }
  Error relr_at(uint64_t where) {
    SLIMCUDA_CHECK_OR_RETURN(where % sizeof(Elf64_Addr) == 0 && writable(where, sizeof(Elf64_Addr)),
                             Error::InvalidProgram, "a DT_RELR relocation writes at 0x%llx, outside writable memory",
                             static_cast<unsigned long long>(where));
    if (in_arrays(where)) {
      const uint8_t* slot = file_bytes(where, sizeof(Elf64_Addr));
      relative_[where] = slot == nullptr ? 0 : read<uint64_t>(slot);  // the addend is what the slot holds
    }
    return Error::Ok;
  }

  // DT_INIT and DT_FINI are code; each entry of the init and fini arrays is relocated (a
  // shared object's link-time addresses mean nothing before that) to code or to an
  // imported function, since glibc calls every one.
  Error check_init_fini() {
    for (int64_t tag : {DT_INIT, DT_FINI}) {
      SLIMCUDA_CHECK_OR_RETURN(!has(tag) || executable(get(tag)), Error::InvalidProgram,
                               "the library's %s function is not in an executable segment",
                               tag == DT_INIT ? "init" : "fini");
    }
    for (const auto& [array, bytes] :
         {std::pair<int64_t, int64_t>{DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, {DT_FINI_ARRAY, DT_FINI_ARRAYSZ}}) {
      if (!has(array) && !has(bytes)) continue;
      const char* what = array == DT_INIT_ARRAY ? "init" : "fini";
      const uint64_t at = get(array), n = get(bytes) / sizeof(Elf64_Addr);
      SLIMCUDA_CHECK_OR_RETURN(
          has(array) && has(bytes) && get(bytes) % sizeof(Elf64_Addr) == 0 && writable(at, get(bytes)),
          Error::InvalidProgram, "the library's %s array is malformed", what);
      for (uint64_t k = 0; k < n; ++k) {
        const uint64_t slot = at + k * sizeof(Elf64_Addr);
        const auto rel = relative_.find(slot);
        const auto sym = symbolic_.find(slot);
        bool ok = false;
        if (rel != relative_.end()) {
          ok = executable(rel->second);
        } else if (sym != symbolic_.end()) {
          const auto s =
              read<Elf64_Sym>(file_bytes(get(DT_SYMTAB) + sym->second * sizeof(Elf64_Sym), sizeof(Elf64_Sym)));
          ok = s.st_shndx == SHN_UNDEF || executable(s.st_value);
        }
        SLIMCUDA_CHECK_OR_RETURN(ok, Error::InvalidProgram,
                                 "entry %llu of the library's %s array is not relocated to code",
                                 static_cast<unsigned long long>(k), what);
      }
    }
    return Error::Ok;
  }

  // A checked symbol a relocation names: an import the loader must resolve (RTLD_NOW binds
  // the PLT too) unless it is defined here or weak.
  void note_import(uint64_t k) {
    const auto s = read<Elf64_Sym>(file_bytes(get(DT_SYMTAB) + k * sizeof(Elf64_Sym), sizeof(Elf64_Sym)));
    if (s.st_shndx == SHN_UNDEF && ELF64_ST_BIND(s.st_info) != STB_WEAK) imports_.insert(string_at(s.st_name));
  }

 public:
  const std::set<std::string>& imports() const { return imports_; }

 private:
  const uint8_t* data_;
  size_t size_;
  std::vector<Elf64_Phdr> loads_;
  uint64_t tls_memsz_;
  bool terminated_ = false;
  uint64_t dynamic_start_ = 0, dynamic_size_ = 0;
  std::map<int64_t, uint64_t> value_;
  std::vector<uint64_t> needed_;
  const uint8_t* strtab_ = nullptr;
  uint64_t strsz_ = 0;
  uint64_t symbols_ = 0;  // what the hash table knows
  uint64_t highest_version_ = 1;
  std::set<uint64_t> checked_;             // symbols check_symbol has seen
  std::map<uint64_t, uint64_t> relative_;  // init/fini array slot -> value after relocation - base
  std::map<uint64_t, uint64_t> symbolic_;  // init/fini array slot -> symbol (R_X86_64_64)
  std::set<std::string> imports_;          // see note_import
};

}  // namespace

namespace {

// The ELF header (the first `n` bytes of a library of `size`): a 64-bit little-endian x86-64
// shared object whose program headers lie inside the file.
Error check_header(const uint8_t* data, size_t n, uint64_t size, Elf64_Ehdr* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(data != nullptr || n == 0, Error::InvalidArgument, "null library bytes");
  SLIMCUDA_CHECK_OR_RETURN(size >= sizeof(Elf64_Ehdr) && n >= sizeof(Elf64_Ehdr), Error::InvalidProgram,
                           "library of %llu bytes: too short for an ELF header", static_cast<unsigned long long>(size));
  SLIMCUDA_CHECK_OR_RETURN(std::memcmp(data, ELFMAG, SELFMAG) == 0, Error::InvalidProgram,
                           "the library is not an ELF file (bad magic)");
  SLIMCUDA_CHECK_OR_RETURN(data[EI_CLASS] == ELFCLASS64, Error::InvalidProgram, "the library is a %s ELF; want 64-bit",
                           data[EI_CLASS] == ELFCLASS32 ? "32-bit" : "malformed");
  SLIMCUDA_CHECK_OR_RETURN(data[EI_DATA] == ELFDATA2LSB, Error::InvalidProgram,
                           "the library is a big-endian ELF; want little-endian x86-64");
  SLIMCUDA_CHECK_OR_RETURN(data[EI_VERSION] == EV_CURRENT, Error::InvalidProgram, "ELF identification version %u",
                           data[EI_VERSION]);
  const auto eh = read<Elf64_Ehdr>(data);
  SLIMCUDA_CHECK_OR_RETURN(eh.e_machine == EM_X86_64, Error::InvalidProgram,
                           "the library is an ELF for machine %u (%s); this slimcuda runs x86-64 libraries",
                           eh.e_machine, machine_name(eh.e_machine));
  SLIMCUDA_CHECK_OR_RETURN(eh.e_type == ET_DYN, Error::InvalidProgram,
                           "the library is an ELF of type %u; want a shared object (ET_DYN)", eh.e_type);
  SLIMCUDA_CHECK_OR_RETURN(eh.e_version == EV_CURRENT && eh.e_ehsize == sizeof(Elf64_Ehdr), Error::InvalidProgram,
                           "malformed ELF header (version %u, header size %u)", eh.e_version, eh.e_ehsize);
  SLIMCUDA_CHECK_OR_RETURN(eh.e_phentsize == sizeof(Elf64_Phdr), Error::InvalidProgram,
                           "program header entries of %u bytes; want %zu", eh.e_phentsize, sizeof(Elf64_Phdr));
  SLIMCUDA_CHECK_OR_RETURN(eh.e_phnum > 0 && eh.e_phnum <= kMaxProgramHeaders, Error::InvalidProgram,
                           "%u program headers (want 1..%u)", eh.e_phnum, kMaxProgramHeaders);
  SLIMCUDA_CHECK_OR_RETURN(inside(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), size), Error::InvalidProgram,
                           "program headers at offset %llu run past the end of the %llu-byte library "
                           "(truncated?)",
                           static_cast<unsigned long long>(eh.e_phoff), static_cast<unsigned long long>(size));
  *out = eh;
  return Error::Ok;
}

// What the program headers say: the loadable segments, the one dynamic section, the TLS size.
struct Segments {
  std::vector<Elf64_Phdr> loads;
  Elf64_Phdr dynamic{};
  uint64_t tls_memsz = 0;
};

// The program headers: every segment the loader maps inside the file and within bounds,
// the loadable ones in address order without overlap, one dynamic section. May throw
// std::bad_alloc (check_elf catches it).
Error read_segments(const uint8_t* data, size_t size, const Elf64_Ehdr& eh, Segments* out) {
  // Loadable segments: inside the file, in address order, not overlapping.
  int loads = 0, dynamics = 0;
  uint64_t last_end = 0, memory = 0, tls_memsz = 0;
  Elf64_Phdr dynamic{};
  std::vector<Elf64_Phdr>& segments = out->loads;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const auto ph = read<Elf64_Phdr>(data + eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    switch (ph.p_type) {
      case PT_LOAD: {
        SLIMCUDA_CHECK_OR_RETURN(inside(ph.p_offset, ph.p_filesz, size), Error::InvalidProgram,
                                 "loadable segment %u (file bytes %llu..+%llu) runs past the end of the %zu-byte "
                                 "library (truncated?)",
                                 i, static_cast<unsigned long long>(ph.p_offset),
                                 static_cast<unsigned long long>(ph.p_filesz), size);
        SLIMCUDA_CHECK_OR_RETURN(ph.p_filesz <= ph.p_memsz && ph.p_memsz <= kMaxMemory && ph.p_vaddr <= kMaxMemory,
                                 Error::InvalidProgram, "loadable segment %u has sizes file %llu, memory %llu", i,
                                 static_cast<unsigned long long>(ph.p_filesz),
                                 static_cast<unsigned long long>(ph.p_memsz));
        SLIMCUDA_CHECK_OR_RETURN(
            ph.p_align <= 1 || (is_power_of_two(ph.p_align) && ph.p_offset % ph.p_align == ph.p_vaddr % ph.p_align),
            Error::InvalidProgram, "loadable segment %u is misaligned (align %llu)", i,
            static_cast<unsigned long long>(ph.p_align));
        SLIMCUDA_CHECK_OR_RETURN(loads == 0 || ph.p_vaddr >= last_end, Error::InvalidProgram,
                                 "loadable segment %u overlaps or precedes the one before it", i);
        last_end = ph.p_vaddr + ph.p_memsz;
        memory += ph.p_memsz;
        SLIMCUDA_CHECK_OR_RETURN(memory <= kMaxMemory, Error::InvalidProgram,
                                 "the library's segments need more than %llu bytes",
                                 static_cast<unsigned long long>(kMaxMemory));
        ++loads;
        segments.push_back(ph);
        break;
      }
      case PT_DYNAMIC:
        dynamic = ph;
        ++dynamics;
        break;
      case PT_TLS:
        tls_memsz = ph.p_memsz;
        [[fallthrough]];
      case PT_GNU_RELRO:
      case PT_GNU_EH_FRAME:
      case PT_NOTE:
        SLIMCUDA_CHECK_OR_RETURN(
            inside(ph.p_offset, ph.p_filesz, size) && ph.p_filesz <= ph.p_memsz && ph.p_memsz <= kMaxMemory,
            Error::InvalidProgram, "segment %u (type 0x%x) lies outside the library", i, ph.p_type);
        break;
      default:
        break;  // PT_INTERP (dlopen ignores it: libc.so.6 has one), PT_GNU_STACK, vendor types
    }
  }
  SLIMCUDA_CHECK_OR_RETURN(loads > 0, Error::InvalidProgram, "the library has no loadable segment");
  SLIMCUDA_CHECK_OR_RETURN(dynamics == 1, Error::InvalidProgram,
                           "the library has %d dynamic sections; a shared object has one", dynamics);
  out->dynamic = dynamic;
  out->tls_memsz = tls_memsz;
  return Error::Ok;
}

}  // namespace

Error check_elf_header(const uint8_t* data, size_t n, uint64_t size) noexcept {
  Elf64_Ehdr eh;
  return check_header(data, n, size, &eh);
}

Error check_elf(const uint8_t* data, size_t size) noexcept { return check_elf(data, size, nullptr); }

Error check_elf(const uint8_t* data, size_t size, std::vector<std::string>* imports) noexcept {
  if (imports != nullptr) imports->clear();
  Elf64_Ehdr eh{};
  SLIMCUDA_RETURN_IF_ERROR(check_header(data, size, size, &eh));
  Segments seg;
  try {
    SLIMCUDA_RETURN_IF_ERROR(read_segments(data, size, eh, &seg));
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory checking the library");
  }
  const Elf64_Phdr& dynamic = seg.dynamic;
  // The dynamic table: inside a loadable segment's file bytes, whole entries, ending in DT_NULL.
  SLIMCUDA_CHECK_OR_RETURN(inside(dynamic.p_offset, dynamic.p_filesz, size) &&
                               dynamic.p_filesz % sizeof(Elf64_Dyn) == 0 && dynamic.p_filesz > 0,
                           Error::InvalidProgram, "the dynamic section (offset %llu, %llu bytes) is malformed",
                           static_cast<unsigned long long>(dynamic.p_offset),
                           static_cast<unsigned long long>(dynamic.p_filesz));
  try {
    LoadedImage image(data, size, std::move(seg.loads), seg.tls_memsz);
    SLIMCUDA_RETURN_IF_ERROR(image.check(eh, dynamic));
    if (imports != nullptr) imports->assign(image.imports().begin(), image.imports().end());
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory checking the library");
  }
}

}  // namespace slimcuda
