// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// The demo model, from testdata/demo_model.json (csrc/c_api/model_test.cc runs the same
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
			fx.Begin(t, c)
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
			fx.Begin(t, c)
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
			fx.Begin(t, c)
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

// The loader with the test models of models/testing (csrc/c_api/library_test.cc has the
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

// runOnce runs a test model on x once and returns y, reporting errors instead of failing
// the test (for goroutines other than the test's).
func runOnce(m *Model, x float32) (float32, error) {
	in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if err := CopyFromHost(in, []float32{x}); err != nil {
		return 0, err
	}
	outs, err := m.Run([]*Tensor{in})
	if err != nil {
		return 0, err
	}
	defer outs[0].Close()
	y := make([]float32, 1)
	err = CopyToHost(outs[0], y)
	return y[0], err
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
	// One load after another, each run right after it loads, while a first model stays
	// loaded (the reproduction: A, then B and C with A alive, all ran A).
	t.Run("while constant_1 stays loaded", func(t *testing.T) {
		first, err := Load(testModel(t, "constant_1"))
		require.NoError(t, err)
		defer first.Close()
		require.Equal(t, float32(1), runTestModel(t, first, 0))
		for k := 2; k <= 8; k++ {
			m, err := Load(testModel(t, fmt.Sprintf("constant_%d", k)))
			require.NoError(t, err)
			require.Equal(t, float32(k), runTestModel(t, m, 0), "constant_%d while constant_1 is loaded", k)
			require.NoError(t, m.Close())
		}
		require.Equal(t, float32(1), runTestModel(t, first, 0))
	})
	for _, sticky := range []struct {
		name string
		want float32
	}{{"nodelete", 100}, {"unique_symbol", 200}, {"constant_8", 8}} {
		t.Run("after "+sticky.name, func(t *testing.T) {
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

// loadConcurrently has n goroutines load the 8 test packages, 4 loads each, every run
// checked against its own package. Each goroutine keeps its first model until all n have
// loaded theirs, so n models are alive at once (loads are serialized and quick: without
// the hold one goroutine could load, run and close before the next starts); later loads
// come and go while others run.
func loadConcurrently(t *testing.T, n int) {
	// The paths first, on the test's goroutine: testModel skips the test when a package is
	// not built (plain go test), and t.Skip from another goroutine would only end that one.
	var paths [8]string
	for k := range paths {
		paths[k] = testModel(t, fmt.Sprintf("constant_%d", k+1))
	}
	var wg sync.WaitGroup
	var loaded sync.WaitGroup
	loaded.Add(n)
	var mu sync.Mutex
	right, wrong, failed, alive, mostAlive := 0, 0, 0, 0, 0
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				k := 1 + (g+i)%8
				got, err := func() (float32, error) {
					m, err := Load(paths[k-1])
					if i == 0 {
						if err == nil {
							mu.Lock()
							alive++
							mostAlive = max(mostAlive, alive)
							mu.Unlock()
							defer func() { mu.Lock(); alive--; mu.Unlock() }()
						}
						loaded.Done()
						loaded.Wait()
					}
					if err != nil {
						return 0, err
					}
					defer m.Close()
					return runOnce(m, float32(g))
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
	t.Logf("%d goroutines x 4 loads of 8 different packages (%d models alive at once): %d right, %d wrong, %d failed",
		n, mostAlive, right, wrong, failed)
	require.Equal(t, 0, wrong)
	require.Equal(t, 0, failed)
	require.Equal(t, 4*n, right)
	require.Equal(t, n, mostAlive, "not every first model was loaded at once")
}

func TestSixtyFourGoroutinesLoadingDifferentModels(t *testing.T) { loadConcurrently(t, 64) }

func TestTwoHundredFiftySixGoroutinesLoadingDifferentModels(t *testing.T) { loadConcurrently(t, 256) }

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

// A library calling shims or SLEEF functions slimcuda lacks: the error names every one of
// them, and not the SLEEF function libslimcuda's libsleef defines.
func TestMissingShimsAreAllNamed(t *testing.T) {
	m, err := Load(testModel(t, "missing_shims"))
	require.ErrorIs(t, err, ErrNotSupported)
	require.Contains(t, err.Error(), "3 functions this slimcuda does not provide")
	require.Contains(t, err.Error(), "aoti_torch_cpu_made_up_op")
	require.Contains(t, err.Error(), "aoti_torch_made_up_helper")
	require.Contains(t, err.Error(), "Sleef_madeupf_u10")
	require.NotContains(t, err.Error(), "Sleef_expf_u10")
	require.Nil(t, m)
}

// With no file descriptor left, or only the one the library's memfd takes, a load is
// ErrOutOfResources, not a complaint about the package; with a few left it loads. In a
// child process (this test binary again), which lowers its own descriptor limit.
func TestOutOfFileDescriptorsIsOutOfResources(t *testing.T) {
	if path := os.Getenv("SLIMCUDA_FD_CHILD"); path != "" {
		outOfFileDescriptorsChild(path)
		return
	}
	path, err := filepath.Abs(testModel(t, "constant_1"))
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "-test.run=^TestOutOfFileDescriptorsIsOutOfResources$")
	for _, kv := range os.Environ() { // not bazel's report and filter variables
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "XML_OUTPUT") &&
			!strings.HasPrefix(name, "TESTBRIDGE") && !strings.HasPrefix(name, "GO_TEST") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SLIMCUDA_FD_CHILD="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, want := range []string{
		"spare 0: slimcuda: LoadBytes: OutOfResources: slimcuda_model_load_with: memfd_create failed: Too many open files",
		"spare 1: slimcuda: LoadBytes: OutOfResources: slimcuda_model_load_with: reserving a file descriptor for the " +
			"dynamic loader failed: Too many open files",
		"spare 3: <nil>",
	} {
		require.Contains(t, string(out), want)
	}
}

func outOfFileDescriptorsChild(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	limit := syscall.Rlimit{Cur: 256, Max: 256}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var fds []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, fd)
	}
	free := 0 // descriptors closed since the table was full (a failed load frees its own)
	for _, spare := range []int{0, 1, 3} {
		for ; free < spare && len(fds) > 0; free++ {
			syscall.Close(fds[len(fds)-1])
			fds = fds[:len(fds)-1]
		}
		m, err := LoadBytes(data, LoadOnDevice(CPUDevice))
		fmt.Printf("spare %d: %v\n", spare, err)
		if m != nil {
			m.Close()
		}
	}
	os.Exit(0)
}

func demoReference(t *testing.T) (input, want []float32) {
	return fixture.DemoReference[float32](t, fx.Path(t, "demo_model.json", "demo_model.json"), "run_cpu_batch_4")
}

// Two GPUs: models from testdata/multi_gpu.json.
func TestMultiGPUModel(t *testing.T) {
	input, want := demoReference(t)
	for _, c := range fx.Cases(t, "multi_gpu.json", "model") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
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
	requireTwoGPUs(t)
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

// --- many goroutines on one model -------------------------------------------------------

// Concurrency and bad use of a Model (go test -race -run 'Concurrent' runs these against
// the installed library; csrc/c_api/model_test.cc and library_test.cc have the C++ side under
// TSan).

// concurrentInput is goroutine g's own input for the demo model ([2, 16]).
func concurrentInput(g int) []float32 {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32((g*37+i*11)%17)/8 - 1
	}
	return x
}

// runDemo runs the demo model once on x (on the call's stream, if any) and returns y.
func runDemo(m *Model, x []float32, opts ...CallOption) ([]float32, error) {
	in, err := NewTensor([]int64{2, 16}, Float32, m.Device())
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if err := CopyFromHost(in, x, opts...); err != nil {
		return nil, err
	}
	out, err := m.Run([]*Tensor{in}, opts...)
	if err != nil {
		return nil, err
	}
	defer out[0].Close()
	y := make([]float32, 16)
	return y, CopyToHost(out[0], y, opts...) // the run's stream
}

// 64 goroutines x 1,000 runs on one model, each on its own stream where a GPU exists (on
// the CPU: no streams), every output bit-exact against a single-threaded reference.
func TestConcurrentRunsOnOneModelAreBitExact(t *testing.T) {
	const goroutines, runs = 64, 1000
	device := CPUDevice
	if n, err := DeviceCount(); err == nil && n > 0 {
		device = CUDADevice(0)
	}
	m, err := Load(demoPackage(t), LoadOnDevice(device), WithInstances(4))
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 4, m.Instances())
	want := make([][]float32, goroutines)
	for g := range want {
		want[g], err = runDemo(m, concurrentInput(g))
		require.NoError(t, err)
	}
	require.NoError(t, runBitExact(m, goroutines, runs, want))
}

