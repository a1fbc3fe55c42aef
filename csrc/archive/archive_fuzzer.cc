// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the .pt2 reader: any bytes must give Ok or an error code, never
// a crash, a sanitizer report or a leak. It runs what a load runs before the dynamic loader:
// the archive's checks, reads of every entry (views and streamed decompression), the model's
// folder and metadata, its library read as a load reads it (the caps, the ELF header of a
// compressed one, the ELF check) and the input checks of its wrapper source. Built and run
// by tools/fuzz/fuzz.sh under a memory limit: no input may make it allocate more than 64 MB
// at once or hold more than 1 GB.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/archive/pt2_archive.h"
#include "csrc/archive/pt2_model.h"
#include "csrc/archive/pt2_versions.h"
#include "csrc/package/elf_check.h"

namespace {

// Answers a malformed archive may give; anything else is a bug.
bool expected(slimcuda::Error e) {
  return e == slimcuda::Error::Ok || e == slimcuda::Error::InvalidProgram || e == slimcuda::Error::InvalidArgument ||
         e == slimcuda::Error::NotSupported || e == slimcuda::Error::NotFound;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using slimcuda::Error;
  std::unique_ptr<slimcuda::Pt2Archive> archive;
  const Error e = slimcuda::Pt2Archive::open_memory(data, size, &archive);
  if (e != Error::Ok && e != Error::InvalidProgram) __builtin_trap();
  if (e != Error::Ok) return 0;
  for (const slimcuda::ArchiveEntry& entry : archive->entries()) {
    // What a load would read whole: a stored entry (its bytes are in the input), or a
    // compressed one within the load's cap.
    if (!entry.stored && entry.size > slimcuda::kMaxCompressedLibraryBytes) continue;
    std::vector<uint8_t> bytes(static_cast<size_t>(entry.size));
    if (!expected(archive->read(entry, 0, entry.size, bytes.data()))) __builtin_trap();
    if (entry.size > 2 && !expected(archive->read(entry, entry.size / 2, 1, bytes.data()))) __builtin_trap();
    slimcuda::ArchiveSpan span;
    const Error v = archive->view(entry, &span);
    if (!expected(v)) __builtin_trap();
    if (v == Error::Ok && (span.size != entry.size || span.data < data || span.data + span.size > data + size)) {
      __builtin_trap();  // a view must lie inside the input
    }
  }
  slimcuda::Pt2Model model;
  const Error m = slimcuda::find_pt2_model(*archive, nullptr, &model);
  if (!expected(m)) __builtin_trap();
  if (m != Error::Ok) return 0;
  if (!expected(slimcuda::check_pt2_versions(*archive, model))) __builtin_trap();
  std::unique_ptr<uint8_t[]> inflated;
  slimcuda::ArchiveSpan so;
  if (!expected(slimcuda::read_pt2_library(*archive, model, &inflated, &so))) __builtin_trap();
  std::string text;
  if (slimcuda::read_wrapper_source(*archive, model, &text) == Error::Ok && !text.empty()) {
    std::vector<slimcuda::TensorSpec> specs;
    for (size_t n : {size_t{1}, size_t{2}, size_t{8}}) {
      if (!expected(slimcuda::parse_input_checks(text, n, &specs))) __builtin_trap();
    }
    if (!expected(slimcuda::check_container_abi(text))) __builtin_trap();
    slimcuda::WrapperIo io;
    const slimcuda::Error w = slimcuda::parse_wrapper_io(text, &io);
    if (!expected(w)) __builtin_trap();
    if (w == slimcuda::Error::Ok) {
      if (io.input_names.size() != io.num_inputs || io.output_names.size() != io.num_outputs) __builtin_trap();
      if (!expected(slimcuda::parse_output_allocations(text, io.output_names, &specs))) __builtin_trap();
      if (specs.size() != io.num_outputs) __builtin_trap();
    }
  }
  return 0;
}
