// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// DType is a tensor element type; the values are c10's codes (PyTorch's dtypes).
type DType int32

// The supported element types.
const (
	Uint8    DType = 0
	Int8     DType = 1
	Int16    DType = 2
	Int32    DType = 3
	Int64    DType = 4
	Float16  DType = 5
	Float32  DType = 6
	Float64  DType = 7
	Bool     DType = 11
	BFloat16 DType = 15
)

var dtypeNames = map[DType]string{
	Uint8: "uint8", Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Float16: "float16", Float32: "float32", Float64: "float64", Bool: "bool", BFloat16: "bfloat16",
}

var dtypeSizes = map[DType]int{
	Uint8: 1, Int8: 1, Int16: 2, Int32: 4, Int64: 8, Float16: 2, Float32: 4, Float64: 8, Bool: 1, BFloat16: 2,
}

// String returns PyTorch's name for the dtype ("float32"), "unknown" for UnknownDType.
func (d DType) String() string {
	if n, ok := dtypeNames[d]; ok {
		return n
	}
	if d == UnknownDType {
		return "unknown"
	}
	return fmt.Sprintf("DType(%d)", int32(d))
}

// Size is the element size in bytes (0 for an unsupported code).
func (d DType) Size() int { return dtypeSizes[d] }

// DTypeByName returns the dtype called name ("bfloat16").
func DTypeByName(name string) (DType, bool) {
	for d, n := range dtypeNames {
		if n == name {
			return d, true
		}
	}
	return 0, false
}

// Float16Bits and BFloat16Bits hold raw 16-bit floating-point values, for host slices of
// those dtypes.
type (
	Float16Bits  uint16
	BFloat16Bits uint16
)

// A Tensor is a strided view of CPU, pinned host or CUDA memory: libslimcuda's slim
// tensor, the object AOTInductor models receive. Views share memory; it is freed with the
// last one closed. Methods are safe for concurrent use except Close: reading a tensor
// (Info, View, CopyToHost, use as a Model input) from many goroutines at once is fine;
// writing its memory (CopyFromHost, a copy into it) while another goroutine reads or
// writes the same memory is a data race, as with any memory. Close must not race with the
// tensor's other methods nor with a Model run that has it as an input; views of one
// storage may be closed from different goroutines at once.
type Tensor struct {
	h      unsafe.Pointer
	mu     sync.Mutex
	closed bool
	// What a handle never changes, read once when the Tensor is made, so that Sizes and
	// DType need no C call and keep describing a closed tensor.
	sizes        []int64
	dtype        DType
	storageBytes int64
}

// TensorOption configures NewTensor.
type TensorOption func(*tensorConfig)

type tensorConfig struct {
	strides []int64
	pinned  bool
}

// WithStrides gives the new tensor explicit strides (in elements; default row-major).
func WithStrides(strides ...int64) TensorOption {
	return func(c *tensorConfig) { c.strides = append([]int64(nil), strides...) }
}

// Pinned allocates page-locked host memory (device must be CPU; ErrNotSupported without a
// CUDA driver — there is no pageable fallback).
func Pinned() TensorOption { return func(c *tensorConfig) { c.pinned = true } }

