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
	outputs   []TensorSpec
	instances int
}

// LoadOption configures Load.
type LoadOption func(*loadConfig)

type loadConfig struct {
	deviceType, deviceIndex, instances int
	modelName                          *string
	graphs                             GraphMode
}

// WithModelName loads the model called name from a .pt2 holding several (its
// data/aotinductor/<name>/ folders). Without it a .pt2's only model loads, or else the one
// called "model"; several models and none of that name, or no model called name, is
// ErrInvalidArgument with the names in the message. Ignored for a slimcuda package.
func WithModelName(name string) LoadOption {
	return func(c *loadConfig) { c.modelName = &name }
}

// options is cfg as the C library takes it, and a function freeing what it holds (the
// model name, in C memory: a Go pointer may not be stored in memory C reads).
func (cfg loadConfig) options() (C.slimcuda_load_options, func()) {
	o := C.slimcuda_load_options{
		struct_size:  C.int32_t(C.sizeof_slimcuda_load_options),
		device_type:  C.int32_t(cfg.deviceType),
		device_index: C.int32_t(cfg.deviceIndex),
		instances:    C.int32_t(cfg.instances),
		cuda_graphs:  C.int32_t(cfg.graphs),
	}
	if cfg.modelName == nil {
		return o, func() {}
	}
	o.model_name = C.CString(*cfg.modelName)
	return o, func() { C.free(unsafe.Pointer(o.model_name)) }
}

// GraphMode says whether a CUDA model's runs go through CUDA graphs (WithCUDAGraphs).
type GraphMode int

const (
	// GraphsOff runs every call the normal way (the default).
	GraphsOff GraphMode = 0
	// GraphsOn captures a run into a CUDA graph the first time an instance sees its input
	// layout (dtypes, sizes, strides) on a non-blocking stream, and replays it after; a
	// layout that cannot be captured runs the normal way (GraphStats.Fallbacks counts it).
	GraphsOn GraphMode = 1
	// GraphsStrict is GraphsOn, except that a run that cannot be captured fails with
	// ErrNotSupported and the reason (the model stays usable).
	GraphsStrict GraphMode = 2
)

// WithCUDAGraphs sets the CUDA graph mode of a CUDA model (ignored for CPU models). A
// replay is one launch on the run's stream, where a normal run makes one per kernel: it
// copies the inputs into the graph's own buffers, runs the captured kernels and copies the
// outputs into new tensors. Each graph keeps one run's activations while the model lives, and the
// capture keeps a second copy of the weights a library embeds (docs/graphs.md).
func WithCUDAGraphs(mode GraphMode) LoadOption {
	return func(c *loadConfig) { c.graphs = mode }
}

// GraphStats counts a model's CUDA graph work (all zero with graphs off).
type GraphStats struct {
	Captures  uint64 // graphs made
	Replays   uint64 // runs a graph served
	Fallbacks uint64 // runs that went the normal way because their layout could not be captured
	Graphs    uint64 // graphs alive
}

// GraphStats returns the model's CUDA graph counters (ErrInvalidState after Close).
func (m *Model) GraphStats() (GraphStats, error) {
	if m == nil {
		return GraphStats{}, argError("GraphStats", "nil model")
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return GraphStats{}, &Error{Op: "GraphStats", Code: ErrInvalidState, Message: "model is closed"}
	}
	var s C.slimcuda_graph_stats
	if err := check("GraphStats", C.sc_model_graph_stats(m.h, &s)); err != nil {
		return GraphStats{}, err
	}
	return GraphStats{Captures: uint64(s.captures), Replays: uint64(s.replays), Fallbacks: uint64(s.fallbacks),
		Graphs: uint64(s.graphs)}, nil
}

// WithInstances loads n model instances, so n runs can be in flight at once (0: the
// default, 1 on the CPU and 4 on CUDA — with 8 callers 4 gave 1.6-1.8 x the runs/s of 2 on
// the H200, docs/benchmarks.md; each instance costs one set of the model's activations,
// the weights are shared). n must be 0..64 (ErrInvalidArgument otherwise).
func WithInstances(n int) LoadOption {
	return func(c *loadConfig) { c.instances = n }
}

// LoadOnDevice loads the package's library for device: CPUDevice for its CPU library, a
// CUDA device (CUDADevice(i), CurrentCUDA) for its CUDA library on that GPU. The model
// records the device it resolved to (Model.Device).
func LoadOnDevice(device Device) LoadOption {
	return func(c *loadConfig) { c.deviceType, c.deviceIndex = int(device.Type), device.Index }
}

