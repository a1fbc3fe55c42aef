package slimcuda

import (
	"math"
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
