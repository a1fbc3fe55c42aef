// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// Load and LoadBytes (load.go) of PyTorch .pt2 archives, from testdata/pt2.json (csrc/c_api/pt2_load_test.cc runs the same
// cases): each loads from a file and from memory with the fixture's code and message, the
// valid ones run.

func pt2Path(t testing.TB, name string) string {
	return fx.Path(t, "pt2.json", filepath.Join("pt2", name))
}

// runOne runs y = m(x) on one float32 [1] CPU tensor.
func runOne(t *testing.T, m *Model, x float32) float32 {
	t.Helper()
	in, err := NewTensor([]int64{1}, Float32, CPUDevice)
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, []float32{x}))
	out, err := m.Run([]*Tensor{in})
	require.NoError(t, err)
	require.Len(t, out, 1)
	defer out[0].Close()
	y := []float32{-1}
	require.NoError(t, CopyToHost(out[0], y))
	return y[0]
}

// runFails runs m on one float32 [1] CPU tensor and wants error `expect` naming message.
func runFails(t *testing.T, m *Model, expect, message string) {
	t.Helper()
	in, err := NewTensor([]int64{1}, Float32, CPUDevice)
	require.NoError(t, err)
	defer in.Close()
	out, err := m.Run([]*Tensor{in})
	require.Error(t, err)
	require.Nil(t, out)
	code, ok := CodeByName(expect)
	require.True(t, ok, expect)
	require.True(t, errorIs(err, code), "want %s, got %v", expect, err)
	require.True(t, containsMessage(err, message), "error %q does not mention %q", err, message)
}

func pt2Options(t *testing.T, c fixture.Case) []LoadOption {
	var opts []LoadOption
	var name string
	if c.GetOr(t, "model_name", &name) {
		opts = append(opts, WithModelName(name))
	}
	var deviceType int
	if c.GetOr(t, "device_type", &deviceType) && deviceType == 1 {
		opts = append(opts, LoadOnDevice(CUDADevice(0)))
	}
	return opts
}

func TestPt2Load(t *testing.T) {
	for _, c := range fx.Cases(t, "pt2.json", "load") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var file string
			c.Get(t, "file", &file)
			path := fx.Path(t, "pt2.json", file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, how := range []string{"file", "memory"} {
				var m *Model
				var err error
				if how == "file" {
					m, err = Load(path, pt2Options(t, c)...)
				} else {
					m, err = LoadBytes(data, pt2Options(t, c)...)
				}
				expectCode(t, c, err)
				if err != nil {
					require.Nil(t, m, how)
					continue
				}
				var run struct{ X, Y float32 }
				if c.GetOr(t, "run", &run) {
					require.Equal(t, run.Y, runOne(t, m, run.X), how)
				}
				var runErr struct{ Expect, Message string }
				if c.GetOr(t, "run_error", &runErr) {
					runFails(t, m, runErr.Expect, runErr.Message)
				}
				require.NoError(t, m.Close())
			}
		})
	}
}

