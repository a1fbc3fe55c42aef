package slimcuda

import (
	"fmt"
	"math"
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
		return []LoadOption{LoadOnCPU()}
	case "cuda", "cuda_caller_stream":
		return []LoadOption{LoadOnCUDA(-1)}
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
				require.NoError(t, base.CopyFromHost(xt))
				in, err = base.View([]int64{batch, 16}, []int64{1, batch}, 0)
				require.NoError(t, err)
			} else {
				in, err = NewTensor([]int64{batch, 16}, Float32, m.Device())
				require.NoError(t, err)
				require.NoError(t, in.CopyFromHost(x))
			}
			defer in.Close()
			out, err := m.Run([]*Tensor{in}, opts...)
			require.NoError(t, err)
			require.Len(t, out, 1)
			defer out[0].Close()
			got := make([]float32, len(want))
			require.NoError(t, out[0].CopyToHost(got, opts...)) // same stream as the run
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
	shared, err := Load(demoPackage(t), LoadOnCPU())
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
				own, err := Load(demoPackage(t), LoadOnCPU())
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
			if err := in.CopyFromHost(make([]float32, 32)); err != nil {
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
	m, err := Load(demoPackage(t), LoadOnCPU())
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
	return filepath.Join(fixture.Runfile(t, "SLIMCUDA_TEST_MODELS_DIR", "models/testing"), name+".slimcuda")
}

// runTestModel runs a test model (y = x + its constant) on x.
func runTestModel(t testing.TB, m *Model, x float32) float32 {
	t.Helper()
	in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, in.CopyFromHost([]float32{x}))
	outs, err := m.Run([]*Tensor{in})
	require.NoError(t, err)
	defer outs[0].Close()
	y := make([]float32, 1)
	require.NoError(t, outs[0].CopyToHost(y))
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
					m, err := Load(testModel(t, fmt.Sprintf("constant_%d", k)))
					if err != nil {
						return 0, err
					}
					defer m.Close()
					in, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
					if err != nil {
						return 0, err
					}
					defer in.Close()
					if err := in.CopyFromHost([]float32{float32(g)}); err != nil {
						return 0, err
					}
					outs, err := m.Run([]*Tensor{in})
					if err != nil {
						return 0, err
					}
					defer outs[0].Close()
					y := make([]float32, 1)
					return y[0], outs[0].CopyToHost(y)
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
	require.NoError(t, in.CopyFromHost([]float32{2}))
	outs, err := m.Run([]*Tensor{in})
	require.NoError(t, err)
	defer outs[0].Close()
	require.NoError(t, m.Close())
	runtime.GC()
	y := make([]float32, 1)
	require.NoError(t, outs[0].CopyToHost(y))
	require.Equal(t, float32(302), y[0])
}

func TestContainerWithoutHandleIsRefused(t *testing.T) {
	m, err := Load(testModel(t, "null_container"))
	require.ErrorIs(t, err, ErrInvalidProgram)
	require.Contains(t, err.Error(), "returned no container")
	require.Nil(t, m)
}
