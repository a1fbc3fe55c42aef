// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// A DeviceBuffer is device memory from libslimcuda's CUDA allocator. Close frees it.
// Methods are safe for concurrent use, except Close, which must not race with them nor
// with work still using the memory (kernels, copies on a stream: synchronize first).
type DeviceBuffer struct {
	ptr    unsafe.Pointer
	size   int
	device int        // resolved CUDA ordinal, never -1
	mu     sync.Mutex // guards closed against double free
	closed bool
}

// AllocOption configures Alloc.
type AllocOption func(*allocConfig)

type allocConfig struct {
	device    Device
	alignment int
}

// OnDevice allocates on a CUDA device (default: CurrentCUDA, resolved by Alloc).
func OnDevice(device Device) AllocOption { return func(c *allocConfig) { c.device = device } }

// Aligned asks for an alignment: a power of two (default 256, cudaMalloc's).
func Aligned(alignment int) AllocOption { return func(c *allocConfig) { c.alignment = alignment } }

// Alloc allocates nbytes of device memory. nbytes = 0 gives an empty buffer that owns
// nothing. Without a GPU or driver the error is ErrNotSupported; a device that is not CUDA
// is ErrInvalidArgument. The buffer records the device it is on: CurrentCUDA is resolved
// here, so later calls do not depend on the OS thread they run on. Nil options are skipped.
func Alloc(nbytes int, opts ...AllocOption) (*DeviceBuffer, error) {
	cfg := allocConfig{device: CurrentCUDA}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	switch {
	case nbytes < 0:
		return nil, argError("Alloc", "negative size %d", nbytes)
	case cfg.alignment < 0:
		return nil, argError("Alloc", "negative alignment %d", cfg.alignment)
	}
	index, err := cudaIndex("Alloc", cfg.device)
	if err != nil {
		return nil, err
	}
	r := C.sc_device_alloc(C.size_t(nbytes), index, C.size_t(cfg.alignment))
	if err := check("Alloc", r); err != nil {
		return nil, err
	}
	b := &DeviceBuffer{ptr: r.ptr, size: nbytes, device: int(r.device)}
	runtime.SetFinalizer(b, func(b *DeviceBuffer) { b.Close() })
	return b, nil
}

// Len is the buffer's size in bytes (0 for a nil buffer).
func (b *DeviceBuffer) Len() int {
	if b == nil {
		return 0
	}
	return b.size
}

// Device is the CUDA device the buffer is on, resolved when it was allocated (never
// CurrentCUDA; Device{} for a nil buffer).
func (b *DeviceBuffer) Device() Device {
	if b == nil {
		return Device{}
	}
	return CUDADevice(b.device)
}

// Pointer is the device address, for passing to other CUDA libraries (nil for a nil or
// closed buffer: the memory is freed).
func (b *DeviceBuffer) Pointer() unsafe.Pointer {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	return b.ptr
}

// usable checks the receiver and that [0, n) lies inside the buffer.
func (b *DeviceBuffer) usable(op string, n int) error {
	if b == nil {
		return argError(op, "nil buffer")
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	switch {
	case closed:
		return &Error{Op: op, Code: ErrInvalidState, Message: "buffer is closed"}
	case n < 0 || n > b.size:
		return argError(op, "%d bytes do not fit a %d-byte buffer", n, b.size)
	}
	return nil
}

// CopyFromHost copies src into the start of the buffer and returns when the copy is
// complete. With OnStream, or inside WithCallerStream, the copy runs on that stream after
// the work already enqueued there.
func (b *DeviceBuffer) CopyFromHost(src []byte, opts ...CallOption) error {
	const op = "CopyFromHost"
	if err := b.usable(op, len(src)); err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	if len(src) == 0 {
		return nil
	}
	r := C.sc_copy_h2d(b.ptr, unsafe.Pointer(&src[0]), C.size_t(len(src)), C.int32_t(b.device), with, stream)
	runtime.KeepAlive(b)
	return check(op, r)
}

// CopyToHost fills dst from the start of the buffer and returns when the copy is
// complete, ordered like CopyFromHost.
func (b *DeviceBuffer) CopyToHost(dst []byte, opts ...CallOption) error {
	const op = "CopyToHost"
	if err := b.usable(op, len(dst)); err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	if len(dst) == 0 {
		return nil
	}
	r := C.sc_copy_d2h(unsafe.Pointer(&dst[0]), b.ptr, C.size_t(len(dst)), C.int32_t(b.device), with, stream)
	runtime.KeepAlive(b)
	return check(op, r)
}

// FillFloat32 sets the first n float32 elements to value. The kernel is enqueued on the
// call's stream (OnStream, WithCallerStream, else the legacy default stream); FillFloat32
// returns once it is enqueued.
func (b *DeviceBuffer) FillFloat32(value float32, n int, opts ...CallOption) error {
	const op = "FillFloat32"
	if b == nil {
		return argError(op, "nil buffer")
	}
	if n < 0 || n > b.size/4 {
		return argError(op, "%d float32 elements do not fit", n)
	}
	if err := b.usable(op, n*4); err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	r := C.sc_fill_f32(b.ptr, C.size_t(n), C.float(value), C.int32_t(b.device), with, stream)
	runtime.KeepAlive(b)
	return check(op, r)
}

// AxpyFloat32 computes y[i] = a*x[i] + y[i] for the first n float32 elements, enqueued
// like FillFloat32. x and y must be on the same device.
func AxpyFloat32(y, x *DeviceBuffer, n int, a float32, opts ...CallOption) error {
	const op = "AxpyFloat32"
	if y == nil || x == nil {
		return argError(op, "nil buffer")
	}
	if n < 0 || n > y.size/4 || n > x.size/4 {
		return argError(op, "%d float32 elements do not fit", n)
	}
	if err := y.usable(op, n*4); err != nil {
		return err
	}
	if err := x.usable(op, n*4); err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	r := C.sc_axpy_f32(y.ptr, x.ptr, C.size_t(n), C.float(a), C.int32_t(y.device), with, stream)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	return check(op, r)
}

// Close frees the device memory, following the package's Close contract (see the package
// documentation): nil-safe, idempotent, its error reported once, and every later call
// that can fail reports ErrInvalidState.
func (b *DeviceBuffer) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	runtime.SetFinalizer(b, nil)
	if b.ptr == nil {
		return nil
	}
	return check("DeviceBuffer.Close", C.sc_device_free(b.ptr, C.int32_t(b.device)))
}

// Element is a fixed-size numeric type that can be viewed as bytes.
type Element interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// AsBytes views a slice of numbers as its bytes, without copying, for CopyFromHost and
// CopyToHost: buf.CopyToHost(slimcuda.AsBytes(out)).
func AsBytes[E Element](s []E) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero E
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// copyRaw copies nbytes between b and a raw host pointer (tests use it to hand the C ABI
// pointers a Go slice cannot express, such as NULL).
func copyRaw(b *DeviceBuffer, host unsafe.Pointer, nbytes int, toDevice bool, opts []CallOption) error {
	with, stream, release, err := streamArgs("copyRaw", collect(opts))
	if err != nil {
		return err
	}
	defer release()
	var r C.sc_result
	if toDevice {
		r = C.sc_copy_h2d(b.ptr, host, C.size_t(nbytes), C.int32_t(b.device), with, stream)
	} else {
		r = C.sc_copy_d2h(host, b.ptr, C.size_t(nbytes), C.int32_t(b.device), with, stream)
	}
	return check("copyRaw", r)
}
