// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "csrc/model/constants.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

// What a PyTorch 2.11 `.pt2` says about the constants of a model whose weights are kept
// outside its library (docs/weights.md), read from untrusted bytes: every field checked,
// nothing trusted that the container can confirm instead.

/// One constant as the wrapper source (`data/aotinductor/<model>/<hash>.wrapper.cpp`)
/// declares it in the model's constructor (`constants_info_[i].shape = {32, 16};` ...).
/// With package_constants_on_disk_format="binary_blob" this is the only place the archive
/// states a constant's shape, strides and storage offset (the container's C API reports
/// names, dtypes and byte sizes only).
struct WrapperConstant {
  std::string name;
  std::string original_fqn;
  uint64_t data_size = 0;
  int64_t offset = 0;  ///< storage offset, in elements
  bool from_folded = false;
  /// The device the constant lives on: "cpu" or "cuda" (from cached_torch_device_type_*),
  /// "" when not declared, else the declared token.
  std::string device;
  std::vector<int64_t> shape, stride;
};

/// Parses the `constants_info_[i].<field> = <value>;` statements of a wrapper source.
/// Fields read: name, original_fqn (string literals without escapes), data_size, offset
/// (non-negative integers), from_folded (true/false), shape, stride ({integers}); others
/// (dtype, type, layout, opaque_metadata) are skipped, the container reports what matters
/// of them; device_type is kept as a token (WrapperConstant::device). Indices must run 0..n-1, each with a name, shape
/// and stride of one rank (at most kMaxDims). Anything else about these statements -> InvalidProgram naming the line. A
/// source with no constants gives an empty list.
[[nodiscard]] Error parse_wrapper_constants(const char* text, size_t size, std::vector<WrapperConstant>* out) noexcept;

/// The shapes entries_from_blob needs, from the wrapper's declarations, after checking them
/// against what the loaded container reports: the same constants in the same order (names,
/// data sizes, folded or not), else InvalidProgram ("the wrapper source and the library
/// disagree": an archive whose parts do not belong together). A CPU constant of a CUDA
/// model (PyTorch's mixed-device constants) gets ConstantShape::on_cpu; a constant declared
/// on any other device than the model's (a CUDA constant in a CPU model, another backend's
/// token) -> NotSupported.
[[nodiscard]] Error blob_shapes(const std::vector<ContainerConstant>& container,
                                const std::vector<WrapperConstant>& wrapper, DeviceType model_device,
                                std::vector<ConstantShape>* out) noexcept;

/// One weight of package_constants_on_disk_format="pickle_weights": the archive file that
/// holds its storage (`data/weights/<file>`, a torch.save zip whose `<dir>/data/0` entry
/// is the raw storage) and its view.
struct PickledWeight {
  std::string fqn;
  std::string file;
  std::vector<int64_t> shape, stride;
  int64_t offset = 0;
};

/// Parses `data/aotinductor/<model>/weights_config.json`: {"<fqn>": ["<file>", [shape],
/// [stride], offset], ...}. Malformed JSON, a value of another shape, negative sizes or
/// offsets, or a file name with a path separator or ".." -> InvalidProgram.
[[nodiscard]] Error parse_weights_config(const char* text, size_t size, std::vector<PickledWeight>* out) noexcept;

}  // namespace slimcuda