func TestPt2RealCpuExport(t *testing.T) {
	for _, c := range fx.Cases(t, "pt2.json", "real") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var file, reference string
			c.Get(t, "file", &file)
			c.Get(t, "reference", &reference)
			raw, err := os.ReadFile(fx.Path(t, "pt2.json", reference))
			require.NoError(t, err)
			var ref struct{ X, Z, Y []float32 }
			require.NoError(t, json.Unmarshal(raw, &ref))

			m, err := Load(fx.Path(t, "pt2.json", file))
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, CPUDevice.Type, m.Device().Type)
			inputs := m.Inputs()
			require.Len(t, inputs, 2)
			require.Equal(t, []int64{2, 4}, inputs[0].Sizes)
			require.Equal(t, []int64{2, 3}, inputs[1].Sizes)
			require.Equal(t, Float32, inputs[0].DType)
			require.Equal(t, Static, inputs[1].Dynamism)
			require.Len(t, m.Outputs(), 1)
			require.Equal(t, UnknownSpec, m.Outputs()[0].Dynamism, "the archive states nothing about outputs")

			x, err := NewTensor([]int64{2, 4}, Float32, CPUDevice)
			require.NoError(t, err)
			defer x.Close()
			z, err := NewTensor([]int64{2, 3}, Float32, CPUDevice)
			require.NoError(t, err)
			defer z.Close()
			require.NoError(t, CopyFromHost(x, ref.X))
			require.NoError(t, CopyFromHost(z, ref.Z))
			out, err := m.Run([]*Tensor{x, z})
			require.NoError(t, err)
			defer out[0].Close()
			y := make([]float32, len(ref.Y))
			require.NoError(t, CopyToHost(out[0], y))
			require.InDeltaSlice(t, ref.Y, y, 1e-5)

			// A wrong input is ErrInvalidArgument from slimcuda's checks, before the library runs.
			wide, err := NewTensor([]int64{2, 5}, Float32, CPUDevice)
			require.NoError(t, err)
			defer wide.Close()
			_, err = m.Run([]*Tensor{wide, z})
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.Contains(t, err.Error(), "shape [2, 5], want [2, 4]")
		})
	}
}

// A load writes nothing into TMPDIR (where anything temporary of ours
// would go).
func TestPt2LoadLeavesNoFileInTmpdir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, name := range []string{"valid.pt2", "compressed_library.pt2", "real_cpu_linear.pt2"} {
		m, err := Load(pt2Path(t, name))
		require.NoError(t, err, name)
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, left, "%s: while loaded", name)
		require.NoError(t, m.Close())
	}
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestPt2ModelNameOption(t *testing.T) {
	_, err := Load(pt2Path(t, "two_models.pt2"))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.True(t, strings.Contains(err.Error(), "'a', 'b'"), err.Error())
	m, err := Load(pt2Path(t, "two_models.pt2"), WithModelName("a"))
	require.NoError(t, err)
	require.Equal(t, float32(3), runOne(t, m, 2))
	require.NoError(t, m.Close())
	// A package has no named models: the option is ignored.
	pkg, err := Load(demoPackage(t), LoadOnDevice(CPUDevice), WithModelName("nothing"))
	require.NoError(t, err)
	require.NoError(t, pkg.Close())
}

// loadAnyBytes is FuzzLoadPt2's property: any bytes give a model or an error of the kinds a
// malformed input gets, never a crash.
func loadAnyBytes(t *testing.T, data []byte) {
	m, err := LoadBytes(data, LoadOnDevice(CPUDevice))
	if err != nil {
		require.Nil(t, m)
		for _, want := range []error{ErrInvalidProgram, ErrInvalidArgument, ErrNotSupported} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("unexpected error kind: %v", err)
	}
	require.NoError(t, m.Close())
}

func pt2Seeds(t testing.TB) [][]byte {
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(fx.Path(t, "pt2.json", "x")), "pt2", "*.pt2"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var seeds [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		seeds = append(seeds, data)
	}
	return seeds
}

// FuzzLoadPt2 feeds bytes to the .pt2 loader through the Go API (LoadBytes on the CPU). As
// FuzzCheckPackage, a robustness check of the Go-to-C boundary, not a coverage-guided
// fuzzer of the C reader (cgo code is not instrumented; csrc/archive/archive_fuzzer.cc under
// libFuzzer is). Its seeds are testdata/pt2/*.pt2, which `go test` and `bazel test` replay;
// TestPt2FuzzSeeds adds their truncations.
func FuzzLoadPt2(f *testing.F) {
	for _, data := range pt2Seeds(f) {
		f.Add(data)
	}
	f.Fuzz(loadAnyBytes)
}

