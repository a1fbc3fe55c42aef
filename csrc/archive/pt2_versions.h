// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

#include "csrc/archive/pt2_archive.h"
#include "csrc/archive/pt2_model.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// The PyTorch versions whose .pt2 exports slimcuda knows: each one's exports are fixtures
/// (testdata/pt2_versions/, made by tools/aoti/torch_versions.sh) that load, describe their
/// inputs and run to eager PyTorch's outputs in CI. The one place that states the range;
/// the refusals below name it.
inline constexpr const char* kOldestPyTorch = "2.11";
inline constexpr const char* kNewestPyTorch = "2.15";

/// `<root>archive_version`: the .pt2 format's own version (torch.export's archive writer);
/// 0 in every export from 2.11 to 2.15.
inline constexpr int64_t kPt2ArchiveVersion = 0;
/// `<root>.data/version`: the zip record format version of PyTorch's archive writer; 6 in
/// every export from 2.11 to 2.15. An older one reads the same way; a newer one may not.
inline constexpr int64_t kPt2MaxDataVersion = 6;

/// Checks the version records of the archive that holds `model` (the files beside its
/// `data/` folder): an archive_version other than kPt2ArchiveVersion, or a .data/version
/// above kPt2MaxDataVersion -> NotSupported naming the archive's version, slimcuda's and the
/// PyTorch range; a record that is not a decimal number -> InvalidProgram. A record the
/// archive lacks is not checked (hand-made archives have none).
[[nodiscard]] Error check_pt2_versions(const Pt2Archive& archive, const Pt2Model& model) noexcept;

/// Checks the container C ABI that the model's generated wrapper source defines against
/// the one slimcuda calls: each AOTInductorModelContainer* function slimcuda uses that the
/// source defines must take the parameter types PyTorch 2.11 to 2.15 give it; another list
/// -> NotSupported naming the function and both lists. Functions the source does not define
/// (a source without the runtime, or none at all) are not checked: their absence is found
/// when the library is opened.
[[nodiscard]] Error check_container_abi(std::string_view wrapper_source) noexcept;

}  // namespace slimcuda
