// SPDX-License-Identifier: Apache-2.0
#pragma once

// Failed checks of generated model code that could not stop the code that made them.
//
// aoti_torch_check throws on a failed check, which the container's Run turns into its
// failure code. Inside an OpenMP parallel region (a CPU export's kernels) an exception
// leaving the region ends the process (std::terminate), so there the check records the
// failure here and returns; the run that called the model fails afterwards
// (Model::run compares check_failure_count() before and after). Process-wide: a worker
// thread of the region is not the caller's thread, so a concurrent run of another model
// may be failed too (never passed with bad outputs). What this cannot prevent: the code
// after the check runs with the value it rejected (an embedding row read past the table),
// so an index far out of range can still fault.

#include <cstdint>
#include <string>

namespace slimcuda {

/// Records a failed check (its message; the first of a run is the one reported). Thread-safe.
void note_check_failure(const std::string& message) noexcept;

/// How many failed checks were recorded since the process started.
[[nodiscard]] uint64_t check_failure_count() noexcept;

/// The message of the last recorded failure ("" when none).
[[nodiscard]] std::string last_check_failure();

}  // namespace slimcuda
