// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include <stdlib.h>
//
// #include "wrappers.h"
import "C"

import (
	"runtime"
	"unsafe"
)

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
// Package bytes are checked before anything is loaded (ErrInvalidProgram for malformed
// packages), but loading runs the library's code (see the package doc, "Untrusted model
// files").
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
