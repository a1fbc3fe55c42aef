// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point for the package reader: any bytes must give Ok or an error code,
// never a crash, a sanitizer report or a leak. Built and run by tools/fuzz/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "csrc/package/model_package.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  slimcuda::ModelPackage package;
  const slimcuda::Error e = slimcuda::ModelPackage::parse(data, size, &package);
  if (e != slimcuda::Error::Ok && e != slimcuda::Error::InvalidProgram) __builtin_trap();
  if (e == slimcuda::Error::Ok) {
    // What was accepted must serialize and read back.
    std::vector<uint8_t> again;
    slimcuda::ModelPackage round;
    if (package.serialize(&again) != slimcuda::Error::Ok ||
        slimcuda::ModelPackage::parse(again.data(), again.size(), &round) != slimcuda::Error::Ok) {
      __builtin_trap();
    }
  }
  return 0;
}