// runBitExact runs the demo model `runs` times from each of `goroutines` goroutines, each on
// its own non-blocking stream on CUDA, and returns the first output that is not bit-exact
// against want[goroutine] (or the first error).
func runBitExact(m *Model, goroutines, runs int, want [][]float32) error {
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var opts []CallOption
			if m.Device().Type == CUDA {
				s, err := NewStream(NonBlocking())
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				opts = append(opts, OnStream(s))
			}
			x := concurrentInput(g)
			for r := 0; r < runs; r++ {
				y, err := runDemo(m, x, opts...)
				if err != nil {
					errs <- err
					return
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(want[g][i]) {
						errs <- fmt.Errorf("goroutine %d run %d output %d: %v, want %v", g, r, i, y[i], want[g][i])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// With every instance busy, RunContext gives up when its context does, enqueuing nothing.
func TestConcurrentRunContextGivesUpWhenAllInstancesAreBusy(t *testing.T) {
	m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice), WithInstances(2))
	require.NoError(t, err)
	defer m.Close()
	in, err := NewTensor([]int64{2, 16}, Float32, m.Device())
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, make([]float32, 32)))
	// Every instance taken, as by two runs in flight.
	<-m.slots
	<-m.slots
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	out, err := m.RunContext(ctx, []*Tensor{in})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Nil(t, out)
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = m.RunContext(canceled, []*Tensor{in})
	require.ErrorIs(t, err, context.Canceled)
	// A free instance: the run goes ahead.
	m.slots <- struct{}{}
	out, err = m.RunContext(context.Background(), []*Tensor{in})
	require.NoError(t, err)
	out[0].Close()
	m.slots <- struct{}{}
	//lint:ignore SA1012 a nil context is bad input, not a panic
	_, err = m.RunContext(nil, []*Tensor{in}) //nolint:staticcheck
	require.ErrorIs(t, err, ErrInvalidArgument)
	// An already-done context with a free instance enqueues nothing either.
	_, err = m.RunContext(canceled, []*Tensor{in})
	require.ErrorIs(t, err, context.Canceled)
}

