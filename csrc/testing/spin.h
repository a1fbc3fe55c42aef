// SPDX-License-Identifier: Apache-2.0
/* spin.h — a test and benchmark helper, not part of libslimcuda.so: a kernel that keeps a
 * stream busy, so tests can prove what waits for what. Linked statically into the test
 * binaries that use it (//csrc/testing:spin); C linkage, so Go's test helper package calls
 * it too. */
#ifndef SLIMCUDA_TESTING_SPIN_H_
#define SLIMCUDA_TESTING_SPIN_H_

#include <stdint.h>

#include "slimcuda/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues a kernel that occupies `stream` (a cudaStream_t; NULL: the legacy default
 * stream) of the current device for about `microseconds` (0..10,000,000) of GPU time.
 * Returns 0, or a slimcuda error code (InvalidArgument: out of range; Internal: the launch
 * failed). */
SLIMCUDA_API int32_t slimcuda_testing_spin(int64_t microseconds, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIMCUDA_TESTING_SPIN_H_ */
