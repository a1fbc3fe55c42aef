// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

import (
	"fmt"
	"runtime"
	"sort"
	"unsafe"
)

// ConstantKind says what a model constant is, as the model library reports it.
type ConstantKind int32

// The kinds of constants (PyTorch's AOTInductor ConstantType).
const (
	ConstantUnknown        ConstantKind = 0 // the library does not say
	ConstantParameter      ConstantKind = 1
	ConstantBuffer         ConstantKind = 2
	ConstantTensorConstant ConstantKind = 3
	ConstantFolded         ConstantKind = 4 // made by the container's constant folding
)

func (k ConstantKind) String() string {
	switch k {
	case ConstantUnknown:
		return "unknown"
	case ConstantParameter:
		return "parameter"
	case ConstantBuffer:
		return "buffer"
	case ConstantTensorConstant:
		return "tensor-constant"
	case ConstantFolded:
		return "folded"
	}
	return fmt.Sprintf("ConstantKind(%d)", int32(k))
}

// ConstantInfo describes one of a model's constants (its weights and buffers).
type ConstantInfo struct {
	Name    string // the container's name, e.g. "blocks_0_k_cache"
	FQN     string // the module's name, e.g. "blocks.0.k_cache" ("" when unknown)
	Kind    ConstantKind
	DType   DType
	State   bool    // runs may write it: each load has its own, ResetState restores it
	Visible bool    // ReadConstant can read it (Sizes known)
	Sizes   []int64 // nil when not Visible
	Bytes   uint64  // its storage's size
}

// describeConstants caches the model's constants (they never change).
func (m *Model) describeConstants() error {
	r := C.sc_model_num_constants(m.h)
	if err := check("Model", r); err != nil {
		return err
	}
	for i := 0; i < int(r.i64); i++ {
		var c C.slimcuda_constant_info
		if err := check("Model", C.sc_model_constant(m.h, C.size_t(i), &c)); err != nil {
			return err
		}
		info := ConstantInfo{Name: C.GoString(c.name), FQN: C.GoString(c.fqn), Kind: ConstantKind(c.kind),
			DType: DType(c.dtype), State: c.is_state != 0, Visible: c.visible != 0, Bytes: uint64(c.nbytes)}
		if info.Visible {
			info.Sizes = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(c.sizes)), int(c.ndim))...)
		}
		m.stateful = m.stateful || info.State
		m.constants = append(m.constants, info)
	}
	return nil
}

// Constants is the model's constants, a copy (nil for a library that shows none, and for a
// nil Model).
func (m *Model) Constants() []ConstantInfo {
	if m == nil {
		return nil
	}
	out := make([]ConstantInfo, len(m.constants))
	for i, c := range m.constants {
		c.Sizes = append([]int64(nil), c.Sizes...)
		out[i] = c
	}
	return out
}

// Stateful reports whether the model's runs write some of its constants: a KV cache kept
// in registered buffers, a running counter. Such a model has a state of its own per Load
// (loads of one file share their read-only weights, never their state), CUDA-graph
// replays and normal runs use that one state, and it runs one call at a time: Instances is
// 1, and loading it WithInstances(n > 1) is ErrInvalidArgument. For n independent callers
// (conversations), load it n times.
func (m *Model) Stateful() bool { return m != nil && m.stateful }

// ResetState puts every state constant back to its value at load (nothing to do for a
// model without state; ErrNotSupported where the library keeps its state out of
// slimcuda's reach). Like Run, it is ordered after the model's previous run and before its
// next, and with a stream (OnStream, WithCallerStream) it returns once enqueued.
func (m *Model) ResetState(opts ...CallOption) error {
	return m.stateOp("Model.ResetState", 0, "", nil, opts)
}

// ReadConstant copies the constant name (the container's name or the module's FQN) into
// dst, whose sizes must equal the constant's (dtypes are converted): ErrNotFound for an
// unknown name. Ordered with the runs as ResetState.
func (m *Model) ReadConstant(name string, dst *Tensor, opts ...CallOption) error {
	return m.stateOp("Model.ReadConstant", 1, name, dst, opts)
}

// WriteConstant copies src into the state constant name. A read-only weight is
// ErrInvalidArgument: the loads of one model share it. Ordered with the runs as ResetState.
func (m *Model) WriteConstant(name string, src *Tensor, opts ...CallOption) error {
	return m.stateOp("Model.WriteConstant", 2, name, src, opts)
}