func int64Ptr(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

// newTensor wraps a new C tensor handle, reading its metadata; when that fails the handle
// is deleted and the error returned.
func newTensor(op string, h unsafe.Pointer) (*Tensor, error) {
	var info C.slimcuda_tensor_info
	var sizes, strides [25]C.int64_t
	if err := check(op, C.sc_tensor_get_info(h, &info, &sizes[0], &strides[0])); err != nil {
		_ = check(op, C.sc_tensor_delete(h)) // the metadata error is the one to report
		return nil, err
	}
	t := &Tensor{h: h, sizes: make([]int64, int(info.ndim)), dtype: DType(info.dtype),
		storageBytes: int64(info.storage_bytes)}
	for i := range t.sizes {
		t.sizes[i] = int64(sizes[i])
	}
	runtime.SetFinalizer(t, func(t *Tensor) { t.Close() })
	return t, nil
}

// Sizes is the tensor's shape, a copy (nil for a nil Tensor). It needs no C call and keeps
// describing a closed tensor.
func (t *Tensor) Sizes() []int64 {
	if t == nil {
		return nil
	}
	return append([]int64{}, t.sizes...)
}

// DType is the tensor's element type (UnknownDType for a nil Tensor). It needs no C call
// and keeps describing a closed tensor.
func (t *Tensor) DType() DType {
	if t == nil {
		return UnknownDType
	}
	return t.dtype
}

// elementCount is the product of sizes, or an error when a size is negative or the product
// overflows int.
func elementCount(op string, sizes []int64) (int, error) {
	n := int64(1)
	for _, s := range sizes {
		if s < 0 {
			return 0, argError(op, "negative size in %v", sizes)
		}
		if s != 0 && n > math.MaxInt/s {
			return 0, argError(op, "%v has more elements than an int counts", sizes)
		}
		n *= s
	}
	return int(n), nil
}

// NewTensor allocates an uninitialized tensor. Nil options are skipped.
func NewTensor(sizes []int64, dtype DType, device Device, opts ...TensorOption) (*Tensor, error) {
	var cfg tensorConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.strides != nil && len(cfg.strides) != len(sizes) {
		return nil, argError("NewTensor", "%d strides for %d sizes", len(cfg.strides), len(sizes))
	}
	if device.Index != int(int32(device.Index)) { // the C ABI checks the rest
		return nil, argError("NewTensor", "device index %d out of range", device.Index)
	}
	pinned := C.int32_t(0)
	if cfg.pinned {
		pinned = 1
	}
	r := C.sc_tensor_empty(C.int64_t(len(sizes)), int64Ptr(sizes), int64Ptr(cfg.strides), C.int32_t(dtype),
		C.int32_t(device.Type), C.int32_t(device.Index), pinned)
	if err := check("NewTensor", r); err != nil {
		return nil, err
	}
	return newTensor("NewTensor", r.ptr)
}

func (t *Tensor) handle(op string) (unsafe.Pointer, error) {
	if t == nil {
		return nil, argError(op, "nil tensor")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, &Error{Op: op, Code: ErrInvalidState, Message: "tensor is closed"}
	}
	return t.h, nil
}

// View returns a new tensor over the same memory with the given sizes, strides (elements)
// and storage offset; it must fit inside the storage.
func (t *Tensor) View(sizes, strides []int64, offset int64) (*Tensor, error) {
	h, err := t.handle("Tensor.View")
	if err != nil {
		return nil, err
	}
	if len(strides) != len(sizes) {
		return nil, argError("Tensor.View", "%d strides for %d sizes", len(strides), len(sizes))
	}
	r := C.sc_tensor_view(h, C.int64_t(len(sizes)), int64Ptr(sizes), int64Ptr(strides), C.int64_t(offset))
	runtime.KeepAlive(t)
	if err := check("Tensor.View", r); err != nil {
		return nil, err
	}
	return newTensor("Tensor.View", r.ptr)
}

// Clone returns a copy in new memory on the same device: contiguous, or with t's strides
// when preserveStrides is set.
func (t *Tensor) Clone(preserveStrides bool) (*Tensor, error) {
	h, err := t.handle("Tensor.Clone")
	if err != nil {
		return nil, err
	}
	p := C.int32_t(0)
	if preserveStrides {
		p = 1
	}
	r := C.sc_tensor_clone(h, p)
	runtime.KeepAlive(t)
	if err := check("Tensor.Clone", r); err != nil {
		return nil, err
	}
	return newTensor("Tensor.Clone", r.ptr)
}

// TensorInfo describes a tensor.
type TensorInfo struct {
	Sizes         []int64
	Strides       []int64
	Numel         int64
	DType         DType
	Device        Device
	StorageOffset int64 // elements
	StorageBytes  int64
	Pinned        bool
	Contiguous    bool
	Data          unsafe.Pointer // address of element 0 (device memory for CUDA tensors)
}

// Info returns the tensor's metadata.
func (t *Tensor) Info() (TensorInfo, error) {
	h, err := t.handle("Tensor.Info")
	if err != nil {
		return TensorInfo{}, err
	}
	var info C.slimcuda_tensor_info
	var sizes, strides [25]C.int64_t
	r := C.sc_tensor_get_info(h, &info, &sizes[0], &strides[0])
	runtime.KeepAlive(t)
	if err := check("Tensor.Info", r); err != nil {
		return TensorInfo{}, err
	}
	out := TensorInfo{
		Sizes:         make([]int64, int(info.ndim)),
		Strides:       make([]int64, int(info.ndim)),
		Numel:         int64(info.numel),
		DType:         DType(info.dtype),
		Device:        Device{Type: DeviceType(info.device_type), Index: int(info.device_index)},
		StorageOffset: int64(info.storage_offset),
		StorageBytes:  int64(info.storage_bytes),
		Pinned:        info.pinned != 0,
		Contiguous:    info.contiguous != 0,
		Data:          info.data,
	}
	for i := range out.Sizes {
		out.Sizes[i], out.Strides[i] = int64(sizes[i]), int64(strides[i])
	}
	return out, nil
}

// CopyFrom copies src into t element by element: equal sizes, any strides, dtypes and
// devices. CUDA work runs on the call's stream (OnStream, WithCallerStream, else the legacy
// default stream); copies involving host memory are complete when CopyFrom returns.
func (t *Tensor) CopyFrom(src *Tensor, opts ...CallOption) error {
	const op = "Tensor.CopyFrom"
	dh, err := t.handle(op)
	if err != nil {
		return err
	}
	sh, err := src.handle(op)
	if err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	r := C.sc_tensor_copy(dh, sh, with, stream)
	runtime.KeepAlive(t)
	runtime.KeepAlive(src)
	return check(op, r)
}

// HostElement is the element types of Go slices that tensors copy from and to: one per
// slimcuda dtype. A host copy converts between the slice's element type and the tensor's
// dtype, so a []float64 fills a float16 tensor; a slice of any other type does not compile.
type HostElement interface {
	uint8 | int8 | int16 | int32 | int64 | Float16Bits | float32 | float64 | bool | BFloat16Bits
}

// HostDType returns the dtype of host slices of T ([]float32: Float32).
func HostDType[T HostElement]() DType {
	var zero T
	switch any(zero).(type) {
	case uint8:
		return Uint8
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case Float16Bits:
		return Float16
	case float32:
		return Float32
	case float64:
		return Float64
	case bool:
		return Bool
	}
	return BFloat16
}

func slicePtr[E any](s []E) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// CopyFromHost fills t from src ([]float32, []int64, []bool, []Float16Bits, ...), which holds
// exactly t's number of elements in row-major order, converting to t's dtype. Blocking: src
// may be reused when it returns.
func CopyFromHost[T HostElement](t *Tensor, src []T, opts ...CallOption) error {
	const op = "CopyFromHost"
	h, err := t.handle(op)
	if err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	dtype := HostDType[T]()
	r := C.sc_tensor_from_host(h, slicePtr(src), C.size_t(len(src)*dtype.Size()), C.int32_t(dtype), with, stream)
	runtime.KeepAlive(t)
	runtime.KeepAlive(src)
	return check(op, r)
}

// CopyToHost reads t, in row-major order of its view, into dst, which holds exactly t's
// number of elements, converting to dst's element type. Blocking.
func CopyToHost[T HostElement](t *Tensor, dst []T, opts ...CallOption) error {
	return copyToHost("CopyToHost", t, dst, opts)
}

func copyToHost[T HostElement](op string, t *Tensor, dst []T, opts []CallOption) error {
	h, err := t.handle(op)
	if err != nil {
		return err
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	dtype := HostDType[T]()
	r := C.sc_tensor_to_host(h, slicePtr(dst), C.size_t(len(dst)*dtype.Size()), C.int32_t(dtype), with, stream)
	runtime.KeepAlive(t)
	runtime.KeepAlive(dst)
	return check(op, r)
}

// Close releases the tensor; its memory is freed with the last view. It follows the
// package's Close contract (see the package documentation): nil-safe, idempotent, its
// error reported once, and every later call that can fail reports ErrInvalidState.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	runtime.SetFinalizer(t, nil)
	return check("Tensor.Close", C.sc_tensor_delete(t.h))
}
