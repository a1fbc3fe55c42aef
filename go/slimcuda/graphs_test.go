// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CUDA graphs (WithCUDAGraphs): replays are bit-exact against normal runs from many
// goroutines on their own streams; bad modes are refused; CPU models ignore graphs.

func TestCUDAGraphModeIsChecked(t *testing.T) {
	_, err := Load(demoPackage(t), WithCUDAGraphs(GraphMode(3)))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Contains(t, err.Error(), "CUDA graph mode 3")
}

func TestCUDAGraphsOnACPUModelDoNothing(t *testing.T) {
	m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice), WithCUDAGraphs(GraphsStrict))
	require.NoError(t, err)
	_, err = runDemo(m, concurrentInput(1))
	require.NoError(t, err)
	s, err := m.GraphStats()
	require.NoError(t, err)
	require.Equal(t, GraphStats{}, s)
	require.NoError(t, m.Close())
	_, err = m.GraphStats()
	require.ErrorIs(t, err, ErrInvalidState)
}

func TestCUDAGraphReplaysFromManyGoroutinesAreBitExact(t *testing.T) {
	requireGPU(t)
	const goroutines, runs = 16, 200
	plain, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(0)))
	require.NoError(t, err)
	defer plain.Close()
	m, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(0)), WithInstances(4), WithCUDAGraphs(GraphsStrict))
	require.NoError(t, err)
	defer m.Close()
	want := make([][]float32, goroutines)
	for g := range want {
		want[g], err = runDemo(plain, concurrentInput(g))
		require.NoError(t, err)
	}
	require.NoError(t, runBitExact(m, goroutines, runs, want))
	s, err := m.GraphStats()
	require.NoError(t, err)
	require.Equal(t, uint64(goroutines*runs), s.Replays)
	require.GreaterOrEqual(t, s.Captures, uint64(1))
	require.LessOrEqual(t, s.Captures, uint64(4), "one layout: at most one graph per instance")
	require.Zero(t, s.Fallbacks)
}

func TestCUDAGraphStrictReportsABlockingStream(t *testing.T) {
	requireGPU(t)
	m, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(0)), WithCUDAGraphs(GraphsStrict))
	require.NoError(t, err)
	defer m.Close()
	s, err := NewStream() // synchronizes with the legacy default stream: not capturable
	require.NoError(t, err)
	defer s.Close()
	_, err = runDemo(m, concurrentInput(0), OnStream(s))
	require.ErrorIs(t, err, ErrNotSupported)
	require.True(t, errors.Is(err, ErrNotSupported))
	require.Contains(t, err.Error(), "non-blocking stream")
	// The model stays usable on a stream that can be captured.
	ns, err := NewStream(NonBlocking())
	require.NoError(t, err)
	defer ns.Close()
	_, err = runDemo(m, concurrentInput(0), OnStream(ns))
	require.NoError(t, err)
}

