// SPDX-License-Identifier: Apache-2.0

package slimcuda_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

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
// package — and run it: TensorFrom makes each input from a Go slice, ToSlice reads an
// output into one, CloseAll frees the outputs. Inputs are checked against model.Inputs().
// A .pt2 runs on the device it was compiled for (this one on the CPU); a package with a
// CUDA library uses it when there is a GPU.
func ExampleLoad() {
	model, err := slimcuda.Load(linearExport())
	if err != nil {
		log.Fatal(err) // errors.Is(err, slimcuda.ErrInvalidProgram) for a malformed model
	}
	defer model.Close()
	for _, spec := range model.Inputs() {
		fmt.Println("input", spec.Name, spec.DType, spec.Sizes) // PyTorch's names
	}
	// The inputs of testdata/pt2/real_cpu_linear.ref.json, for which PyTorch computed
	// y = [0 0.171 0 0 2.867 0].
	x, err := slimcuda.TensorFrom([]int64{2, 4}, []float32{0.6035430431365967, 0.8109818696975708,
		-0.04508150741457939, 0.8796946406364441, 1.0482062101364136, -0.04450046643614769,
		-0.7228844165802002, 2.866340160369873}, model.Device())
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	z, err := slimcuda.TensorFrom([]int64{2, 3}, []float32{-0.5655086040496826, 0.16043701767921448,
		-0.025351187214255333, 1.0739002227783203, 2.262845754623413, -0.917529284954071}, model.Device())
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	outs, err := model.Run([]*slimcuda.Tensor{x, z})
	if err != nil {
		log.Fatal(err)
	}
	defer slimcuda.CloseAll(outs...)
	y, err := slimcuda.ToSlice[float32](outs[0]) // ErrInvalidArgument unless outs[0] is float32
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("output", outs[0].DType(), outs[0].Sizes())
	fmt.Printf("%.3f\n", y)
	// Output:
	// input arg2_1 float32 [2 4]
	// input arg3_1 float32 [2 3]
	// output float32 [2 3]
	// [0.000 0.171 0.000 0.000 2.867 0.000]
}

// A Model is safe for concurrent use: goroutines share one, each run taking a free
// instance (WithInstances; on CUDA give each goroutine its own stream with OnStream).
// Here goroutine g adds g to the second input, z: goroutine 0 reproduces PyTorch's y, and
// each g adds g to every output that relu(x W^T + b + z + g) lets through.
func ExampleModel_Run_goroutines() {
	model, err := slimcuda.Load(linearExport(), slimcuda.WithInstances(2))
	if err != nil {
		log.Fatal(err)
	}
	defer model.Close()
	x := []float32{0.6035430431365967, 0.8109818696975708, -0.04508150741457939, 0.8796946406364441,
		1.0482062101364136, -0.04450046643614769, -0.7228844165802002, 2.866340160369873}
	z := []float32{-0.5655086040496826, 0.16043701767921448, -0.025351187214255333, 1.0739002227783203,
		2.262845754623413, -0.917529284954071}
	results := make([][]float32, 4)
	var wg sync.WaitGroup
	for g := range results {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			zg := make([]float32, len(z))
			for i, v := range z {
				zg[i] = v + float32(g)
			}
			y, err := runLinear(model, x, zg)
			if err != nil {
				log.Fatal(err)
			}
			results[g] = y
		}(g)
	}
	wg.Wait()
	for g, y := range results {
		fmt.Printf("%d: %.3f\n", g, y)
	}
	// Output:
	// 0: [0.000 0.171 0.000 0.000 2.867 0.000]
	// 1: [0.000 1.171 0.769 0.823 3.867 0.000]
	// 2: [0.867 2.171 1.769 1.823 4.867 0.651]
	// 3: [1.867 3.171 2.769 2.823 5.867 1.651]
}

// runLinear runs the linear export on x [2, 4] and z [2, 3] and returns y [2, 3].
func runLinear(model *slimcuda.Model, x, z []float32) ([]float32, error) {
	xt, err := slimcuda.TensorFrom([]int64{2, 4}, x, model.Device())
	if err != nil {
		return nil, err
	}
	defer xt.Close()
	zt, err := slimcuda.TensorFrom([]int64{2, 3}, z, model.Device())
	if err != nil {
		return nil, err
	}
	defer zt.Close()
	outs, err := model.Run([]*slimcuda.Tensor{xt, zt})
	if err != nil {
		return nil, err
	}
	defer slimcuda.CloseAll(outs...)
	return slimcuda.ToSlice[float32](outs[0])
}

// With CUDA graphs on, a CUDA model's first run of an input layout on a non-blocking
// stream is captured into a graph and replayed, and later runs of that layout replay it,
// each in one launch. Reading the output on the run's stream orders the read after the
// replay. (This example needs a GPU and a CUDA export, so `go test` only compiles it;
// TestExampleCUDAGraphs runs the same steps on the demo model under SLIMCUDA_REQUIRE_GPU=1.)
func ExampleWithCUDAGraphs() {
	// One instance: each instance captures its own graph of a layout.
	model, err := slimcuda.Load("model_cuda.pt2", slimcuda.WithInstances(1),
		slimcuda.WithCUDAGraphs(slimcuda.GraphsOn))
	if err != nil {
		log.Fatal(err)
	}
	defer model.Close()
	stream, err := slimcuda.NewStream(slimcuda.NonBlocking()) // a blocking stream cannot be captured
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	on := slimcuda.OnStream(stream)
	x, err := slimcuda.TensorFrom([]int64{2, 16}, make([]float32, 32), model.Device(), on)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	for i := 0; i < 3; i++ {
		outs, err := model.Run([]*slimcuda.Tensor{x}, on) // returns once enqueued on stream
		if err != nil {
			log.Fatal(err)
		}
		y, err := slimcuda.ToSlice[float32](outs[0], on)
		slimcuda.CloseAll(outs...)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(y[:4])
	}
	stats, err := model.GraphStats()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("captures", stats.Captures, "replays", stats.Replays) // captures 1 replays 3: the first run too
}

// TensorFrom's dtype is its slice's element type; ToSlice reads a tensor of that dtype
// back (CopyFromHost and CopyToHost convert between dtypes instead).
func ExampleTensorFrom() {
	x, err := slimcuda.TensorFrom([]int64{2, 2}, []int64{1, 2, 3, 4}, slimcuda.CPUDevice)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	fmt.Println(x.DType(), x.Sizes())
	xs, err := slimcuda.ToSlice[int64](x)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(xs)
	_, err = slimcuda.ToSlice[float32](x)
	fmt.Println(errors.Is(err, slimcuda.ErrInvalidArgument))
	// Output:
	// int64 [2 2]
	// [1 2 3 4]
	// true
}
