// Package rawcuda calls the CUDA runtime directly, bypassing slimcuda: the baseline that
// the Go benchmarks compare slimcuda against in the same run. Benchmarks only.
package rawcuda

// #include <cuda_runtime_api.h>
import "C"

import (
	"fmt"
	"unsafe"
)

func check(what string, e C.cudaError_t) error {
	if e != C.cudaSuccess {
		return fmt.Errorf("rawcuda: %s: %s", what, C.GoString(C.cudaGetErrorString(e)))
	}
	return nil
}

// HostAlloc returns n bytes of pinned (page-locked) host memory; free with HostFree.
func HostAlloc(n int) ([]byte, error) {
	var p unsafe.Pointer
	if err := check("cudaHostAlloc", C.cudaHostAlloc(&p, C.size_t(n), C.cudaHostAllocDefault)); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// HostFree frees memory from HostAlloc.
func HostFree(b []byte) error { return check("cudaFreeHost", C.cudaFreeHost(unsafe.Pointer(&b[0]))) }

// CopyToDevice is cudaMemcpy host -> device.
func CopyToDevice(dst unsafe.Pointer, src []byte) error {
	return check("cudaMemcpy", C.cudaMemcpy(dst, unsafe.Pointer(&src[0]), C.size_t(len(src)), C.cudaMemcpyHostToDevice))
}

// CopyToHost is cudaMemcpy device -> host.
func CopyToHost(dst []byte, src unsafe.Pointer) error {
	return check("cudaMemcpy", C.cudaMemcpy(unsafe.Pointer(&dst[0]), src, C.size_t(len(dst)), C.cudaMemcpyDeviceToHost))
}

// CopyToDeviceAsyncSync is cudaMemcpyAsync on stream, then cudaStreamSynchronize, in one
// cgo call (as a C++ caller would write it).
func CopyToDeviceAsyncSync(dst unsafe.Pointer, src []byte, stream unsafe.Pointer) error {
	s := C.cudaStream_t(stream)
	if err := check("cudaMemcpyAsync", C.cudaMemcpyAsync(dst, unsafe.Pointer(&src[0]), C.size_t(len(src)), C.cudaMemcpyHostToDevice, s)); err != nil {
		return err
	}
	return check("cudaStreamSynchronize", C.cudaStreamSynchronize(s))
}

// CopyToHostAsyncSync is the device -> host twin of CopyToDeviceAsyncSync.
func CopyToHostAsyncSync(dst []byte, src unsafe.Pointer, stream unsafe.Pointer) error {
	s := C.cudaStream_t(stream)
	if err := check("cudaMemcpyAsync", C.cudaMemcpyAsync(unsafe.Pointer(&dst[0]), src, C.size_t(len(dst)), C.cudaMemcpyDeviceToHost, s)); err != nil {
		return err
	}
	return check("cudaStreamSynchronize", C.cudaStreamSynchronize(s))
}
