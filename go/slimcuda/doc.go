// SPDX-License-Identifier: Apache-2.0

// Package slimcuda runs PyTorch models compiled ahead of time by AOTInductor, and the CUDA
// work around them — device memory, host copies, tensors, streams — through libslimcuda.so,
// without libtorch, on the caller's own CUDA stream when the caller asks for one. Without a
// GPU, models with a CPU library run on the CPU.
//
// # Devices, memory, tensors and models
//
// A [Device] names where memory and work live: [CPUDevice], [CUDADevice](i), or
// [CurrentCUDA] (the calling thread's current GPU). [Alloc] returns a [DeviceBuffer] of raw
// device memory; [NewTensor] a [Tensor] (sizes, strides, a [DType], a device), which
// [CopyFromHost] and [CopyToHost] fill and read from Go slices of the element types
// [HostElement] lists, converting between dtypes. [Load] reads a model: PyTorch's .pt2 as
// torch._inductor.aoti_compile_and_package writes it (read in place, nothing extracted;
// [WithModelName] picks one of several), or a slimcuda package (.slimcuda: compiled
// libraries and their I/O manifest); [Model.Run] runs it on tensors. [Version] is the
// library's version.
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
//     Inputs, Outputs) keep describing the value, and [DeviceBuffer.Pointer] returns nil.
//
// A finalizer calls Close as a leak backstop only; close values explicitly. Each type
// says whether Close may run concurrently with its other methods.
//
// # Errors
//
// Every failure is an *[Error] that wraps an [ErrorCode], so callers test the kind with
// errors.Is(err, slimcuda.ErrInvalidArgument), and, for files, the operating system's cause
// (errors.Is(err, fs.ErrNotExist) for a missing package). It reads once: "slimcuda: Load:
// NotFound: slimcuda_model_load_file: cannot open m.slimcuda: No such file or directory".
// Bad input returns an error; nothing in this package panics on it.
//
// # Linking
//
// Under Bazel the go_library's cdeps bring libslimcuda.so. With plain `go build`, the file
// pkgconfig.go asks pkg-config for the installed library (tools/install.sh; its .pc file
// puts the install's lib/ on the binary's RUNPATH).
package slimcuda
