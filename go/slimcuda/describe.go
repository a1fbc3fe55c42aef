// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
//
// static inline sc_result sc_describe_file(const char* path, const slimcuda_load_options* o) {
//   slimcuda_description* d = NULL;
//   sc_result r = sc_wrap(slimcuda_describe_file(path, o, &d));
//   r.ptr = d;
//   return r;
// }
// static inline sc_result sc_describe(const void* data, size_t n, const slimcuda_load_options* o) {
//   slimcuda_description* d = NULL;
//   sc_result r = sc_wrap(slimcuda_describe(data, n, o, &d));
//   r.ptr = d;
//   return r;
// }
// // i64: the device type a load would use (high half) and the mask of the file's (low half).
// static inline sc_result sc_description_device(void* d) {
//   int32_t type = 0;
//   uint32_t types = 0;
//   sc_result r = sc_wrap(slimcuda_description_device((const slimcuda_description*)d, &type, &types));
//   r.i64 = ((int64_t)type << 32) | types;
//   return r;
// }
// static inline sc_result sc_description_num_io(void* d) {
//   size_t n_in = 0, n_out = 0;
//   sc_result r = sc_wrap(slimcuda_description_num_io((const slimcuda_description*)d, &n_in, &n_out));
//   r.i64 = ((int64_t)n_in << 32) | (uint32_t)n_out;
//   return r;
// }
// static inline sc_result sc_description_spec(void* d, int output, size_t i, slimcuda_tensor_spec* spec) {
//   return sc_wrap(output ? slimcuda_description_output_spec((const slimcuda_description*)d, i, spec)
//                         : slimcuda_description_input_spec((const slimcuda_description*)d, i, spec));
// }
// static inline void sc_description_free(void* d) { slimcuda_description_free((slimcuda_description*)d); }
import "C"

import (
	"runtime"
	"unsafe"
)

// ObservedSpec: an output the model file states nothing about, as the model's first run
// returned it (Model.Outputs after a run): DType and Sizes are that run's, which other
// inputs may change.
const ObservedSpec Dynamism = -2

// A Description is what a model file states about itself, read by Describe without loading
// its library: no library code runs and no GPU is needed.
type Description struct {
	// Device is the device type a Load with the same options would use: a .pt2's
	// AOTI_DEVICE_KEY; for a package its CUDA library when it has one and a GPU is there,
	// else its CPU library.
	Device DeviceType
	// Devices are the device types the file has libraries for (a .pt2: its one).
	Devices []DeviceType
	// Inputs and Outputs are that library's: a package's manifest; a .pt2's wrapper source
	// (inputs from its input checks, outputs from their allocations), UnknownSpec where it
	// says nothing (an output allocated with symbolic sizes, a view).
	Inputs, Outputs []TensorSpec
}

// Describe reads a model file's devices, inputs and outputs without loading it (a .pt2 or a
// package, recognised as Load recognises them). Of the options only LoadOnDevice's type
// and WithModelName count. Errors: Load's file errors; ErrInvalidProgram for a malformed
// file, or one that is neither kind ("is not a model file"); ErrNotSupported for a .pt2
// compiled for another device type than LoadOnDevice asks for, or whose archive holds no
// wrapper source stating its input and output counts (Load it to learn them).
func Describe(path string, opts ...LoadOption) (*Description, error) {
	cfg, err := loadConfigOf("Describe", opts)
	if err != nil {
		return nil, err
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	o, free := cfg.options()
	defer free()
	r := C.sc_describe_file(cp, &o)
	if err := check("Describe", r); err != nil {
		return nil, withFileCause(err)
	}
	return newDescription(r.ptr)
}

// DescribeBytes is Describe of a model file held in memory.
func DescribeBytes(data []byte, opts ...LoadOption) (*Description, error) {
	cfg, err := loadConfigOf("DescribeBytes", opts)
	if err != nil {
		return nil, err
	}
	o, free := cfg.options()
	defer free()
	r := C.sc_describe(slicePtr(data), C.size_t(len(data)), &o)
	runtime.KeepAlive(data)
	if err := check("DescribeBytes", r); err != nil {
		return nil, err
	}
	return newDescription(r.ptr)
}

// newDescription copies the C description into Go values and frees it.
func newDescription(h unsafe.Pointer) (*Description, error) {
	defer C.sc_description_free(h)
	r := C.sc_description_device(h)
	if err := check("Describe", r); err != nil {
		return nil, err
	}
	d := &Description{Device: DeviceType(r.i64 >> 32)}
	for _, t := range []DeviceType{CPU, CUDA} {
		if uint32(r.i64)&(1<<uint(t)) != 0 {
			d.Devices = append(d.Devices, t)
		}
	}
	r = C.sc_description_num_io(h)
	if err := check("Describe", r); err != nil {
		return nil, err
	}
	for k, n := range []int{int(r.i64 >> 32), int(uint32(r.i64))} {
		for i := 0; i < n; i++ {
			var spec C.slimcuda_tensor_spec
			if err := check("Describe", C.sc_description_spec(h, C.int(k), C.size_t(i), &spec)); err != nil {
				return nil, err
			}
			if k == 0 {
				d.Inputs = append(d.Inputs, specFromC(&spec))
			} else {
				d.Outputs = append(d.Outputs, specFromC(&spec))
			}
		}
	}
	return d, nil
}

// specFromC copies a C spec (its name and sizes are borrowed from the C object).
func specFromC(spec *C.slimcuda_tensor_spec) TensorSpec {
	ts := TensorSpec{
		Name:     C.GoString(spec.name),
		DType:    DType(spec.dtype),
		Sizes:    make([]int64, int(spec.ndim)),
		Dynamism: Dynamism(spec.dynamism),
		Device:   Device{Type: DeviceType(spec.device_type), Index: int(spec.device_index)},
	}
	if spec.ndim > 0 {
		copy(ts.Sizes, unsafe.Slice((*int64)(unsafe.Pointer(spec.sizes)), int(spec.ndim)))
	}
	return ts
}

// observeOutputs fills the outputs the model file states nothing about from a run's
// outputs (ObservedSpec), once: the first run that returns them.
func (m *Model) observeOutputs(outs []*Tensor) {
	if m.observed.Load() {
		return
	}
	m.specMu.Lock()
	defer m.specMu.Unlock()
	for i, s := range m.outputs {
		if s.Dynamism != UnknownSpec || i >= len(outs) {
			continue
		}
		info, err := outs[i].Info()
		if err != nil {
			return // tried again on the next run
		}
		m.outputs[i].DType, m.outputs[i].Sizes, m.outputs[i].Dynamism = info.DType, info.Sizes, ObservedSpec
	}
	m.observed.Store(true)
}
