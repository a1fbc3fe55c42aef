// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// The demo model, from testdata/demo_model.json (csrc/model/model_test.cc runs the same
// cases).

func demoPackage(t testing.TB) string {
	return fixture.Runfile(t, "SLIMCUDA_DEMO_PACKAGE", "models/demo/demo.slimcuda")
}

func loadOptions(device string) []LoadOption {
	switch device {
	case "cpu":
		return []LoadOption{LoadOnDevice(CPUDevice)}
	case "cuda", "cuda_caller_stream":
		return []LoadOption{LoadOnDevice(CurrentCUDA)}
	}
	return nil // auto
}

func TestDemoModelRun(t *testing.T) {
	for _, c := range fx.Cases(t, "demo_model.json", "run") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var device, layout string
			var batch int64
			var x, want []float32
			c.Get(t, "device", &device)
			c.Get(t, "layout", &layout)
			c.Get(t, "batch", &batch)
			c.Get(t, "input", &x)
			c.Get(t, "expect_output", &want)
			m, err := Load(demoPackage(t), loadOptions(device)...)
			require.NoError(t, err)
			defer m.Close()
			var opts []CallOption
			if device == "cuda_caller_stream" {
				s, err := NewStream(NonBlocking())
				require.NoError(t, err)
				defer s.Close()
				opts = append(opts, OnStream(s))
			}
			var in *Tensor
			if layout == "transposed" {
				xt := make([]float32, len(x))
				for b := int64(0); b < batch; b++ {
					for i := int64(0); i < 16; i++ {
						xt[i*batch+b] = x[b*16+i]
					}
				}
				base, err := NewTensor([]int64{16, batch}, Float32, m.Device())
				require.NoError(t, err)
				defer base.Close()
				require.NoError(t, CopyFromHost(base, xt))
				in, err = base.View([]int64{batch, 16}, []int64{1, batch}, 0)
				require.NoError(t, err)
			} else {
				in, err = NewTensor([]int64{batch, 16}, Float32, m.Device())
				require.NoError(t, err)
				require.NoError(t, CopyFromHost(in, x))
			}
			defer in.Close()
			out, err := m.Run([]*Tensor{in}, opts...)
			require.NoError(t, err)
			require.Len(t, out, 1)
			defer out[0].Close()
			got := make([]float32, len(want))
			require.NoError(t, CopyToHost(out[0], got, opts...)) // same stream as the run
			for i := range want {
				require.LessOrEqual(t, math.Abs(float64(got[i]-want[i])), 1e-6, "output %d: %v vs %v", i, got[i], want[i])
			}
			info, err := out[0].Info()
			require.NoError(t, err)
			require.Equal(t, m.Device().Type, info.Device.Type)
			require.Equal(t, []int64{batch, 8}, info.Sizes)
		})
	}
}

func TestDemoModelRejectsBadInputs(t *testing.T) {
	for _, c := range fx.Cases(t, "demo_model.json", "run_bad") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var device, where, dtypeName string
			var sizes []int64
			c.Get(t, "device", &device)
			c.Get(t, "input_device", &where)
			c.Get(t, "dtype", &dtypeName)
			c.Get(t, "sizes", &sizes)
			m, err := Load(demoPackage(t), loadOptions(device)...)
			require.NoError(t, err)
			defer m.Close()
			d := m.Device()
			switch where {
			case "cpu":
				d = Device{Type: CPU}
			case "cuda":
				d = Device{Type: CUDA}
			}
			dtype, ok := DTypeByName(dtypeName)
			require.True(t, ok)
			in, err := NewTensor(sizes, dtype, d)
			require.NoError(t, err)
			defer in.Close()
			out, err := m.Run([]*Tensor{in})
			expectCode(t, c, err)
			require.Nil(t, out)
		})
	}
}

func TestDemoModelLoad(t *testing.T) {
	for _, c := range fx.Cases(t, "demo_model.json", "load") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var device string
			c.Get(t, "device", &device)
			m, err := Load(demoPackage(t), loadOptions(device)...)
			expectCode(t, c, err)
			if err != nil {
				require.Nil(t, m)
				return
			}
			defer m.Close()
			var want string
			c.Get(t, "expect_device", &want)
			require.Equal(t, want == "cuda", m.Device().Type == CUDA)
			require.Len(t, m.Inputs(), 1)
			require.Len(t, m.Outputs(), 1)
			require.Equal(t, TensorSpec{Name: "x", DType: Float32, Sizes: []int64{64, 16}, Dynamism: DynamicBounded,
				Device: Device{Type: m.Device().Type, Index: m.Inputs()[0].Device.Index}}, m.Inputs()[0])
			require.Equal(t, "y", m.Outputs()[0].Name)
		})
	}
}

