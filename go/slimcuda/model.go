// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Dynamism says how a model input or output's shape may vary.
type Dynamism int32

// The kinds of shape dynamism.
const (
	Static           Dynamism = 0 // sizes are exact
	DynamicBounded   Dynamism = 1 // sizes are upper bounds
	DynamicUnbounded Dynamism = 2 // only the rank is fixed (CPU only)
	// UnknownSpec: the model file states nothing about this input or output but its
	// position and name (a .pt2's outputs; a .pt2's inputs when it lacks its wrapper
	// source). DType is then UnknownDType and Sizes empty; a run checks such an input's
	// device only.
	UnknownSpec Dynamism = -1
	// ObservedSpec (describe.go): an UnknownSpec output after the first run.
)

// UnknownDType is a TensorSpec's DType when the model file does not state it.
const UnknownDType DType = -1

func (d Dynamism) String() string {
	switch d {
	case Static:
		return "static"
	case DynamicBounded:
		return "dynamic-bounded"
	case DynamicUnbounded:
		return "dynamic-unbounded"
	case UnknownSpec:
		return "unknown"
	case ObservedSpec:
		return "observed"
	}
	return fmt.Sprintf("Dynamism(%d)", int32(d))
}

// TensorSpec is one declared input or output of a model.
type TensorSpec struct {
	Name     string
	DType    DType
	Sizes    []int64 // exact, or upper bounds when DynamicBounded
	Dynamism Dynamism
	Device   Device // Index -1: the model's device
}

// A Model is a loaded model package: one of its libraries (CPU or CUDA), loaded from
// memory, with the AOTInductor container it defines, holding Instances() model instances.
//
// A Model is safe for concurrent use, Close included. Run and RunContext may be called
// from any number of goroutines at once (each with its own inputs, outputs and stream): a
// run takes a free instance and never waits for another caller's work while one is free;
// when all are busy it waits for one (RunContext: until its context is done). Close waits
// for the runs in flight and for the runs already waiting for an instance, then unloads;
// a run that starts after Close returns ErrInvalidState. A Tensor given to a run must not
// be closed before the run returns.
type Model struct {
	h         unsafe.Pointer
	mu        sync.RWMutex // runs hold it shared, Close exclusively
	closed    bool
	slots     chan struct{} // one token per instance: taken before the C call, so C never waits
	device    Device
	inputs    []TensorSpec
	outputs   []TensorSpec // specMu guards it: the first run fills UnknownSpec outputs in
	specMu    sync.Mutex
	observed  atomic.Bool // no output is UnknownSpec any more
	instances int
	constants []ConstantInfo
	stateful  bool
}

// newModel wraps a loaded C model (freed here if describing it fails).
func newModel(h unsafe.Pointer) (*Model, error) {
	m := &Model{h: h}
	if err := m.describe(); err != nil {
		_ = check("LoadBytes", C.sc_model_free(m.h)) // the describe error is the one to report
		return nil, err
	}
	runtime.SetFinalizer(m, func(m *Model) { m.Close() })
	return m, nil
}

// describe caches the device and the I/O specs (they never change).
func (m *Model) describe() error {
	r := C.sc_model_device(m.h)
	if err := check("Model", r); err != nil {
		return err
	}
	m.device = Device{Type: DeviceType(r.i64 >> 32), Index: int(int32(uint32(r.i64)))}
	r = C.sc_model_instances(m.h)
	if err := check("Model", r); err != nil {
		return err
	}
	m.instances = int(r.i64)
	m.slots = make(chan struct{}, m.instances)
	for i := 0; i < m.instances; i++ {
		m.slots <- struct{}{}
	}
	r = C.sc_model_num_io(m.h)
	if err := check("Model", r); err != nil {
		return err
	}
	nIn, nOut := int(r.i64>>32), int(uint32(r.i64))
	for k, n := range []int{nIn, nOut} {
		for i := 0; i < n; i++ {
			var spec C.slimcuda_tensor_spec
			if err := check("Model", C.sc_model_spec(m.h, C.int(k), C.size_t(i), &spec)); err != nil {
				return err
			}
			ts := specFromC(&spec)
			if k == 0 {
				m.inputs = append(m.inputs, ts)
			} else {
				m.outputs = append(m.outputs, ts)
			}
		}
	}
	return m.describeConstants()
}

// Device is the device the model was loaded for, resolved at load (never CurrentCUDA;
// Device{} for a nil Model).
func (m *Model) Device() Device {
	if m == nil {
		return Device{}
	}
	return m.device
}

