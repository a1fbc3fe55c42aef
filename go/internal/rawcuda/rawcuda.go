// SPDX-License-Identifier: Apache-2.0

// Package rawcuda calls the CUDA runtime directly, bypassing slimcuda: the baseline that
// the Go benchmarks compare slimcuda against in the same run. Benchmarks only.
package rawcuda

// The few CUDA runtime functions the baseline needs are declared below (same ABI as
// cuda_runtime_api.h), so the package also builds with plain `go test` against the
// installed library, where no CUDA headers exist (pkgconfig.go links its libcudart).

/*
#include <stddef.h>

typedef int cudaError_t;
typedef struct CUstream_st* cudaStream_t;
extern cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int flags);
extern cudaError_t cudaFreeHost(void* p);
extern cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, int kind);
extern cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, cudaStream_t s);
extern cudaError_t cudaStreamSynchronize(cudaStream_t s);
extern cudaError_t cudaMalloc(void** p, size_t n);
extern cudaError_t cudaFree(void* p);
extern cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s);
extern cudaError_t cudaFreeAsync(void* p, cudaStream_t s);
extern const char* cudaGetErrorString(cudaError_t e);

static int noop(void) { return 0; }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cudaMemcpyKind values.
const (
	hostToDevice = 1
	deviceToHost = 2
)

func check(what string, e C.cudaError_t) error {
	if e != 0 {
		return fmt.Errorf("rawcuda: %s: %s", what, C.GoString(C.cudaGetErrorString(e)))
	}
	return nil
}

// HostAlloc returns n bytes of pinned (page-locked) host memory; free with HostFree.
func HostAlloc(n int) ([]byte, error) {
	var p unsafe.Pointer
	if err := check("cudaHostAlloc", C.cudaHostAlloc(&p, C.size_t(n), 0)); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// HostFree frees memory from HostAlloc.
func HostFree(b []byte) error { return check("cudaFreeHost", C.cudaFreeHost(unsafe.Pointer(&b[0]))) }

// CopyToDevice is cudaMemcpy host -> device.
func CopyToDevice(dst unsafe.Pointer, src []byte) error {
	return check("cudaMemcpy", C.cudaMemcpy(dst, unsafe.Pointer(&src[0]), C.size_t(len(src)), hostToDevice))
}

// CopyToHost is cudaMemcpy device -> host.
func CopyToHost(dst []byte, src unsafe.Pointer) error {
	return check("cudaMemcpy", C.cudaMemcpy(unsafe.Pointer(&dst[0]), src, C.size_t(len(dst)), deviceToHost))
}

// CopyToDeviceAsyncSync is cudaMemcpyAsync on stream, then cudaStreamSynchronize, in one
// cgo call each (as a C++ caller would write it).
func CopyToDeviceAsyncSync(dst unsafe.Pointer, src []byte, stream unsafe.Pointer) error {
	s := C.cudaStream_t(stream)
	if err := check("cudaMemcpyAsync", C.cudaMemcpyAsync(dst, unsafe.Pointer(&src[0]), C.size_t(len(src)), hostToDevice, s)); err != nil {
		return err
	}
	return check("cudaStreamSynchronize", C.cudaStreamSynchronize(s))
}

// CopyToHostAsyncSync is the device -> host twin of CopyToDeviceAsyncSync.
func CopyToHostAsyncSync(dst []byte, src unsafe.Pointer, stream unsafe.Pointer) error {
	s := C.cudaStream_t(stream)
	if err := check("cudaMemcpyAsync", C.cudaMemcpyAsync(unsafe.Pointer(&dst[0]), src, C.size_t(len(dst)), deviceToHost, s)); err != nil {
		return err
	}
	return check("cudaStreamSynchronize", C.cudaStreamSynchronize(s))
}

// Malloc is cudaMalloc on the current device; free with Free.
func Malloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	return p, check("cudaMalloc", C.cudaMalloc(&p, C.size_t(n)))
}

// Free is cudaFree.
func Free(p unsafe.Pointer) error { return check("cudaFree", C.cudaFree(p)) }

// MallocAsync is cudaMallocAsync on stream (the driver's stream-ordered pool).
func MallocAsync(n int, stream unsafe.Pointer) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	return p, check("cudaMallocAsync", C.cudaMallocAsync(&p, C.size_t(n), C.cudaStream_t(stream)))
}

// FreeAsync is cudaFreeAsync on stream.
func FreeAsync(p unsafe.Pointer, stream unsafe.Pointer) error {
	return check("cudaFreeAsync", C.cudaFreeAsync(p, C.cudaStream_t(stream)))
}

// Noop crosses into C and back doing nothing: the cost of one cgo call, the floor under
// every slimcuda call from Go.
func Noop() int { return int(C.noop()) }