// Goroutines share one model, and others load their own, all at once.
func TestDemoModelConcurrentUse(t *testing.T) {
	demo := demoPackage(t) // on the test's goroutine: it may skip the test
	shared, err := Load(demo, LoadOnDevice(CPUDevice))
	require.NoError(t, err)
	defer shared.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			m := shared
			if g%2 == 1 {
				own, err := Load(demo, LoadOnDevice(CPUDevice))
				if err != nil {
					errs <- err
					return
				}
				defer own.Close()
				m = own
			}
			in, err := NewTensor([]int64{2, 16}, Float32, Device{Type: CPU})
			if err != nil {
				errs <- err
				return
			}
			defer in.Close()
			if err := CopyFromHost(in, make([]float32, 32)); err != nil {
				errs <- err
				return
			}
			out, err := m.Run([]*Tensor{in})
			if err != nil {
				errs <- err
				return
			}
			out[0].Close()
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestModelMisuseIsAnErrorNotAPanic(t *testing.T) {
	var nilModel *Model
	_, err := nilModel.Run(nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, nilModel.Close())
	m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice))
	require.NoError(t, err)
	_, err = m.Run(nil)
	require.ErrorIs(t, err, ErrInvalidArgument, "no inputs")
	_, err = m.Run([]*Tensor{nil})
	require.ErrorIs(t, err, ErrInvalidArgument, "a nil input")
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close is idempotent")
	_, err = m.Run(nil)
	require.ErrorIs(t, err, ErrInvalidState)
	_, err = LoadBytes([]byte("not a package"))
	require.ErrorIs(t, err, ErrInvalidProgram)
	require.Equal(t, "dynamic-bounded", DynamicBounded.String())
}

// The loader with the test models of models/testing (csrc/model/library_test.cc has the
// C++ side): every load runs its own library, whatever else is loaded.

func testModel(t testing.TB, name string) string {
	if dir := os.Getenv("SLIMCUDA_TEST_MODELS_DIR"); dir != "" {
		return filepath.Join(dir, name+".slimcuda")
	}
	return fixture.Runfile(t, "SLIMCUDA_TEST_MODELS_DIR", "models/testing/"+name+".slimcuda")
}

// runTestModel runs a test model (y = x + its constant) on x.
func runTestModel(t testing.TB, m *Model, x float32) float32 {
	t.Helper()
	in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, []float32{x}))
	outs, err := m.Run([]*Tensor{in})
	require.NoError(t, err)
	defer outs[0].Close()
	y := make([]float32, 1)
	require.NoError(t, CopyToHost(outs[0], y))
	return y[0]
}

func TestDifferentModelsLoadedAtOnceRunTheirOwnLibraries(t *testing.T) {
	var models []*Model
	for k := 1; k <= 8; k++ {
		m, err := Load(testModel(t, fmt.Sprintf("constant_%d", k)))
		require.NoError(t, err)
		defer m.Close()
		models = append(models, m)
	}
	for k, m := range models {
		require.Equal(t, float32(0.5+float64(k+1)), runTestModel(t, m, 0.5), "constant_%d", k+1)
	}
}

func TestModelsLoadedInSequenceRunTheirOwnLibraries(t *testing.T) {
	for _, sticky := range []struct {
		name string
		want float32
	}{{"nodelete", 100}, {"unique_symbol", 200}, {"constant_8", 8}} {
		t.Run(sticky.name, func(t *testing.T) {
			for round := 0; round < 2; round++ {
				m, err := Load(testModel(t, sticky.name))
				require.NoError(t, err)
				require.Equal(t, sticky.want, runTestModel(t, m, 0))
				require.NoError(t, m.Close())
				// The library above may stay loaded (it cannot be unloaded): later loads must
				// still get their own.
				for k := 1; k <= 3; k++ {
					m, err := Load(testModel(t, fmt.Sprintf("constant_%d", k)))
					require.NoError(t, err)
					require.Equal(t, float32(k), runTestModel(t, m, 0), "after %s", sticky.name)
					require.NoError(t, m.Close())
				}
			}
		})
	}
}