func (m *Model) stateOp(op string, code int, name string, t *Tensor, opts []CallOption) error {
	if m == nil {
		return argError(op, "nil model")
	}
	var h unsafe.Pointer
	if code != 0 {
		var err error
		if h, err = t.handle(op); err != nil {
			return err
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return &Error{Op: op, Code: ErrInvalidState, Message: "model is closed"}
	}
	<-m.slots // after the runs in flight, as C orders it: C never waits
	defer func() { m.slots <- struct{}{} }()
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	var cname *C.char
	if code != 0 {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	r := C.sc_model_state_op(m.h, C.int(code), cname, h, with, stream)
	runtime.KeepAlive(t)
	return check(op, r)
}

// StageWeights uploads a new value of every read-only weight of the model (name: the
// container's name or the FQN; each tensor of the weight's dtype and sizes, on the host or
// the device) into memory of the model's own, on the call's stream (OnStream) or before it
// returns, while runs go on with the active weights. SwapWeights then makes them active
// between runs, and FreeInactiveWeights frees the set swapped out. A missing, repeated,
// unknown or state name, another dtype or sizes: ErrInvalidArgument, the active weights
// untouched; a set staged already: ErrInvalidState. The tensors may be closed once it
// returns.
func (m *Model) StageWeights(weights map[string]*Tensor, opts ...CallOption) error {
	const op = "Model.StageWeights"
	names := make([]string, 0, len(weights))
	for n := range weights {
		names = append(names, n)
	}
	sort.Strings(names) // one order, so that errors name the same weight every time
	handles := make([]unsafe.Pointer, len(names))
	for i, n := range names {
		h, err := weights[n].handle(op)
		if err != nil {
			return err
		}
		handles[i] = h
	}
	cnames := make([]*C.char, len(names))
	for i, n := range names {
		cnames[i] = C.CString(n)
		defer C.free(unsafe.Pointer(cnames[i]))
	}
	// C reads the two arrays during the call only: C memory for them (cgo forbids Go
	// pointers to Go pointers).
	cn := C.malloc(C.size_t(len(names)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	ch := C.malloc(C.size_t(len(names)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(cn)
	defer C.free(ch)
	nameArr := unsafe.Slice((**C.char)(cn), len(names)+1)
	handleArr := unsafe.Slice((*unsafe.Pointer)(ch), len(names)+1)
	for i := range names {
		nameArr[i] = cnames[i]
		handleArr[i] = handles[i]
	}
	err := m.weightsOp(op, 0, (**C.char)(cn), (*unsafe.Pointer)(ch), len(names), "", opts)
	runtime.KeepAlive(weights)
	return err
}

// StageWeightsFile stages the weights a .pt2 of the same model keeps in its archive
// (binary_blob or pickle_weights; ErrNotSupported when they are inside its library), as
// StageWeights does; the model's state is not taken from the file.
func (m *Model) StageWeightsFile(path string, opts ...CallOption) error {
	return m.weightsOp("Model.StageWeightsFile", 1, nil, nil, 0, path, opts)
}

// SwapWeights makes the staged weights active, between runs: it waits for the runs inside
// the model, and CUDA graphs are captured again by the next runs. The state stays.
// ErrInvalidState when nothing is staged.
func (m *Model) SwapWeights() error { return m.weightsOp("Model.SwapWeights", 2, nil, nil, 0, "", nil) }

// FreeInactiveWeights frees the weights swapped out (once the GPU is done with them), or a
// staged set not swapped in.
func (m *Model) FreeInactiveWeights() error {
	return m.weightsOp("Model.FreeInactiveWeights", 3, nil, nil, 0, "", nil)
}

func (m *Model) weightsOp(op string, code int, names **C.char, handles *unsafe.Pointer, n int, path string,
	opts []CallOption) error {
	if m == nil {
		return argError(op, "nil model")
	}
	// Shared like a run: the C library orders the swap with the runs (it takes every
	// instance); Close, exclusive, waits for it.
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return &Error{Op: op, Code: ErrInvalidState, Message: "model is closed"}
	}
	with, stream, release, err := streamArgs(op, collect(opts))
	if err != nil {
		return err
	}
	defer release()
	var cpath *C.char
	if code == 1 {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	return check(op, C.sc_model_weights_op(m.h, C.int(code), names, handles, C.size_t(n), cpath, with, stream))
}