// runCountInstances runs count_instances (sleeps x microseconds, returns how many runs
// were in flight) and returns y.
func runCountInstances(m *Model, ctx context.Context, us float32) (float32, error) {
	in, err := NewTensor([]int64{1}, Float32, CPUDevice)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if err := CopyFromHost(in, []float32{us}); err != nil {
		return 0, err
	}
	out, err := m.RunContext(ctx, []*Tensor{in})
	if err != nil {
		return 0, err
	}
	defer out[0].Close()
	y := make([]float32, 1)
	return y[0], CopyToHost(out[0], y)
}

// Runs overlap up to the instance count, and the container (which fails a Run when more
// than its instances are in flight) never sees more.
func TestConcurrentRunsUseEveryInstanceAndNoMore(t *testing.T) {
	for _, c := range []struct {
		description string
		opts        []LoadOption
		instances   int
	}{
		{"default on the CPU", nil, 1},
		{"four instances", []LoadOption{WithInstances(4)}, 4},
	} {
		t.Run(c.description, func(t *testing.T) {
			m, err := Load(testModel(t, "count_instances"), c.opts...)
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, c.instances, m.Instances())
			var mu sync.Mutex
			var most float32
			errs := make(chan error, 16*20)
			var wg sync.WaitGroup
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 20; r++ {
						y, err := runCountInstances(m, context.Background(), 300)
						if err != nil {
							errs <- err
							continue
						}
						mu.Lock()
						most = float32(math.Max(float64(most), float64(y)))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.LessOrEqual(t, most, float32(c.instances))
			if c.instances > 1 {
				require.GreaterOrEqual(t, most, float32(2), "runs never overlapped")
			}
		})
	}
}