// Load loads a model file: PyTorch's .pt2 (what torch._inductor.aoti_compile_and_package
// writes; recognised by its zip signature, not its name), or a slimcuda package.
//
// A .pt2 is mapped read-only and read in place, nothing extracted to disk: its only model
// (or the one called "model", or WithModelName's) loads on the device its metadata names
// (AOTI_DEVICE_KEY; LoadOnDevice with another device type is ErrNotSupported). Weights it
// keeps outside its library (package_constants_on_disk_format "binary_blob" or
// "pickle_weights") are uploaded from the archive before Load returns, on the stream of an
// enclosing WithCallerStream, else on the model's own, and are then ready for a run on any
// stream; loads of one .pt2 on one device share one copy; an export with no weights at all
// (package_constants_in_so=False alone) is ErrInvalidProgram. Its input
// specs come from the archive (docs/pt2.md); a malformed archive (truncated, a zip bomb, a
// path-traversal or duplicate entry name, a library that is not an x86-64 ELF or whose CRC
// does not match) is ErrInvalidProgram with the reason; a model whose GPU kernels are files
// beside its library (exported without aot_inductor.embed_kernel_binary) is ErrNotSupported.
//
// A package loads by default its CUDA library when a GPU is there, else its CPU library.
// Package bytes are checked as untrusted input (ErrInvalidProgram for malformed packages).
// Opening either kind is done by the C library
// (slimcuda_model_load_file_with), so Go and C report the same codes and messages:
//   - ErrNotFound: the file does not exist ("No such file or directory"); the error also
//     satisfies errors.Is(err, fs.ErrNotExist);
//   - ErrAccessFailed: permission denied (also errors.Is(err, fs.ErrPermission)), or another
//     open or read failure (the system's text);
//   - ErrInvalidArgument: not a regular file ("... is not a regular file (directory)",
//     "(fifo)", "(device)"), or a package larger than the package cap (2 GiB - 2 bytes: the
//     message names the size and the cap; a .pt2 has no cap);
//   - ErrOutOfResources: no file descriptor left (EMFILE, ENFILE).
func Load(path string, opts ...LoadOption) (*Model, error) {
	cfg, err := loadConfigOf("Load", opts)
	if err != nil {
		return nil, err
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	o, free := cfg.options()
	defer free()
	r := C.sc_model_load_file_with(cp, &o)
	if err := check("Load", r); err != nil {
		return nil, withFileCause(err)
	}
	return newModel(r.ptr)
}

// loadConfigOf applies opts to the defaults (any device, current index).
func loadConfigOf(op string, opts []LoadOption) (loadConfig, error) {
	cfg := loadConfig{deviceType: -1, deviceIndex: -1}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.deviceIndex != int(int32(cfg.deviceIndex)) {
		return cfg, argError(op, "device index %d out of range", cfg.deviceIndex)
	}
	if cfg.instances < 0 || cfg.instances > 64 {
		return cfg, argError(op, "%d instances (want 0 for the default, or 1 to 64)", cfg.instances)
	}
	if cfg.graphs < GraphsOff || cfg.graphs > GraphsStrict {
		return cfg, argError(op, "CUDA graph mode %d (want GraphsOff, GraphsOn or GraphsStrict)", cfg.graphs)
	}
	return cfg, nil
}

// LoadBytes loads a .pt2 or a model package held in memory (see Load). Nil options are
// skipped.
func LoadBytes(data []byte, opts ...LoadOption) (*Model, error) {
	cfg, err := loadConfigOf("LoadBytes", opts)
	if err != nil {
		return nil, err
	}
	o, free := cfg.options()
	defer free()
	r := C.sc_model_load_with(slicePtr(data), C.size_t(len(data)), &o)
	runtime.KeepAlive(data)
	if err := check("LoadBytes", r); err != nil {
		return nil, err
	}
	return newModel(r.ptr)
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
			ts := TensorSpec{
				Name:     C.GoString(spec.name),
				DType:    DType(spec.dtype),
				Sizes:    make([]int64, int(spec.ndim)),
				Dynamism: Dynamism(spec.dynamism),
				Device:   Device{Type: DeviceType(spec.device_type), Index: int(spec.device_index)},
			}
			sizes := unsafe.Slice((*int64)(unsafe.Pointer(spec.sizes)), int(spec.ndim))
			copy(ts.Sizes, sizes)
			if k == 0 {
				m.inputs = append(m.inputs, ts)
			} else {
				m.outputs = append(m.outputs, ts)
			}
		}
	}
	return nil
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

// Outputs is the model's declared outputs, a copy (nil for a nil Model).
func (m *Model) Outputs() []TensorSpec {
	if m == nil {
		return nil
	}
	return append([]TensorSpec(nil), m.outputs...)
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
		result[i] = newTensor(h)
	}
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

// CheckPackage checks package bytes as Load would, loading nothing.
func CheckPackage(data []byte) error {
	r := C.sc_package_check(slicePtr(data), C.size_t(len(data)))
	runtime.KeepAlive(data)
	return check("CheckPackage", r)
}

// Pack writes a model package from a JSON manifest (format: csrc/package/manifest.h).
// The manifest (at most 16 MiB), its libraries and its weights (each at most the package
// cap) are read as Load reads a package, with the same codes: ErrNotFound, ErrAccessFailed,
// ErrInvalidArgument (not a regular file, or over its cap) and ErrOutOfResources.
// Malformed JSON, or a number that is not an integer in its field's range, is
// ErrInvalidArgument naming the field and tensor; metadata against the package rules is
// ErrInvalidProgram.
func Pack(manifestPath, outPath string) error {
	cm, co := C.CString(manifestPath), C.CString(outPath)
	defer C.free(unsafe.Pointer(cm))
	defer C.free(unsafe.Pointer(co))
	return withFileCause(check("Pack", C.sc_package_pack(cm, co)))
}
