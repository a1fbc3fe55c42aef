package slimcuda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two GPUs, from testdata/multi_gpu.json (csrc/c_api/multi_gpu_test.cc runs the same cases).

func requireGPUs(t *testing.T, n int) {
	t.Helper()
	count, err := DeviceCount()
	require.NoError(t, err)
	if count >= n {
		return
	}
	if want, _ := strconv.Atoi(os.Getenv("SLIMCUDA_REQUIRE_GPUS")); want >= n {
		t.Fatalf("SLIMCUDA_REQUIRE_GPUS=%d but %d GPU(s)", want, count)
	}
	t.Skipf("needs %d GPUs, found %d", n, count)
}

func TestMultiGPUCopy(t *testing.T) {
	for _, c := range fx.Cases(t, "multi_gpu.json", "copy") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var bufDev, streamDev, index, n int
			c.Get(t, "buffer_device", &bufDev)
			c.Get(t, "stream_device", &streamDev)
			c.Get(t, "device_index", &index)
			c.Get(t, "nbytes", &n)
			buf, err := Alloc(n, OnDevice(bufDev))
			require.NoError(t, err)
			defer buf.Close()
			s, err := NewStream(NonBlocking(), StreamOnDevice(streamDev))
			require.NoError(t, err)
			defer s.Close()
			in, out := pattern(n, 1), make([]byte, n)
			b := *buf // the case's device index, on this buffer
			b.device = index
			err = b.CopyFromHost(in, OnStream(s))
			expectCode(t, c, err)
			if err == nil {
				require.NoError(t, b.CopyToHost(out, OnStream(s)))
				require.True(t, bytes.Equal(in, out))
			}
		})
	}
}

func TestMultiGPUTensorCopy(t *testing.T) {
	for _, c := range fx.Cases(t, "multi_gpu.json", "tensor_copy") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var srcDev, dstDev int
			var srcName, dstName string
			var sizes []int64
			var transpose bool
			c.Get(t, "src_device", &srcDev)
			c.Get(t, "dst_device", &dstDev)
			c.Get(t, "src_dtype", &srcName)
			c.Get(t, "dst_dtype", &dstName)
			c.Get(t, "sizes", &sizes)
			c.Get(t, "transpose_dst", &transpose)
			srcType, _ := DTypeByName(srcName)
			dstType, _ := DTypeByName(dstName)
			n := sizes[0] * sizes[1]
			values := make([]float64, n)
			for i := range values {
				values[i] = float64(i)
			}
			src, err := NewTensor(sizes, srcType, Device{CUDA, srcDev})
			require.NoError(t, err)
			defer src.Close()
			require.NoError(t, src.CopyFromHost(values))
			var dst *Tensor
			if transpose {
				base, err := NewTensor([]int64{sizes[1], sizes[0]}, dstType, Device{CUDA, dstDev})
				require.NoError(t, err)
				defer base.Close()
				dst, err = base.View(sizes, []int64{1, sizes[0]}, 0)
				require.NoError(t, err)
			} else {
				dst, err = NewTensor(sizes, dstType, Device{CUDA, dstDev})
				require.NoError(t, err)
			}
			defer dst.Close()
			err = dst.CopyFrom(src)
			expectCode(t, c, err)
			if err != nil {
				return
			}
			got := make([]float64, n)
			require.NoError(t, dst.CopyToHost(got))
			require.Equal(t, values, got)
			info, err := dst.Info()
			require.NoError(t, err)
			require.Equal(t, dstDev, info.Device.Index)
		})
	}
}

func demoReference(t *testing.T) (input, want []float32) {
	data, err := os.ReadFile(fx.Path(t, "demo_model.json", "demo_model.json"))
	require.NoError(t, err)
	var doc struct {
		Cases []struct {
			Name   string    `json:"name"`
			Input  []float32 `json:"input"`
			Expect []float32 `json:"expect_output"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, c := range doc.Cases {
		if c.Name == "run_cpu_batch_4" {
			return c.Input, c.Expect
		}
	}
	t.Fatal("no run_cpu_batch_4 in demo_model.json")
	return nil, nil
}

func TestMultiGPUModel(t *testing.T) {
	input, want := demoReference(t)
	for _, c := range fx.Cases(t, "multi_gpu.json", "model") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var modelDev, inputDev int
			c.Get(t, "model_device", &modelDev)
			c.Get(t, "input_device", &inputDev)
			m, err := Load(demoPackage(t), LoadOnCUDA(modelDev))
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, Device{CUDA, modelDev}, m.Device())
			x, err := NewTensor([]int64{4, 16}, Float32, Device{CUDA, inputDev})
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, x.CopyFromHost(input))
			out, err := m.Run([]*Tensor{x})
			expectCode(t, c, err)
			if err != nil {
				return
			}
			defer out[0].Close()
			got := make([]float32, len(want))
			require.NoError(t, out[0].CopyToHost(got))
			require.Equal(t, want, got)
		})
	}
}

// Two goroutines drive the two GPUs at once, each with its own stream: copies, a kernel
// and a model run on its GPU, many times over; the results never mix.
func TestTwoGoroutinesDriveTwoGPUs(t *testing.T) {
	requireGPUs(t, 2)
	input, want := demoReference(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for dev := 0; dev < 2; dev++ {
		wg.Add(1)
		go func(dev int) {
			defer wg.Done()
			errs <- driveGPU(t, dev, input, want)
		}(dev)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func driveGPU(t *testing.T, dev int, input, want []float32) error {
	s, err := NewStream(NonBlocking(), StreamOnDevice(dev))
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := Load(demoPackage(t), LoadOnCUDA(dev))
	if err != nil {
		return err
	}
	defer m.Close()
	buf, err := Alloc(4*1024, OnDevice(dev))
	if err != nil {
		return err
	}
	defer buf.Close()
	x, err := NewTensor([]int64{4, 16}, Float32, Device{CUDA, dev})
	if err != nil {
		return err
	}
	defer x.Close()
	for round := 0; round < 50; round++ {
		value := float32(dev*1000 + round)
		got := make([]float32, 1024)
		err := WithCallerStream(s, func() error {
			if err := buf.FillFloat32(value, 1024); err != nil {
				return err
			}
			if err := buf.CopyToHost(AsBytes(got)); err != nil {
				return err
			}
			if err := x.CopyFromHost(input); err != nil {
				return err
			}
			out, err := m.Run([]*Tensor{x})
			if err != nil {
				return err
			}
			defer out[0].Close()
			y := make([]float32, len(want))
			if err := out[0].CopyToHost(y); err != nil {
				return err
			}
			for i := range want {
				if y[i] != want[i] {
					return fmt.Errorf("gpu %d round %d: output %d = %v, want %v", dev, round, i, y[i], want[i])
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, v := range got {
			if v != value {
				return fmt.Errorf("gpu %d round %d: element %d = %v, want %v", dev, round, i, v, value)
			}
		}
	}
	return nil
}
