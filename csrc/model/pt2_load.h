// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "csrc/archive/pt2_archive.h"
#include "csrc/model/load.h"
#include "csrc/model/model.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// Loads one model of an opened `.pt2` (docs/pt2.md): the model folder found and checked
/// by the reader, then the policy: the device it was compiled for, no GPU kernels beside
/// the library, the library's bytes (viewed when stored, inflated up to a bound otherwise)
/// CRC- and ELF-checked before dlopen, the input specs from the generated wrapper, the
/// weights kept outside the library attached (pt2_weights.h) and the load's own state.
/// May throw std::bad_alloc (the entry layer turns it into a code).
[[nodiscard]] Error load_pt2(const Pt2Archive& archive, const LoadOptions& options, std::unique_ptr<Model>* out);

}  // namespace slimcuda
