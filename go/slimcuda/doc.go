// SPDX-License-Identifier: Apache-2.0

// Package slimcuda runs PyTorch models compiled ahead of time by AOTInductor, and the CUDA
// work around them — device memory, host copies, tensors, streams — through libslimcuda.so,
// without libtorch, on the caller's own CUDA stream when the caller asks for one. Without a
// GPU, models with a CPU library run on the CPU.
//
// # Devices, memory, tensors and models
//
// A [Device] names where memory and work live: [CPUDevice], [CUDADevice](i), or
// [CurrentCUDA] (the calling thread's current GPU). A [Tensor] has sizes, strides, a
// [DType] and a device: [TensorFrom] makes one holding a copy of a Go slice, its dtype the
// slice's element type, and [ToSlice] copies one of that dtype back into a new slice, so a
// model's input and output are one call each:
//
//	x, err := slimcuda.TensorFrom([]int64{2, 4}, data, model.Device()) // data []float32
//	outs, err := model.Run([]*slimcuda.Tensor{x})
//	defer slimcuda.CloseAll(outs...)
//	y, err := slimcuda.ToSlice[float32](outs[0])
//
// The element types ([HostElement]) are one Go type per slimcuda dtype: uint8, int8, int16,
// int32, int64, float32, float64, bool, and for the 16-bit floats, which Go lacks,
// [Float16Bits] and [BFloat16Bits] (the raw bits, as uint16). [Tensor.Sizes] and
// [Tensor.DType] describe a tensor without a C call. [NewTensor] allocates one without
// filling it; [CopyFromHost] and [CopyToHost] fill and read it from slices of any element
// type, converting between dtypes (a float16 tensor from a []float32). [Alloc] returns a
// [DeviceBuffer] of raw device memory. [Load] reads a model: PyTorch's .pt2 as
// torch._inductor.aoti_compile_and_package writes it (read in place, nothing extracted;
// [WithModelName] picks one of several), or a slimcuda package (.slimcuda: compiled
// libraries and their I/O manifest); [LoadBytes] reads one from memory; [Model.Run] runs it
// on tensors and returns new output tensors, which [CloseAll] closes. Weights a .pt2 keeps outside its library are uploaded by Load, one copy per
// model and device shared by every load of it. [GetMemoryStats] and [GetPinnedMemoryStats]
// report the caching device and pinned pools. [Version] is the library's version.
//
// # Many goroutines, one model
//
// A [Model] is safe for concurrent use. [WithInstances](n) loads n instances of it (the
// default: 1 on the CPU, 4 on CUDA), so n runs are in flight at once, each on its caller's
// stream; a run takes a free instance, and [Model.RunContext] gives up, enqueuing nothing,
// when none is free before its context is done. Close waits for the runs in flight.
// [WithCUDAGraphs] has a CUDA model's runs captured into a CUDA graph once per input layout
// and instance and replayed after, each replay one launch; [Model.GraphStats] counts them.
//
// # Models that keep state
//
// A decode-step model keeps its KV cache in buffers its runs write ([Model.Stateful],
// [Model.Constants]). That state is one per Load — loads of one file share their read-only
// weights, never their state — and normal runs and CUDA-graph replays use the same one.
// Such a model runs one call at a time (Instances is 1; [WithInstances](n > 1) is
// [ErrInvalidArgument]): load it once per conversation. [Model.ResetState] puts the state
// back to its value at load; [Model.ReadConstant] and [Model.WriteConstant] copy a named
// constant to or from a tensor. examples/decode is a greedy decode loop.
//
// Weights swap while serving: [Model.StageWeights] or [Model.StageWeightsFile] uploads a
// new set while runs go on, [Model.SwapWeights] makes it active between runs (the state
// stays), [Model.FreeInactiveWeights] frees the old set.
//
// # Untrusted model files, up to a point
//
// [Load], [LoadBytes] and [CheckPackage] check a model file before anything is loaded: its
// structure and every metadata field, each library's integrity (a package's XXH3-128 hash,
// a .pt2's CRC: corruption, not authenticity) and ELF shape. What cannot be checked
// in-process is the library's code: loading a model runs its ELF constructors, and running
// it runs its code, with this process's privileges, as loading any plugin does. Load only
// models you would run as programs; [CheckPackage] runs no code.
//
// # Streams and threads
//
// The C library keeps one caller-stream selection per OS thread. Goroutines move between
// threads between cgo calls, so this package never leaves a selection behind a call:
//
//   - per call: pass [OnStream] to a method; the C call selects the stream and restores
//     the previous selection before it returns;
//   - per scope: [WithCallerStream] locks the goroutine to its OS thread, selects the
//     stream, runs the function and restores everything, so every call made by that
//     function (on that goroutine) uses the stream.
//
// Copies are blocking: when a host copy ([CopyFromHost], [CopyToHost], the DeviceBuffer
// methods) returns, the copy is complete, so passing Go memory is safe (C keeps no pointer
// to it).
//
// # Close
//
// [Stream], [DeviceBuffer], [Tensor] and [Model] hold C resources and have one Close
// contract:
//
//   - Close on a nil pointer returns nil;
//   - Close is idempotent: the first call releases the resource and returns its error (if
//     any); the value is closed even when that fails, and later calls return nil;
//   - after Close, every method that can fail returns an *[Error] with Code
//     [ErrInvalidState], without calling CUDA; accessors that cannot fail (Len, Device,
//     Inputs, Outputs, Sizes, DType) keep describing the value, and [DeviceBuffer.Pointer]
//     returns nil.
//
// A finalizer calls Close as a leak backstop only; close values explicitly. Each type
// says whether Close may run concurrently with its other methods.
//
// # Errors
//
// Every failure is an *[Error] that wraps an [ErrorCode], so callers test the kind with
// errors.Is(err, slimcuda.ErrInvalidArgument), and, for files, the operating system's cause
// (errors.Is(err, fs.ErrNotExist) for a missing package). It reads once: "slimcuda: Load:
// NotFound: slimcuda_model_load_file_with: cannot open m.slimcuda: No such file or
// directory". The one other error is RunContext's when its context ends first: it wraps
// ctx.Err() (errors.Is(err, context.DeadlineExceeded)). Bad input returns an error; nothing
// in this package panics on it.
//
// # Linking
//
// Under Bazel the go_library's cdeps bring libslimcuda.so. With plain `go build`, the file
// pkgconfig.go asks pkg-config for the installed library (tools/install.sh; its .pc file
// puts the install's lib/ on the binary's RUNPATH). The package needs cgo: built without it
// (CGO_ENABLED=0, or cross-compiling, where the go command turns it off) it fails with the
// one error "undefined: slimcuda_requires_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler".
// The .npy reader, github.com/slimcuda/slimcuda/go/npy, is pure Go.
package slimcuda