// Instances is how many runs may be in flight at once (WithInstances, resolved at load;
// 0 for a nil Model).
func (m *Model) Instances() int {
	if m == nil {
		return 0
	}
	return m.instances
}

// Inputs is the model's declared inputs, a copy (nil for a nil Model).
func (m *Model) Inputs() []TensorSpec {
	if m == nil {
		return nil
	}
	return append([]TensorSpec(nil), m.inputs...)
}

// Outputs is the model's declared outputs, a copy (nil for a nil Model). An output the
// model file states nothing about is UnknownSpec until a run returns it, then ObservedSpec
// with that run's dtype and sizes.
func (m *Model) Outputs() []TensorSpec {
	if m == nil {
		return nil
	}
	m.specMu.Lock()
	defer m.specMu.Unlock()
	out := append([]TensorSpec(nil), m.outputs...)
	for i := range out {
		out[i].Sizes = append([]int64(nil), out[i].Sizes...)
	}
	return out
}

// Run runs the model on inputs and returns new output tensors (close them). Inputs are
// checked against the model's specs (dtype, shape within bounds, device, and for CUDA
// that the data is device memory): ErrInvalidArgument otherwise. A CUDA model runs on the
// call's stream (OnStream, WithCallerStream) and then Run returns once the work is
// enqueued — read outputs on the same stream; without one it runs on the model's own
// stream and Run waits for it. Run is RunContext(context.Background(), ...).
func (m *Model) Run(inputs []*Tensor, opts ...CallOption) ([]*Tensor, error) {
	return m.run("Model.Run", context.Background(), inputs, opts)
}

// RunContext is Run with a context for the wait for a free instance: when all of the
// model's instances are busy and ctx is done first (or ctx is done already), it returns
// ctx's error wrapped (errors.Is(err, context.DeadlineExceeded) or context.Canceled) and
// enqueues nothing. Once an instance is taken the run goes ahead: ctx does not interrupt
// work already handed to the model.
func (m *Model) RunContext(ctx context.Context, inputs []*Tensor, opts ...CallOption) ([]*Tensor, error) {
	return m.run("Model.RunContext", ctx, inputs, opts)
}

func (m *Model) run(op string, ctx context.Context, inputs []*Tensor, opts []CallOption) ([]*Tensor, error) {
	if m == nil {
		return nil, argError(op, "nil model")
	}
	if ctx == nil {
		return nil, argError(op, "nil context")
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, &Error{Op: op, Code: ErrInvalidState, Message: "model is closed"}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("slimcuda: %s: %w", op, err)
	}
	select {
	case <-m.slots:
	case <-ctx.Done():
		return nil, fmt.Errorf("slimcuda: %s: waiting for a free instance: %w", op, ctx.Err())
	}
	defer func() { m.slots <- struct{}{} }()
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return nil, err
	}
	defer release()
	in := make([]unsafe.Pointer, len(inputs))
	for i, t := range inputs {
		h, err := t.handle(op)
		if err != nil {
			return nil, err
		}
		in[i] = h
	}
	out := make([]unsafe.Pointer, len(m.outputs))
	var inPtr, outPtr *unsafe.Pointer
	if len(in) > 0 {
		inPtr = &in[0]
	}
	if len(out) > 0 {
		outPtr = &out[0]
	}
	r := C.sc_model_run(m.h, inPtr, C.size_t(len(in)), outPtr, C.size_t(len(out)), with, stream)
	runtime.KeepAlive(inputs)
	if err := check(op, r); err != nil {
		return nil, err
	}
	result := make([]*Tensor, len(out))
	for i, h := range out {
		if result[i], err = newTensor(op, h); err != nil {
			for _, rest := range out[i+1:] {
				_ = check(op, C.sc_tensor_delete(rest))
			}
			_ = CloseAll(result[:i]...) // the metadata error is the one to report
			return nil, err
		}
	}
	m.observeOutputs(result)
	return result, nil
}

// Close unloads the model, following the package's Close contract (see the package
// documentation): nil-safe, idempotent, its error reported once, and every later call
// that can fail reports ErrInvalidState. It waits for the runs in progress (Run and
// RunContext, including those waiting for an instance), so it never frees the model under
// one; runs that start after it report ErrInvalidState.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	runtime.SetFinalizer(m, nil)
	return check("Model.Close", C.sc_model_free(m.h))
}
