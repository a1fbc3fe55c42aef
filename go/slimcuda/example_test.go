// SPDX-License-Identifier: Apache-2.0

package slimcuda_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

// Errors wrap a code: test the kind with errors.Is, read the details from *slimcuda.Error.
func Example_errors() {
	_, err := slimcuda.Alloc(64, slimcuda.Aligned(96))
	fmt.Println(errors.Is(err, slimcuda.ErrInvalidArgument))
	var e *slimcuda.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code.String())
	}
	// Output:
	// true
	// InvalidArgument
}

// Settings are named after their environment variables (docs/configuration.md lists
// them). SetConfig overrides one for the library's next use of it, with the words the
// environment takes; ResetConfig goes back to the environment, or the default.
func ExampleSetConfig() {
	if err := slimcuda.SetConfig("SLIMCUDA_STAGING_THRESHOLD", "0"); err != nil { // no staged copies
		log.Fatal(err)
	}
	v, err := slimcuda.Config("SLIMCUDA_STAGING_THRESHOLD")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)
	err = slimcuda.SetConfig("SLIMCUDA_STAGING_THRESHOLD", "1MiB") // integers are decimal digits
	fmt.Println(errors.Is(err, slimcuda.ErrInvalidArgument))
	if err := slimcuda.ResetConfig("SLIMCUDA_STAGING_THRESHOLD"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 0
	// true
}

