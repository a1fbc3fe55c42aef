// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"errors"
	"testing"

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
