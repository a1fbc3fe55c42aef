// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// How a tensor's shape may vary between runs.
enum class Dynamism : int8_t {
  Static = 0,            ///< sizes are exact
  DynamicBounded = 1,    ///< sizes are upper bounds
  DynamicUnbounded = 2,  ///< only the rank is fixed; CPU only
};

/// One input or output of a method, as the package declares it.
struct TensorSpec {
  std::string name;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;      ///< exact, or upper bounds
  std::vector<int64_t> min_sizes;  ///< DynamicBounded: lower bounds (empty = all 0)
  std::vector<uint8_t> dim_order;  ///< outermost first; empty = row-major
  Dynamism dynamism = Dynamism::Static;
  Device device;  ///< index -1: the device the model is loaded on
  /// false: the model's source states nothing but the position (a .pt2 without the fact,
  /// docs/pt2.md): a run checks an input's device only, an output not at all.
  bool known = true;
};

struct MethodSpec {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

/// A compiled model library for one device type, with its I/O contract.
struct LibrarySpec {
  DeviceType device_type = DeviceType::CPU;
  std::vector<uint8_t> so;  ///< shared object bytes
  std::vector<MethodSpec> methods;
};

/// A model package (csrc/package/package.fbs), parsed from untrusted bytes: the whole
/// buffer is verified, then every field is checked; nothing of the input is referenced
/// afterwards.
struct ModelPackage {
  static constexpr uint32_t kFormatVersion = 2;

  std::vector<LibrarySpec> libraries;
  std::vector<uint8_t> weights;

  /// Parses and checks `size` bytes. Malformed structure (truncated, bad identifier,
  /// offsets out of range, unsupported version) -> InvalidProgram; well-formed but invalid
  /// metadata (unknown dtype or device type, index < -1, unbounded tensor on CUDA, rank or
  /// numel overflow) -> InvalidProgram as well, with the reason in the message. Each
  /// library's bytes must match the package's XXH3-128 hash of them (a corruption check,
  /// not a signature: whoever writes a package writes its hash) and be a well-formed x86-64
  /// shared object (check_elf). Nothing is executed.
  [[nodiscard]] static Error parse(const uint8_t* data, size_t size, ModelPackage* out) noexcept;

  /// Serializes (the writer of `slimcuda pack`); checks the same rules first (the ELF shape
  /// of each library too) and records each library's hash.
  [[nodiscard]] Error serialize(std::vector<uint8_t>* out) const noexcept;

  /// Whether `size` bytes start as a package does (its identifier "SCPK" at byte 4): what
  /// tells a package from any other file before parse says what is wrong with it.
  [[nodiscard]] static bool looks_like_package(const uint8_t* data, size_t size) noexcept;
  /// The library for `type`, or nullptr.
  [[nodiscard]] const LibrarySpec* library(DeviceType type) const noexcept;
};

/// Checks one spec (shared by the reader, the writer and the runner).
[[nodiscard]] Error check_tensor_spec(const TensorSpec& spec, const char* what) noexcept;

}  // namespace slimcuda
