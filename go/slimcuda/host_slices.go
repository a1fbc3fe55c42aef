// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"errors"
	"runtime"
)

// TensorFrom returns a new contiguous tensor of the given shape on device holding a copy of
// data, whose element type gives the dtype ([]float32: Float32, []Float16Bits: Float16,
// []BFloat16Bits: BFloat16). data holds exactly the shape's number of elements, in
// row-major order (ErrInvalidArgument otherwise). The tensor is allocated and filled in
// one call on the call's stream (OnStream, WithCallerStream), so its memory belongs to the
// stream that uses it; blocking, like CopyFromHost: data may be reused when it returns.
// For another dtype than data's (a float16 tensor from a []float32), use NewTensor and
// CopyFromHost, which convert.
func TensorFrom[T HostElement](shape []int64, data []T, device Device, opts ...CallOption) (*Tensor, error) {
	const op = "TensorFrom"
	n, err := elementCount(op, shape)
	if err != nil {
		return nil, err
	}
	dtype := HostDType[T]()
	if len(data) != n {
		return nil, argError(op, "%d %s elements for shape %v, which has %d", len(data), dtype, shape, n)
	}
	if device.Index != int(int32(device.Index)) { // the C ABI checks the rest
		return nil, argError(op, "device index %d out of range", device.Index)
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return nil, err
	}
	defer release()
	r := C.sc_tensor_new_from_host(C.int64_t(len(shape)), int64Ptr(shape), C.int32_t(dtype), C.int32_t(device.Type),
		C.int32_t(device.Index), slicePtr(data), C.size_t(len(data)*dtype.Size()), with, stream)
	runtime.KeepAlive(shape)
	runtime.KeepAlive(data)
	if err := check(op, r); err != nil {
		return nil, err
	}
	return newTensor(op, r.ptr)
}

// ToSlice returns a copy of t's elements in a new slice, in row-major order of its view.
// T must be t's dtype (ToSlice[float32] of a Float32 tensor; Float16Bits for Float16,
// BFloat16Bits for BFloat16): ErrInvalidArgument otherwise, naming both; CopyToHost
// converts between dtypes instead. A view with more elements than its storage holds (a
// dimension broadcast with stride 0) is refused too, since the slice could be far larger
// than the memory behind it: copy such a view with CopyToHost into a slice of your own.
// CUDA reads run on the call's stream (OnStream, WithCallerStream): after Run on a stream,
// pass the same stream. Blocking: the slice is complete when ToSlice returns.
func ToSlice[T HostElement](t *Tensor, opts ...CallOption) ([]T, error) {
	const op = "ToSlice"
	if _, err := t.handle(op); err != nil { // nil or closed
		return nil, err
	}
	want := HostDType[T]()
	if t.dtype != want {
		return nil, argError(op, "the tensor is %s, ToSlice reads it into []%s only as %s (CopyToHost converts)",
			t.dtype, hostTypeName(want), want)
	}
	n, err := elementCount(op, t.sizes)
	if err != nil {
		return nil, err
	}
	if int64(n)*int64(want.Size()) > t.storageBytes {
		return nil, argError(op, "the view %v has more elements than its storage of %d bytes holds (a broadcast "+
			"dimension?): use CopyToHost into a slice of your own", t.sizes, t.storageBytes)
	}
	out := make([]T, n)
	if err := copyToHost(op, t, out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

// CloseAll closes every tensor given (nil ones included, as Close allows), typically a
// run's outputs: defer slimcuda.CloseAll(outs...). It returns the failures joined
// (errors.Join), nil when every Close succeeded.
func CloseAll(ts ...*Tensor) error {
	var errs []error
	for _, t := range ts {
		if err := t.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hostTypeName is the Go name of the host element type of dtype d.
func hostTypeName(d DType) string {
	switch d {
	case Float16:
		return "Float16Bits"
	case BFloat16:
		return "BFloat16Bits"
	}
	return d.String() // uint8, int64, float32, bool, ...: Go's names too
}
