// SPDX-License-Identifier: Apache-2.0

package slimcuda_test

import (
	"errors"
	"fmt"
	"log"

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

// Copies run on the caller's stream for the whole scope of WithCallerStream; they are
// blocking, so the host slices are safe to reuse as soon as each call returns.
func ExampleWithCallerStream() {
	stream, err := slimcuda.NewStream(slimcuda.NonBlocking())
	if err != nil {
		log.Fatal(err) // ErrNotSupported without a GPU
	}
	defer stream.Close()
	buf, err := slimcuda.Alloc(4 * 1024)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()

	in := make([]float32, 1024)
	out := make([]float32, 1024)
	err = slimcuda.WithCallerStream(stream, func() error {
		if err := buf.CopyFromHost(slimcuda.AsBytes(in)); err != nil {
			return err
		}
		if err := buf.FillFloat32(2.5, len(in)); err != nil { // enqueued on stream
			return err
		}
		return buf.CopyToHost(slimcuda.AsBytes(out)) // waits for the fill, on stream
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[1023])
}

// OnStream selects a stream for one call; a stream from another CUDA library is borrowed
// with WrapStream.
func ExampleOnStream() {
	buf, err := slimcuda.Alloc(16)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	var foreign *slimcuda.Stream = slimcuda.DefaultStream() // or slimcuda.WrapStream(handle)
	if err := buf.CopyFromHost([]byte("sixteen bytes!!!"), slimcuda.OnStream(foreign)); err != nil {
		log.Fatal(err)
	}
}

func ExampleDeviceCount() {
	n, err := slimcuda.DeviceCount()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("CUDA devices:", n) // 0 without a GPU or driver
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

// Load a model package and run it; inputs are checked against model.Inputs().
func ExampleLoad() {
	model, err := slimcuda.Load("model.slimcuda") // CUDA library when there is a GPU, else CPU
	if err != nil {
		log.Fatal(err) // errors.Is(err, slimcuda.ErrInvalidProgram) for a malformed package
	}
	defer model.Close()
	spec := model.Inputs()[0]
	x, err := slimcuda.NewTensor([]int64{4, spec.Sizes[1]}, spec.DType, model.Device())
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	if err := slimcuda.CopyFromHost(x, make([]float32, 4*spec.Sizes[1])); err != nil {
		log.Fatal(err)
	}
	outs, err := model.Run([]*slimcuda.Tensor{x})
	if err != nil {
		log.Fatal(err)
	}
	for _, out := range outs {
		info, _ := out.Info()
		fmt.Println(info.Sizes, info.DType)
		out.Close()
	}
}