func TestSixtyFourGoroutinesLoadingDifferentModels(t *testing.T) {
	// The paths first, on the test's goroutine: testModel skips the test when a package is
	// not built (plain go test), and t.Skip from another goroutine would only end that one.
	var paths [8]string
	for k := range paths {
		paths[k] = testModel(t, fmt.Sprintf("constant_%d", k+1))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	right, wrong, failed := 0, 0, 0
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				k := 1 + (g+i)%8
				got, err := func() (float32, error) {
					m, err := Load(paths[k-1])
					if err != nil {
						return 0, err
					}
					defer m.Close()
					in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
					if err != nil {
						return 0, err
					}
					defer in.Close()
					if err := CopyFromHost(in, []float32{float32(g)}); err != nil {
						return 0, err
					}
					outs, err := m.Run([]*Tensor{in})
					if err != nil {
						return 0, err
					}
					defer outs[0].Close()
					y := make([]float32, 1)
					return y[0], CopyToHost(outs[0], y)
				}()
				mu.Lock()
				switch {
				case err != nil:
					failed++
				case got == float32(g+k):
					right++
				default:
					wrong++
				}
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	t.Logf("64 goroutines x 4 loads of 8 different packages: %d right, %d wrong, %d failed", right, wrong, failed)
	require.Equal(t, 0, wrong)
	require.Equal(t, 0, failed)
	require.Equal(t, 256, right)
}

// An output over the model library's own memory stays readable after the model is closed.
func TestOutputBorrowingTheModelOutlivesIt(t *testing.T) {
	m, err := Load(testModel(t, "static_output"))
	require.NoError(t, err)
	in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, []float32{2}))
	outs, err := m.Run([]*Tensor{in})
	require.NoError(t, err)
	defer outs[0].Close()
	require.NoError(t, m.Close())
	runtime.GC()
	y := make([]float32, 1)
	require.NoError(t, CopyToHost(outs[0], y))
	require.Equal(t, float32(302), y[0])
}

func TestContainerWithoutHandleIsRefused(t *testing.T) {
	m, err := Load(testModel(t, "null_container"))
	require.ErrorIs(t, err, ErrInvalidProgram)
	require.Contains(t, err.Error(), "returned no container")
	require.Nil(t, m)
}

// Model packages from untrusted bytes, from testdata/packages.json (csrc/package/
// package_test.cc runs the same cases).

func TestPackagesCheck(t *testing.T) {
	for _, c := range fx.Cases(t, "packages.json", "check") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var file string
			c.Get(t, "file", &file)
			data, err := os.ReadFile(fx.Path(t, "packages.json", file))
			require.NoError(t, err)
			expectCode(t, c, CheckPackage(data))
		})
	}
}

func TestPackagesLoad(t *testing.T) {
	for _, c := range fx.Cases(t, "packages.json", "load") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var file string
			c.Get(t, "file", &file)
			m, err := Load(fx.Path(t, "packages.json", file), LoadOnDevice(CPUDevice))
			expectCode(t, c, err)
			if err != nil {
				require.Nil(t, m)
				return
			}
			require.NoError(t, m.Close())
		})
	}
}

func TestPackMissingManifest(t *testing.T) {
	err := Pack(filepath.Join(t.TempDir(), "missing.json"), filepath.Join(t.TempDir(), "out.slimcuda"))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = Load(filepath.Join(t.TempDir(), "missing.slimcuda"))
	require.ErrorIs(t, err, ErrNotFound)
}

// FuzzCheckPackage feeds bytes to the package reader through the Go API: it must answer Ok
// or InvalidProgram, never crash. It is a robustness check of the Go-to-C boundary (slice
// passing, error mapping), not a coverage-guided fuzzer: cgo code is not instrumented, so
// `go test -fuzz` learns nothing about the C parser. `bazel test` runs it over its seeds
// (testdata/packages/*.slimcuda); libFuzzer (tools/fuzz/fuzz.sh) is the coverage-guided
// fuzzer of the C reader, and FuzzRead (go/internal/npy, the CLI's .npy reader) is the Go-side target.
func FuzzCheckPackage(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(filepath.Dir(fx.Path(f, "packages.json", "x")), "packages", "*.slimcuda"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckPackage(data)
		if err != nil && !errorIs(err, ErrInvalidProgram) {
			t.Fatalf("want nil or ErrInvalidProgram, got %v", err)
		}
	})
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

