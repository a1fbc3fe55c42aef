// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "csrc/model/load.h"
#include "csrc/package/model_package.h"
#include "slimcuda/error.h"
#include "slimcuda/types.h"

namespace slimcuda {

/// What a model file states about itself, read without loading its library: no library
/// code runs and no GPU is needed (`slimcuda info`, a service checking a file before it
/// loads it).
struct ModelDescription {
  /// The device types it has libraries for: a `.pt2`'s one (AOTI_DEVICE_KEY), a package's
  /// each.
  std::vector<DeviceType> devices;
  /// The device type a load with the same device_type would use (-1: a package's CUDA
  /// library when it has one and a GPU is there, else its CPU library).
  DeviceType device_type = DeviceType::CPU;
  /// The inputs and outputs of that library: a package's manifest; a `.pt2`'s wrapper
  /// source (counts and names from its constructor, inputs from its input checks, outputs
  /// from their allocations: parse_output_allocations), unknown (known false) where it
  /// says nothing.
  MethodSpec method;
  std::string model_name;  ///< the `.pt2` model described ("" for a package)
};

/// Describes the model `source` holds. device_type and model_name as for load_model (a
/// `.pt2` for another device type -> NotSupported). A `.pt2` whose wrapper source is not in
/// the archive, or states no input and output counts -> NotSupported (load it to learn
/// them); the readers' errors (a malformed archive or package -> InvalidProgram, the file
/// errors) otherwise. May throw std::bad_alloc.
[[nodiscard]] Error describe_model(const LoadSource& source, int device_type, const char* model_name,
                                   ModelDescription* out);

}  // namespace slimcuda
