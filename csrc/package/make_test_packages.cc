// SPDX-License-Identifier: Apache-2.0
// make_test_packages LIBRARY UNLOADABLE_LIBRARY DIR — writes the malformed (and a few valid) packages of
// testdata/packages/: the seed corpus of the fuzzers and the inputs of the package tests
// (testdata/packages.json says what each must give). Built on the FlatBuffers builder
// directly, below ModelPackage::serialize, whose checks would refuse most of them. Every
// library is a real test model (models/testing): one that loads, one that does not.
// Regenerate with: bazel run //csrc/package:make_test_packages -- "$PWD/testdata/packages"
// (the BUILD target supplies the two libraries).
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "csrc/package/library_hash.h"
#include "csrc/package/package_generated.h"

namespace fb = slimcuda::fb;

namespace {

struct Spec {
  int32_t dtype = 6;
  std::vector<int64_t> sizes = {4, 16};
  std::vector<int64_t> min_sizes;
  std::vector<uint8_t> dim_order;
  fb::Dynamism dynamism = fb::Dynamism::Static;
  int8_t device_type = 0;
  int8_t device_index = -1;
};

struct Options {
  uint32_t version = 2;
  int8_t library_device = 0;
  bool no_libraries = false;
  bool no_methods = false;
  bool no_hash = false;
  bool wrong_hash = false;
  std::vector<uint8_t> so;  // the library's bytes
  Spec input;
};

// The loadable and the unloadable test library (argv[1], argv[2]).
std::vector<uint8_t> g_library, g_unloadable;

std::vector<uint8_t> build(const Options& o) {
  flatbuffers::FlatBufferBuilder b;
  const Spec& s = o.input;
  auto spec = fb::CreateTensorSpec(b, b.CreateString("x"), s.dtype, b.CreateVector(s.sizes),
                                   s.min_sizes.empty() ? 0 : b.CreateVector(s.min_sizes),
                                   s.dim_order.empty() ? 0 : b.CreateVector(s.dim_order), s.dynamism,
                                   static_cast<fb::DeviceType>(s.device_type), s.device_index);
  auto out = fb::CreateTensorSpec(b, b.CreateString("y"), 6, b.CreateVector(std::vector<int64_t>{4, 8}));
  std::vector<flatbuffers::Offset<fb::Method>> methods;
  if (!o.no_methods) {
    methods.push_back(fb::CreateMethod(b, b.CreateString("forward"), b.CreateVector(std::vector{spec}),
                                       b.CreateVector(std::vector{out})));
  }
  const std::vector<uint8_t>& so = o.so.empty() ? g_library : o.so;
  slimcuda::LibraryHash hash = slimcuda::library_hash(so.data(), so.size());
  if (o.wrong_hash) hash.bytes[0] ^= 1;
  std::vector<flatbuffers::Offset<fb::Library>> libs;
  if (!o.no_libraries) {
    libs.push_back(fb::CreateLibrary(b, static_cast<fb::DeviceType>(o.library_device), b.CreateVector(so),
                                     b.CreateVector(methods),
                                     o.no_hash ? 0 : b.CreateVector(hash.bytes, slimcuda::kLibraryHashBytes)));
  }
  b.Finish(fb::CreatePackage(b, o.version, b.CreateVector(libs)), fb::PackageIdentifier());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

bool read(const char* path, std::vector<uint8_t>* out) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  uint8_t buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out->insert(out->end(), buf, buf + n);
  std::fclose(f);
  return !out->empty();
}

bool write(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen((dir + "/" + name + ".slimcuda").c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

template <typename Edit>
std::vector<uint8_t> with(Edit edit) {
  Options o;
  edit(o);
  return build(o);
}

}  // namespace

// long: the table of every package it writes, one line each; split up, the list would be
// scattered over functions.
int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_test_packages LIBRARY UNLOADABLE_LIBRARY DIR\n");
    return 2;
  }
  const std::string dir = argv[3];
  if (!read(argv[1], &g_library) || !read(argv[2], &g_unloadable)) {
    std::fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
    return 1;
  }
  const std::vector<uint8_t> valid = build(Options{});
  std::vector<uint8_t> other_machine = g_library;
  const uint16_t aarch64 = 183;                         // EM_AARCH64
  std::memcpy(other_machine.data() + 18, &aarch64, 2);  // e_machine
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"valid", valid},
      {"valid_not_loadable", with([](Options& o) { o.so = g_unloadable; })},
      {"format_version_1", with([](Options& o) { o.version = 1; })},
      {"library_hash_missing", with([](Options& o) { o.no_hash = true; })},
      {"library_hash_mismatch", with([](Options& o) { o.wrong_hash = true; })},
      {"library_not_elf", with([](Options& o) { o.so = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'E', 'L', 'F'}; })},
      {"library_truncated_half",
       with([](Options& o) { o.so.assign(g_library.begin(), g_library.begin() + g_library.size() / 2); })},
      {"library_other_architecture", with([&](Options& o) { o.so = other_machine; })},
      {"valid_dynamic_bounded", with([](Options& o) {
         o.input.dynamism = fb::Dynamism::DynamicBounded;
         o.input.sizes = {64, 16};
         o.input.min_sizes = {1, 16};
       })},
      {"valid_unbounded_on_cpu", with([](Options& o) { o.input.dynamism = fb::Dynamism::DynamicUnbounded; })},
      {"empty", {}},
      {"four_bytes", std::vector<uint8_t>(valid.begin(), valid.begin() + 4)},
      {"truncated_half", std::vector<uint8_t>(valid.begin(), valid.begin() + valid.size() / 2)},
      {"truncated_one_byte_short", std::vector<uint8_t>(valid.begin(), valid.end() - 1)},
      {"bad_version", with([](Options& o) { o.version = 3; })},
      {"no_libraries", with([](Options& o) { o.no_libraries = true; })},
      {"no_methods", with([](Options& o) { o.no_methods = true; })},
      {"library_device_unknown", with([](Options& o) { o.library_device = 7; })},
      {"tensor_device_unknown", with([](Options& o) { o.input.device_type = 9; })},
      {"device_index_below_minus_one", with([](Options& o) { o.input.device_index = -2; })},
      {"unbounded_on_cuda", with([](Options& o) {
         o.input.dynamism = fb::Dynamism::DynamicUnbounded;
         o.input.device_type = 1;
       })},
      {"dtype_unknown", with([](Options& o) { o.input.dtype = 99; })},
      {"rank_overflow", with([](Options& o) { o.input.sizes = std::vector<int64_t>(26, 1); })},
      {"numel_overflow", with([](Options& o) {
         o.input.sizes = {int64_t{1} << 40, int64_t{1} << 40};
       })},
      {"negative_size", with([](Options& o) {
         o.input.sizes = {4, -16};
       })},
      {"dim_order_not_a_permutation", with([](Options& o) {
         o.input.dim_order = {1, 1};
       })},
      {"min_sizes_above_bound", with([](Options& o) {
         o.input.dynamism = fb::Dynamism::DynamicBounded;
         o.input.min_sizes = {8, 16};
       })},
  };
  // Bad magic: a valid buffer with another file identifier.
  std::vector<uint8_t> magic = valid;
  std::memcpy(magic.data() + 4, "XXXX", 4);
  files.emplace_back("bad_magic", magic);
  // Offsets out of range: the root offset points past the end.
  std::vector<uint8_t> root = valid;
  const uint32_t far = static_cast<uint32_t>(root.size() + 64);
  std::memcpy(root.data(), &far, 4);
  files.emplace_back("root_offset_out_of_range", root);
  // A vector length far past the end: find the library's so vector (it starts "\x7fELF")
  // and enlarge its length prefix.
  std::vector<uint8_t> vec = valid;
  for (size_t i = 4; i + 4 <= vec.size(); ++i) {
    if (vec[i] == 0x7f && vec[i + 1] == 'E' && vec[i + 2] == 'L' && vec[i + 3] == 'F') {
      const uint32_t huge = 0x7fffff00u;
      std::memcpy(vec.data() + i - 4, &huge, 4);
      break;
    }
  }
  files.emplace_back("vector_length_out_of_range", vec);
  for (const auto& [name, bytes] : files) {
    if (!write(dir, name, bytes)) {
      std::fprintf(stderr, "cannot write %s/%s.slimcuda\n", dir.c_str(), name.c_str());
      return 1;
    }
  }
  std::printf("wrote %zu packages to %s\n", files.size(), dir.c_str());
  return 0;
}
