// SPDX-License-Identifier: Apache-2.0
// pack MANIFEST OUT — writes a model package from a JSON manifest (build-time tool; the
// `slimcuda pack` command does the same through the C ABI). Links the package writer
// statically and needs no GPU.
#include <cstdio>
#include <fstream>
#include <vector>

#include "csrc/package/manifest.h"
#include "csrc/package/model_package.h"
#include "slimcuda/last_error.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pack MANIFEST OUT\n");
    return 2;
  }
  slimcuda::ModelPackage package;
  std::vector<uint8_t> bytes;
  slimcuda::ModelPackage check;
  if (slimcuda::package_from_manifest(argv[1], &package) != slimcuda::Error::Ok ||
      package.serialize(&bytes) != slimcuda::Error::Ok ||
      slimcuda::ModelPackage::parse(bytes.data(), bytes.size(), &check) != slimcuda::Error::Ok) {
    std::fprintf(stderr, "%s\n", slimcuda::last_error_message());
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out.good() ? 0 : 1;
}
