// Package testkernel keeps a CUDA stream busy for tests that prove what waits for what
// (the kernel is a test helper, csrc/testing/spin.h, not part of libslimcuda.so). Tests only.
package testkernel

/*
#include <stdint.h>

#include "csrc/testing/spin.h"
#include "slimcuda/slimcuda.h"

static int32_t spin_caller_stream(int64_t us) {
  void* stream = 0;
  int32_t selected = 0;
  int32_t rc = slimcuda_caller_stream_get(&stream, &selected);
  return rc != 0 ? rc : slimcuda_testing_spin(us, stream);
}
*/
import "C"

import (
	"fmt"
	"time"
)

// SpinCallerStream enqueues a kernel that keeps this OS thread's caller stream (the legacy
// default stream when none is selected) busy for about d, on the current device. Call it
// inside slimcuda.WithCallerStream, where the goroutine is locked to its thread.
func SpinCallerStream(d time.Duration) error {
	if rc := C.spin_caller_stream(C.int64_t(d.Microseconds())); rc != 0 {
		return fmt.Errorf("testkernel: spin failed with error code %#x", int32(rc))
	}
	return nil
}
