// SPDX-License-Identifier: Apache-2.0

// Package testkernel keeps a CUDA stream busy for tests that prove what waits for what
// (the kernel is a test helper, csrc/testing/spin.h, not part of libslimcuda.so). Tests only.
//
// Only Bazel builds the kernel (//csrc/testing:spin_shared, a cdep of this library). Under
// plain `go test` the symbol is declared weak and stays unresolved, [Available] reports
// false, and the tests that need it skip, saying so ([Require]).
package testkernel

/*
#cgo CFLAGS: -I${SRCDIR}/../../..
#include <stdint.h>

#include "csrc/testing/spin.h"
#include "slimcuda/slimcuda.h"

#pragma weak slimcuda_testing_spin

static int spin_available(void) { return &slimcuda_testing_spin != 0; }

static int32_t spin_caller_stream(int64_t us) {
  if (!spin_available()) return SLIMCUDA_ERROR_NOT_SUPPORTED;
  void* stream = 0;
  int32_t selected = 0;
  int32_t rc = slimcuda_caller_stream_get(&stream, &selected);
  return rc != 0 ? rc : slimcuda_testing_spin(us, stream);
}
*/
import "C"

import (
	"fmt"
	"testing"
	"time"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
)

// Available reports whether the spin kernel is linked in (Bazel builds; not plain go test).
func Available() bool { return C.spin_available() != 0 }

// SkipReason is what tests say when they skip because the kernel is not available.
const SkipReason = "testkernel: the spin kernel (csrc/testing:spin) is built only by Bazel; run `bazel test //go/slimcuda:slimcuda_test`"

// Require ends t unless the kernel is linked in: a skip (SkipReason) under plain go test,
// a failure under SLIMCUDA_REQUIRE_GPU=1, whose builds (Bazel's, the GPU bundle) always
// link it, so its absence there is a broken build, not a missing GPU.
func Require(t testing.TB) {
	t.Helper()
	requireLinked(t, Available())
}

func requireLinked(t testing.TB, available bool) {
	t.Helper()
	switch {
	case available:
	case fixture.GPURequired():
		t.Fatal("SLIMCUDA_REQUIRE_GPU=1 but the spin kernel (csrc/testing:spin) is not linked into this binary")
	default:
		t.Skip(SkipReason)
	}
}

// SpinCallerStream enqueues a kernel that keeps this OS thread's caller stream (the legacy
// default stream when none is selected) busy for about d, on the current device. Call it
// inside slimcuda.WithCallerStream, where the goroutine is locked to its thread.
func SpinCallerStream(d time.Duration) error {
	if rc := C.spin_caller_stream(C.int64_t(d.Microseconds())); rc != 0 {
		return fmt.Errorf("testkernel: spin failed with error code %#x", int32(rc))
	}
	return nil
}