// The library's log (a bad setting in the environment, a model's warnings) goes to a
// slog.Logger of the program's choosing; nil restores stderr.
func ExampleSetLogger() {
	slimcuda.SetLogger(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	defer slimcuda.SetLogger(nil)
	// Let the handler see the library's debug and info messages too.
	if err := slimcuda.SetConfig("SLIMCUDA_LOG_LEVEL", "debug"); err != nil {
		log.Fatal(err)
	}
}

// Copies run on the caller's stream for the whole scope of WithCallerStream; they are
// blocking, so the host slices are safe to reuse as soon as each call returns. The same
// code runs without a GPU, on the CPU, where there is no stream to order.
func ExampleWithCallerStream() {
	device, stream := slimcuda.CPUDevice, slimcuda.DefaultStream()
	if n, err := slimcuda.DeviceCount(); err == nil && n > 0 {
		s, err := slimcuda.NewStream(slimcuda.NonBlocking())
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		device, stream = slimcuda.CUDADevice(0), s
	}
	x, err := slimcuda.NewTensor([]int64{4}, slimcuda.Float32, device)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	y, err := slimcuda.NewTensor([]int64{4}, slimcuda.Float16, device)
	if err != nil {
		log.Fatal(err)
	}
	defer y.Close()
	out := make([]float32, 4)
	err = slimcuda.WithCallerStream(stream, func() error {
		if err := slimcuda.CopyFromHost(x, []float32{0.5, 1.5, 2.5, 3.5}); err != nil {
			return err
		}
		if err := y.CopyFrom(x); err != nil { // enqueued on stream
			return err
		}
		return slimcuda.CopyToHost(y, out) // waits for the conversion, on stream
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: [0.5 1.5 2.5 3.5]
}

// OnStream selects a stream for one call; a stream from another CUDA library is borrowed
// with WrapStream.
func ExampleOnStream() {
	device := slimcuda.CPUDevice // a CPU tensor's copies ignore the stream
	if n, err := slimcuda.DeviceCount(); err == nil && n > 0 {
		device = slimcuda.CUDADevice(0)
	}
	x, err := slimcuda.NewTensor([]int64{2, 2}, slimcuda.Int32, device)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	var foreign *slimcuda.Stream = slimcuda.DefaultStream() // or slimcuda.WrapStream(handle)
	if err := slimcuda.CopyFromHost(x, []int32{1, 2, 3, 4}, slimcuda.OnStream(foreign)); err != nil {
		log.Fatal(err)
	}
	out := make([]int64, 4)
	if err := slimcuda.CopyToHost(x, out, slimcuda.OnStream(foreign)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: [1 2 3 4]
}

// DeviceCount is 0, not an error, without a GPU or driver: code meant for both picks its
// device from it.
func ExampleDeviceCount() {
	n, err := slimcuda.DeviceCount()
	if err != nil {
		log.Fatal(err)
	}
	device := slimcuda.CPUDevice
	if n > 0 {
		device = slimcuda.CUDADevice(0)
	}
	x, err := slimcuda.NewTensor([]int64{2, 3}, slimcuda.BFloat16, device)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	info, err := x.Info()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Sizes, info.DType, info.DType.Size(), "bytes each")
	// Output: [2 3] bfloat16 2 bytes each
}

// Tensors are strided views; CopyFrom converts dtypes and follows strides on any device.
func ExampleTensor() {
	cpu := slimcuda.CPUDevice
	x, err := slimcuda.NewTensor([]int64{2, 3}, slimcuda.Float32, cpu)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	if err := slimcuda.CopyFromHost(x, []float32{0, 1, 2, 3, 4, 5}); err != nil {
		log.Fatal(err)
	}
	xt, err := x.View([]int64{3, 2}, []int64{1, 3}, 0) // the transpose, sharing x's memory
	if err != nil {
		log.Fatal(err)
	}
	defer xt.Close()
	y, err := slimcuda.NewTensor([]int64{3, 2}, slimcuda.Int64, cpu) // or slimcuda.CUDADevice(0), slimcuda.CurrentCUDA
	if err != nil {
		log.Fatal(err)
	}
	defer y.Close()
	if err := y.CopyFrom(xt); err != nil {
		log.Fatal(err)
	}
	out := make([]int64, 6)
	if err := slimcuda.CopyToHost(y, out); err != nil {
		log.Fatal(err)
	}
	info, _ := y.Info()
	fmt.Println(out, info.Strides, info.DType)
	// Output: [0 3 1 4 2 5] [2 1] int64
}

// linearExport is a small PyTorch export for the CPU, y = relu(x W^T + b + z), that this
// repository keeps as a test file (testdata/pt2/real_cpu_linear.pt2): $SLIMCUDA_PT2_JSON's
// folder when set (the GPU bundle), else relative to this package.
func linearExport() string {
	if p := os.Getenv("SLIMCUDA_PT2_JSON"); p != "" {
		return filepath.Join(filepath.Dir(p), "pt2", "real_cpu_linear.pt2")
	}
	return filepath.Join("..", "..", "testdata", "pt2", "real_cpu_linear.pt2")
}

// Load a model — a .pt2 from torch._inductor.aoti_compile_and_package, or a slimcuda
// package — and run it; inputs are checked against model.Inputs(). A .pt2 runs on the
// device it was compiled for (this one on the CPU); a package with a CUDA library uses it
// when there is a GPU.
func ExampleLoad() {
	model, err := slimcuda.Load(linearExport())
	if err != nil {
		log.Fatal(err) // errors.Is(err, slimcuda.ErrInvalidProgram) for a malformed model
	}
	defer model.Close()
	var inputs []*slimcuda.Tensor
	for _, spec := range model.Inputs() {
		fmt.Println("input", spec.DType, spec.Sizes) // spec.Name: PyTorch's, arg2_1 here
		x, err := slimcuda.NewTensor(spec.Sizes, spec.DType, model.Device())
		if err != nil {
			log.Fatal(err)
		}
		defer x.Close()
		n := 1
		for _, size := range spec.Sizes {
			n *= int(size)
		}
		if err := slimcuda.CopyFromHost(x, make([]float32, n)); err != nil {
			log.Fatal(err)
		}
		inputs = append(inputs, x)
	}
	outs, err := model.Run(inputs)
	if err != nil {
		log.Fatal(err)
	}
	for _, out := range outs {
		info, _ := out.Info()
		fmt.Println("output", info.DType, info.Sizes)
		out.Close()
	}
	// Output:
	// input float32 [2 4]
	// input float32 [2 3]
	// output float32 [2 3]
}
