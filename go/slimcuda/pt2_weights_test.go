// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

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
		if os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1" {
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