func TestPt2FuzzSeeds(t *testing.T) {
	for _, data := range pt2Seeds(t) {
		loadAnyBytes(t, data)
		// And every 64th prefix of it: truncations are the commonest damage.
		for n := 0; n < len(data); n += 64 {
			loadAnyBytes(t, data[:n])
		}
	}
}

// The demo model's libraries as .pt2 archives (//models/demo:demo_pt2): the device comes
// from the archive's metadata, the input's bounds from its wrapper source, the output
// matches the demo's reference (testdata/demo_model.json, run_cpu_batch_4). CUDA: on the
// model's own stream and on a caller stream.
func TestPt2DemoArchives(t *testing.T) {
	x, want := demoReference(t)
	require.Len(t, x, 64)
	for _, tc := range []struct {
		description, env, file string
		cuda, callerStream     bool
	}{
		{"cpu", "SLIMCUDA_DEMO_CPU_PT2", "models/demo/demo_cpu.pt2", false, false},
		{"cuda", "SLIMCUDA_DEMO_CUDA_PT2", "models/demo/demo_cuda.pt2", true, false},
		{"cuda on a caller stream", "SLIMCUDA_DEMO_CUDA_PT2", "models/demo/demo_cuda.pt2", true, true},
	} {
		t.Run(tc.description, func(t *testing.T) {
			if tc.cuda {
				requireGPU(t)
			}
			m, err := Load(fixture.Runfile(t, tc.env, tc.file))
			require.NoError(t, err)
			defer m.Close()
			device := CPUDevice
			if tc.cuda {
				device = CUDADevice(0)
			}
			require.Equal(t, device.Type, m.Device().Type, "the archive's AOTI_DEVICE_KEY")
			in := m.Inputs()[0]
			require.Equal(t, DynamicBounded, in.Dynamism)
			require.Equal(t, []int64{64, 16}, in.Sizes)
			xt, err := NewTensor([]int64{4, 16}, Float32, m.Device())
			require.NoError(t, err)
			defer xt.Close()
			require.NoError(t, CopyFromHost(xt, x))
			var opts []CallOption
			if tc.callerStream {
				s, err := NewStream(NonBlocking(), StreamOnDevice(m.Device()))
				require.NoError(t, err)
				defer s.Close()
				opts = append(opts, OnStream(s))
			}
			out, err := m.Run([]*Tensor{xt}, opts...)
			require.NoError(t, err)
			defer out[0].Close()
			got := make([]float32, len(want))
			require.NoError(t, CopyToHost(out[0], got, opts...))
			require.InDeltaSlice(t, want, got, 1e-6)

			big, err := NewTensor([]int64{65, 16}, Float32, m.Device())
			require.NoError(t, err)
			defer big.Close()
			_, err = m.Run([]*Tensor{big})
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.Contains(t, err.Error(), "want at most [64, 16]")
		})
	}
}

// --- weights kept outside the library ---------------------------------------------------

// Weights kept outside the library (docs/weights.md): the CPU binary_blob export runs
// through the pt2.json cases (TestPt2RealCpuExport, TestPt2Load); here the CUDA export that
// tools/aoti/export_weights_example.py writes on the GPU machine, named by
// SLIMCUDA_PT2_CUDA_WEIGHTS (DIR/model.pt2, with x.bin, y.bin and weights.blob beside it).
// csrc/c_api/pt2_load_test.cc's Pt2CudaWeights runs the same checks.

// cudaWeightsExport returns the export's path, its input [4, 16] and eager's output [4, 8];
// skips without a GPU or the export, fails for either under SLIMCUDA_REQUIRE_GPU=1.
func cudaWeightsExport(t *testing.T) (string, []float32, []float32) {
	t.Helper()
	requireGPU(t)
	path := os.Getenv("SLIMCUDA_PT2_CUDA_WEIGHTS")
	if path == "" {
		if fixture.GPURequired() {
			t.Fatal("SLIMCUDA_PT2_CUDA_WEIGHTS is not set (tools/aoti/export_weights_example.py DIR cuda, " +
				"then SLIMCUDA_PT2_CUDA_WEIGHTS=DIR/model.pt2)")
		}
		t.Skip("SLIMCUDA_PT2_CUDA_WEIGHTS is not set")
	}
	floats := func(name string, n int) []float32 {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		require.NoError(t, err)
		require.Len(t, raw, 4*n, name)
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return v
	}
	return path, floats("x.bin", 4*16), floats("y.bin", 4*8)
}