// Close while a run is in flight waits for it: the run completes (its output read after
// Close was called), Close returns after it, and a run that starts once Close is waiting
// reports ErrInvalidState. The test holds the run with the model's one instance, which it
// takes itself: the run then waits inside Run, holding the model as it does through the C
// call, and nothing here depends on timing.
func TestConcurrentCloseWaitsForRunsInFlight(t *testing.T) {
	m, err := Load(testModel(t, "count_instances"))
	require.NoError(t, err)
	require.Equal(t, 1, m.Instances())
	<-m.slots // the latch: the run cannot take the instance until the test gives it back
	// Hang catchers only: each wait below ends as soon as its condition holds.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); runtime.Gosched() {
			require.True(t, time.Now().Before(deadline), "still waiting for %s", what)
		}
	}

	held := make(chan error, 1)
	go func() {
		_, err := runCountInstances(m, context.Background(), 0)
		held <- err
	}()
	// The run holds the model (shared) once no one can take it exclusively.
	waitFor("the run to start", func() bool {
		select {
		case err := <-held:
			t.Fatalf("the held run returned (%v) before it was released", err)
		default:
		}
		if m.mu.TryLock() {
			m.mu.Unlock()
			return false
		}
		return true
	})
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	// Close is waiting for the model once new shared holders are turned away.
	waitFor("Close to wait", func() bool {
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a run was in flight", err)
		default:
		}
		if m.mu.TryRLock() {
			m.mu.RUnlock()
			return false
		}
		return true
	})
	late := make(chan error, 1)
	go func() {
		_, err := runCountInstances(m, context.Background(), 0)
		late <- err
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a run was in flight", err)
	case err := <-held:
		t.Fatalf("the held run returned (%v) before it was released", err)
	default:
	}

	m.slots <- struct{}{} // release the run
	require.NoError(t, <-held, "the run in flight when Close was called completes")
	require.NoError(t, <-closed)
	require.ErrorIs(t, <-late, ErrInvalidState, "a run that started while Close waited")
	_, err = m.RunContext(context.Background(), nil)
	require.ErrorIs(t, err, ErrInvalidState, "a run on a closed model")
	_, err = m.Run(nil)
	require.ErrorIs(t, err, ErrInvalidState)
}

func TestConcurrentLoadRejectsBadInstanceCounts(t *testing.T) {
	for _, n := range []int{-1, 65} {
		_, err := Load(demoPackage(t), WithInstances(n))
		require.ErrorIs(t, err, ErrInvalidArgument, "%d instances", n)
		_, err = LoadBytes([]byte("x"), WithInstances(n))
		require.ErrorIs(t, err, ErrInvalidArgument, "%d instances", n)
	}
	var nilModel *Model
	require.Equal(t, 0, nilModel.Instances())
	_, err := nilModel.RunContext(context.Background(), nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.False(t, errors.Is(err, context.Canceled))
}

// --- serving ------------------------------------------------------------------------------

// BenchmarkServing is bench/serving_benchmark from Go: one CUDA model (the demo package, or
// $SLIMCUDA_SERVING_PACKAGE), N goroutines each on its own non-blocking stream calling
// Run and waiting for its stream, for instances 1/2/4/8 × callers 1..32 and CUDA graphs off
// and on. It reports runs/s over all callers and p50/p99 call latency; b.N is the number of
// calls each caller makes (go test -bench Serving -benchtime 2000x).
func BenchmarkServing(b *testing.B) {
	requireGPU(b)
	path := os.Getenv("SLIMCUDA_SERVING_PACKAGE")
	if path == "" {
		path = demoPackage(b)
	}
	for _, graphs := range []GraphMode{GraphsOff, GraphsStrict} {
		for _, instances := range []int{1, 2, 4, 8} {
			m, err := Load(path, LoadOnDevice(CUDADevice(0)), WithInstances(instances), WithCUDAGraphs(graphs))
			if err != nil {
				b.Fatal(err)
			}
			for _, callers := range []int{1, 2, 4, 8, 16, 32} {
				name := fmt.Sprintf("graphs=%v/instances=%d/callers=%d", graphs != GraphsOff, instances, callers)
				b.Run(name, func(b *testing.B) { driveServing(b, m, callers) })
			}
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// driveServing runs b.N calls on each of `callers` goroutines and reports the figures.
func driveServing(b *testing.B, m *Model, callers int) {
	spec := m.Inputs()
	lat := make([][]time.Duration, callers)
	errs := make(chan error, callers)
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	for c := 0; c < callers; c++ {
		ready.Add(1)
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s, err := NewStream(NonBlocking())
			if err != nil {
				ready.Done()
				errs <- err
				return
			}
			defer s.Close()
			inputs := make([]*Tensor, len(spec))
			for i, sp := range spec {
				if inputs[i], err = NewTensor(sp.Sizes, sp.DType, m.Device()); err != nil {
					ready.Done()
					errs <- err
					return
				}
				defer inputs[i].Close()
			}
			lat[c] = make([]time.Duration, 0, b.N)
			ready.Done()
			<-start
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				out, err := m.Run(inputs, OnStream(s))
				if err == nil {
					err = s.Synchronize()
				}
				if err != nil {
					errs <- err
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
				for _, o := range out {
					o.Close()
				}
			}
		}(c)
	}
	ready.Wait()
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
