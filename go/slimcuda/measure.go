package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import "unsafe"

// Measurement is slimcuda's time for an operation next to the raw CUDA runtime's, measured
// side by side in one process (medians of alternating rounds).
type Measurement struct {
	RawMicros, SlimcudaMicros float64
}

// Ratio is raw time / slimcuda time: 1.0 means the same speed.
func (m Measurement) Ratio() float64 { return m.RawMicros / m.SlimcudaMicros }

func measureResult(op string, r C.sc_measure) (Measurement, error) {
	if r.code != 0 {
		msg := C.GoString(r.msg)
		C.free(unsafe.Pointer(r.msg))
		return Measurement{}, &Error{Op: op, Code: ErrorCode(r.code), Message: msg}
	}
	return Measurement{RawMicros: float64(r.raw_us), SlimcudaMicros: float64(r.slimcuda_us)}, nil
}

// MeasureCopy times blocking copies of nbytes between pinned host and device memory
// (toDevice: host to device), with or without a caller stream, against raw CUDA. It needs a
// GPU (ErrNotSupported without one).
func MeasureCopy(nbytes int, toDevice, withStream bool, iterations int) (Measurement, error) {
	if nbytes <= 0 || iterations <= 0 || iterations != int(int32(iterations)) {
		return Measurement{}, argError("MeasureCopy", "nbytes and iterations must be positive")
	}
	dir, ws := C.int32_t(1), C.int32_t(0)
	if toDevice {
		dir = 0
	}
	if withStream {
		ws = 1
	}
	return measureResult("MeasureCopy", C.sc_measure_copy(C.size_t(nbytes), dir, ws, C.int32_t(iterations)))
}

// MeasureAlloc times device allocation + free of nbytes against cudaMalloc + cudaFree.
func MeasureAlloc(nbytes, iterations int) (Measurement, error) {
	if nbytes <= 0 || iterations <= 0 || iterations != int(int32(iterations)) {
		return Measurement{}, argError("MeasureAlloc", "nbytes and iterations must be positive")
	}
	return measureResult("MeasureAlloc", C.sc_measure_alloc(C.size_t(nbytes), C.int32_t(iterations)))
}