// Two GPUs: models from testdata/multi_gpu.json.
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
			m, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(modelDev)))
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, Device{CUDA, modelDev}, m.Device())
			x, err := NewTensor([]int64{4, 16}, Float32, Device{CUDA, inputDev})
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, CopyFromHost(x, input))
			out, err := m.Run([]*Tensor{x})
			expectCode(t, c, err)
			if err != nil {
				return
			}
			defer out[0].Close()
			got := make([]float32, len(want))
			require.NoError(t, CopyToHost(out[0], got))
			require.Equal(t, want, got)
		})
	}
}

// Two goroutines drive the two GPUs at once, each with its own stream: copies, a kernel
// and a model run on its GPU, many times over; the results never mix.
func TestTwoGoroutinesDriveTwoGPUs(t *testing.T) {
	requireGPUs(t, 2)
	input, want := demoReference(t)
	demo := demoPackage(t) // on the test's goroutine: it may skip the test
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for dev := 0; dev < 2; dev++ {
		wg.Add(1)
		go func(dev int) {
			defer wg.Done()
			errs <- driveGPU(demo, dev, input, want)
		}(dev)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func driveGPU(demo string, dev int, input, want []float32) error {
	s, err := NewStream(NonBlocking(), StreamOnDevice(CUDADevice(dev)))
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := Load(demo, LoadOnDevice(CUDADevice(dev)))
	if err != nil {
		return err
	}
	defer m.Close()
	buf, err := Alloc(4*1024, OnDevice(CUDADevice(dev)))
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
			if err := CopyFromHost(x, input); err != nil {
				return err
			}
			out, err := m.Run([]*Tensor{x})
			if err != nil {
				return err
			}
			defer out[0].Close()
			y := make([]float32, len(want))
			if err := CopyToHost(out[0], y); err != nil {
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

// Manifest numbers are JSON integers within their field's range, never truncated or
// wrapped (csrc/package/package_test.cc checks the same cases).
func TestPackRefusesNumbersThatAreNotIntegersInRange(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n.so"), []byte("not really a library"), 0o644))
	tests := []struct {
		description string
		fields      string // the input tensor's numeric fields, as JSON
		message     string
	}{
		{"fractional sizes", `"sizes": [2.7, 3.9]`, "tensor 'x': sizes[0] must be an integer"},
		{"integral float size", `"sizes": [2.0]`, "tensor 'x': sizes[0] must be an integer"},
		{"size 1e10", `"sizes": [1e10]`, "tensor 'x': sizes[0] must be an integer"},
		{"size 1e300", `"sizes": [3, 1e300]`, "tensor 'x': sizes[1] must be an integer"},
		{"size past int64", `"sizes": [9223372036854775808]`, "tensor 'x': sizes[0] must be an integer"},
		{"boolean size", `"sizes": [true]`, "tensor 'x': sizes[0] must be an integer"},
		{"sizes not an array", `"sizes": 3`, "tensor 'x': sizes must be an array"},
		{"fractional min size", `"sizes": [3], "min_sizes": [0.5], "dynamism": "dynamic_bounded"`,
			"tensor 'x': min_sizes[0] must be an integer"},
		{"dim_order past uint8", `"sizes": [3, 3], "dim_order": [257, 256]`,
			"tensor 'x': dim_order[0] must be an integer in [0, 255], got 257"},
		{"negative dim_order", `"sizes": [3], "dim_order": [-1]`, "tensor 'x': dim_order[0] must be an integer"},
		{"device_index past int32", `"sizes": [3], "device_index": 4294967295`,
			"tensor 'x': device_index must be an integer in [-1, 127], got 4294967295"},
		{"device_index 1e300", `"sizes": [3], "device_index": 1e300`, "tensor 'x': device_index must be an integer"},
		{"fractional device_index", `"sizes": [3], "device_index": 0.5`, "tensor 'x': device_index must be an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.description, func(t *testing.T) {
			manifest := filepath.Join(dir, "numbers.json")
			text := `{"libraries": [{"device": "cpu", "so": "n.so", "methods": [{"name": "forward",
			  "inputs": [{"name": "x", "dtype": "int64", "device": "cpu", ` + tc.fields + `}],
			  "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}]}`
			require.NoError(t, os.WriteFile(manifest, []byte(text), 0o644))
			err := Pack(manifest, filepath.Join(dir, "numbers.slimcuda"))
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.ErrorContains(t, err, tc.message)
		})
	}
}