// BenchmarkGraphReplay times one caller's call (Run + Stream.Synchronize, one instance) with
// CUDA graphs off and on, per model: the demo package, or each zoo export directory in
// $SLIMCUDA_GRAPH_MODELS (a list like PATH: DIR/model.pt2, with the input sizes and dtypes of
// DIR's first case in name order, DIR/batch_*/inputs.json, as zoo_runner times). Inputs are
// zeros. Each sub-benchmark reports p50-µs; the speedup is graphs=false's over graphs=true's
// (docs/graphs.md). The two modes' last outputs must be equal, or the benchmark fails.
func BenchmarkGraphReplay(b *testing.B) {
	requireGPU(b)
	dirs := filepath.SplitList(os.Getenv("SLIMCUDA_GRAPH_MODELS"))
	if len(dirs) == 0 {
		dirs = []string{""}
	}
	for _, dir := range dirs {
		path, name, specs := demoPackage(b), "demo", []TensorSpec(nil)
		if dir != "" {
			path, name, specs = filepath.Join(dir, "model.pt2"), filepath.Base(dir), firstCaseInputs(b, dir)
		}
		var last [2][]float32
		var plain *Model
		for k, graphs := range []GraphMode{GraphsOff, GraphsStrict} {
			m, err := Load(path, LoadOnDevice(CUDADevice(0)), WithInstances(1), WithCUDAGraphs(graphs))
			if err != nil {
				b.Fatal(err)
			}
			if specs == nil {
				specs = m.Inputs()
			}
			b.Run(fmt.Sprintf("model=%s/graphs=%v", name, graphs != GraphsOff), func(b *testing.B) {
				last[k] = timeOneCaller(b, m, specs, 200)
			})
			if graphs == GraphsOff {
				plain = m
				continue
			}
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
		}
		if !slices.Equal(last[0], last[1]) {
			// A model whose own normal runs differ run to run (kernels that add in no fixed
			// order, e.g. some of cuDNN's transposed-convolution algorithms) cannot be held
			// to bits: its replay is held to the zoo's float32 tolerance instead.
			again := timeOneCaller(b, plain, specs, 0)
			if slices.Equal(again, last[0]) {
				b.Fatalf("%s: the replay's first output differs from the normal run's, which repeats bit for bit", name)
			}
			if i := firstFar(last[0], last[1], 1e-4, 1e-3); i >= 0 {
				b.Fatalf("%s: the replay's output %d is %v, the normal run's %v", name, i, last[1][i], last[0][i])
			}
			b.Logf("%s: its normal runs differ from each other in the last bits; the replay is within tolerance", name)
		}
		if err := plain.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// firstFar is the first index where got and want differ by more than atol + rtol·|want|
// (-1: none).
func firstFar(want, got []float32, rtol, atol float64) int {
	if len(want) != len(got) {
		return 0
	}
	for i := range want {
		if math.Abs(float64(got[i])-float64(want[i])) > atol+rtol*math.Abs(float64(want[i])) || math.IsNaN(float64(got[i])) != math.IsNaN(float64(want[i])) {
			return i
		}
	}
	return -1
}

// firstCaseInputs reads the input specs of DIR's first batch_*/inputs.json.
func firstCaseInputs(b *testing.B, dir string) []TensorSpec {
	cases, _ := filepath.Glob(filepath.Join(dir, "batch_*", "inputs.json"))
	if len(cases) == 0 {
		b.Fatalf("%s: no batch_*/inputs.json", dir)
	}
	sort.Strings(cases)
	data, err := os.ReadFile(cases[0])
	if err != nil {
		b.Fatal(err)
	}
	var raw []struct {
		DType string  `json:"dtype"`
		Sizes []int64 `json:"sizes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		b.Fatalf("%s: %v", cases[0], err)
	}
	specs := make([]TensorSpec, len(raw))
	for i, r := range raw {
		d, ok := DTypeByName(r.DType)
		if !ok {
			b.Fatalf("%s: input %d: dtype %q", cases[0], i, r.DType)
		}
		specs[i] = TensorSpec{DType: d, Sizes: r.Sizes}
	}
	return specs
}

// timeOneCaller makes `warmup` calls, then b.N timed ones on one non-blocking stream with
// zero inputs of `specs`; it reports the median call and returns the last call's first
// output as float32. b.N 0 (outside a sub-benchmark: b of the parent, warmup 0) makes one
// untimed call, for its output.
func timeOneCaller(b *testing.B, m *Model, specs []TensorSpec, warmup int) []float32 {
	s, err := NewStream(NonBlocking())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	inputs := make([]*Tensor, len(specs))
	for i, sp := range specs {
		if inputs[i], err = NewTensor(sp.Sizes, sp.DType, m.Device()); err != nil {
			b.Fatal(err)
		}
		defer inputs[i].Close()
		n := int64(1)
		for _, d := range sp.Sizes {
			n *= d
		}
		if err := CopyFromHost(inputs[i], make([]float32, n)); err != nil {
			b.Fatal(err)
		}
	}
	var out []*Tensor
	call := func() {
		for _, o := range out {
			o.Close()
		}
		if out, err = m.Run(inputs, OnStream(s)); err == nil {
			err = s.Synchronize()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < warmup; i++ {
		call()
	}
	if warmup == 0 {
		call()
		return firstOutput(b, out, s)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	return firstOutput(b, out, s)
}

// firstOutput reads out[0] as float32 (nil without outputs) and closes every output.
func firstOutput(b *testing.B, out []*Tensor, s *Stream) []float32 {
	defer func() {
		for _, o := range out {
			o.Close()
		}
	}()
	if len(out) == 0 {
		return nil
	}
	info, err := out[0].Info()
	if err != nil {
		b.Fatal(err)
	}
	got := make([]float32, info.Numel)
	if err := CopyToHost(out[0], got, OnStream(s)); err != nil {
		b.Fatal(err)
	}
	return got
}

// The steps of ExampleWithCUDAGraphs (which `go test` only compiles) on the demo model:
// TensorFrom and ToSlice on the run's non-blocking stream, one capture then replays, and
// the replays read what a run without graphs reads.
func TestExampleCUDAGraphs(t *testing.T) {
	requireGPU(t)
	plain, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(0)))
	require.NoError(t, err)
	defer plain.Close()
	want, err := runDemo(plain, concurrentInput(5))
	require.NoError(t, err)
	m, err := Load(demoPackage(t), LoadOnDevice(CUDADevice(0)), WithInstances(1), WithCUDAGraphs(GraphsOn))
	require.NoError(t, err)
	defer m.Close()
	stream, err := NewStream(NonBlocking())
	require.NoError(t, err)
	defer stream.Close()
	on := OnStream(stream)
	x, err := TensorFrom([]int64{2, 16}, concurrentInput(5), m.Device(), on)
	require.NoError(t, err)
	defer x.Close()
	for i := 0; i < 3; i++ {
		outs, err := m.Run([]*Tensor{x}, on)
		require.NoError(t, err)
		y, err := ToSlice[float32](outs[0], on)
		require.NoError(t, CloseAll(outs...))
		require.NoError(t, err)
		require.Equal(t, want, y, "run %d", i)
	}
	stats, err := m.GraphStats()
	require.NoError(t, err)
	require.Equal(t, GraphStats{Captures: 1, Replays: 3, Graphs: 1}, stats) // the capturing run replays too
}
