// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "csrc/package/model_package.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// Builds a package from a JSON manifest (the input of `slimcuda pack`):
///
///   {"libraries": [{"device": "cuda" | "cpu",
///                   "so": "path/to/model.so",            // relative to the manifest
///                   "methods": [{"name": "forward",
///                                "inputs":  [TENSOR, ...],
///                                "outputs": [TENSOR, ...]}]}],
///    "weights": "path/to/weights.bin"}                    // optional
///   TENSOR = {"name": "x", "dtype": "float32", "sizes": [64, 16], "min_sizes": [1, 16],
///             "dynamism": "static" | "dynamic_bounded" | "dynamic_unbounded",
///             "device": "cpu" | "cuda", "device_index": -1, "dim_order": [0, 1]}
///
/// Numbers must be JSON integers (2.0 and 1e10 are floats) within their field's range:
/// sizes and min_sizes int64, dim_order 0..255, device_index -1..127.
///
/// Files (the manifest, at most kMaxManifestFileBytes; each "so" and the weights, at most
/// kMaxPackageFileBytes) are read with read_regular_file, whose codes they keep (NotFound,
/// AccessFailed, OutOfResources, InvalidArgument for a non-regular or oversized file).
/// Malformed JSON or fields -> InvalidArgument naming the field and tensor; metadata that
/// breaks the package rules -> InvalidProgram (as the reader would say). Never throws.
[[nodiscard]] Error package_from_manifest(const std::string& manifest_path, ModelPackage* out) noexcept;

}  // namespace slimcuda