func runCudaWeights(t *testing.T, m *Model, x, want []float32, opts ...CallOption) {
	t.Helper()
	require.Equal(t, CUDA, m.Device().Type, "SLIMCUDA_PT2_CUDA_WEIGHTS must be a CUDA export")
	in, err := NewTensor([]int64{4, 16}, Float32, m.Device())
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, x))
	out, err := m.Run([]*Tensor{in}, opts...)
	require.NoError(t, err)
	defer out[0].Close()
	got := make([]float32, len(want))
	require.NoError(t, CopyToHost(out[0], got, opts...))
	require.InDeltaSlice(t, want, got, 1e-4)
}

func TestPt2CudaWeightsMatchEager(t *testing.T) {
	path, x, y := cudaWeightsExport(t)
	t.Run("own stream", func(t *testing.T) {
		m, err := Load(path)
		require.NoError(t, err)
		defer m.Close()
		runCudaWeights(t, m, x, y)
	})
	t.Run("loaded on a caller stream, run on another", func(t *testing.T) {
		load, err := NewStream(NonBlocking())
		require.NoError(t, err)
		defer load.Close()
		other, err := NewStream(NonBlocking())
		require.NoError(t, err)
		defer other.Close()
		var m *Model
		require.NoError(t, WithCallerStream(load, func() error {
			var err error
			m, err = Load(path)
			return err
		}))
		defer m.Close()
		runCudaWeights(t, m, x, y, OnStream(other))
	})
	t.Run("cuda graphs share the weights", func(t *testing.T) {
		m, err := Load(path, WithInstances(1), WithCUDAGraphs(GraphsStrict))
		require.NoError(t, err)
		defer m.Close()
		s, err := NewStream(NonBlocking())
		require.NoError(t, err)
		defer s.Close()
		runCudaWeights(t, m, x, y, OnStream(s)) // captured, then replayed
		runCudaWeights(t, m, x, y, OnStream(s)) // replayed
		stats, err := m.GraphStats()
		require.NoError(t, err)
		require.Equal(t, uint64(1), stats.Captures)
		require.Equal(t, uint64(2), stats.Replays)
		require.Zero(t, stats.Fallbacks)
	})
}

// Two loads of one .pt2 on one GPU hold one copy of its weights (the blob's size is what
// one copy takes at least); it goes with the last model.
func TestPt2CudaWeightsTwoLoadsShareOneCopy(t *testing.T) {
	path, _, _ := cudaWeightsExport(t)
	blob, err := os.Stat(filepath.Join(filepath.Dir(path), "weights.blob"))
	require.NoError(t, err)
	dev := CUDADevice(0)
	before, err := GetMemoryStats(dev)
	require.NoError(t, err)
	a, err := Load(path)
	require.NoError(t, err)
	one, err := GetMemoryStats(dev)
	require.NoError(t, err)
	b, err := Load(path)
	require.NoError(t, err)
	two, err := GetMemoryStats(dev)
	require.NoError(t, err)
	require.GreaterOrEqual(t, one.AllocatedBytes-before.AllocatedBytes, uint64(blob.Size()), "the first load uploads")
	require.Less(t, two.AllocatedBytes-one.AllocatedBytes, uint64(blob.Size()), "the second load shares")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	after, err := GetMemoryStats(dev)
	require.NoError(t, err)
	require.Equal(t, before.AllocatedBytes, after.AllocatedBytes, "freed with the last model")
}
