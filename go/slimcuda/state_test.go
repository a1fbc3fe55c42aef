// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The state of a model (state.go) with the CPU test models of models/testing/
// stateful_model.cc: each run adds x to a counter buffer (10 at load) and returns
// counter * scale + table[0] = (counter + x) * 2 + 1. csrc/model/state_test.cc is the C++
// side; decode_test.go the CUDA decoder.

func after(c, x float32) float32 { return (c+x)*2 + 1 }

func scalar(t *testing.T, v float32) *Tensor {
	t.Helper()
	x, err := NewTensor([]int64{1}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	require.NoError(t, CopyFromHost(x, []float32{v}))
	return x
}

func TestStatefulModelHasOneInstanceAndItsConstants(t *testing.T) {
	m, err := Load(testModel(t, "stateful"))
	require.NoError(t, err)
	defer m.Close()
	require.True(t, m.Stateful())
	require.Equal(t, 1, m.Instances())
	c := m.Constants()
	require.Len(t, c, 3)
	require.Equal(t, ConstantInfo{Name: "scale", FQN: "scale", Kind: ConstantParameter, DType: Float32,
		Visible: true, Sizes: []int64{1}, Bytes: 64}, c[0])
	require.True(t, c[1].State, "counter")
	require.True(t, c[2].State, "a package has no wrapper source: an unproven buffer is state")
	require.Equal(t, "buffer", c[1].Kind.String())
	c[0].Sizes[0] = 99 // a copy
	require.Equal(t, int64(1), m.Constants()[0].Sizes[0])

	_, err = Load(testModel(t, "stateful"), WithInstances(4))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Contains(t, err.Error(), "'counter'")

	plain, err := Load(testModel(t, "weights_pairs"), WithInstances(3))
	require.NoError(t, err)
	defer plain.Close()
	require.False(t, plain.Stateful())
	require.Equal(t, 3, plain.Instances())
	require.NoError(t, plain.ResetState(), "nothing to reset")
}

func TestStateIsOnePerLoadAndResettable(t *testing.T) {
	a, err := Load(testModel(t, "stateful"))
	require.NoError(t, err)
	defer a.Close()
	b, err := Load(testModel(t, "stateful"))
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, after(10, 1), runTestModel(t, a, 1))
	require.Equal(t, after(10, 4), runTestModel(t, b, 4))
	require.Equal(t, after(11, 1), runTestModel(t, a, 1))

	v := scalar(t, 0)
	defer v.Close()
	got := make([]float32, 1)
	require.NoError(t, a.ReadConstant("counter", v))
	require.NoError(t, CopyToHost(v, got))
	require.Equal(t, float32(12), got[0])

	require.NoError(t, a.ResetState())
	require.Equal(t, after(10, 1), runTestModel(t, a, 1), "the same answer again after a reset")
	require.Equal(t, after(14, 1), runTestModel(t, b, 1), "a's reset is a's")

	w := scalar(t, 50)
	defer w.Close()
	require.NoError(t, b.WriteConstant("counter", w))
	require.Equal(t, after(50, 1), runTestModel(t, b, 1))
}

func TestStateBadInput(t *testing.T) {
	m, err := Load(testModel(t, "stateful"))
	require.NoError(t, err)
	v := scalar(t, 3)
	defer v.Close()
	require.ErrorIs(t, m.WriteConstant("scale", v), ErrInvalidArgument, "a read-only weight")
	require.ErrorIs(t, m.WriteConstant("nope", v), ErrNotFound)
	require.ErrorIs(t, m.ReadConstant("", v), ErrNotFound)
	two, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer two.Close()
	require.ErrorIs(t, m.ReadConstant("counter", two), ErrInvalidArgument, "sizes differ")
	require.ErrorIs(t, m.WriteConstant("counter", nil), ErrInvalidArgument)
	require.NoError(t, m.ReadConstant("table", two))
	got := make([]float32, 2)
	require.NoError(t, CopyToHost(two, got))
	require.Equal(t, []float32{1, 3}, got)
	require.Equal(t, after(10, 1), runTestModel(t, m, 1), "failed calls changed nothing")
	closed := scalar(t, 1)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, m.WriteConstant("counter", closed), ErrInvalidState)
	require.NoError(t, m.Close())
	require.ErrorIs(t, m.ResetState(), ErrInvalidState)
	require.ErrorIs(t, m.ReadConstant("counter", v), ErrInvalidState)
	var nilModel *Model
	require.ErrorIs(t, nilModel.ResetState(), ErrInvalidArgument)
	require.False(t, nilModel.Stateful())
	require.Nil(t, nilModel.Constants())

	opaque, err := Load(testModel(t, "stateful_opaque"))
	require.NoError(t, err)
	defer opaque.Close()
	require.True(t, opaque.Stateful())
	require.ErrorIs(t, opaque.ResetState(), ErrNotSupported)
}

// Many goroutines on one stateful model: runs are one at a time, so every increment
// lands exactly once.
func TestStatefulRunsFromManyGoroutines(t *testing.T) {
	m, err := Load(testModel(t, "stateful"))
	require.NoError(t, err)
	defer m.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := runOnce(m, 1); err != nil {
					t.Error(err) // not require: FailNow must not be called off the test's goroutine
					return
				}
			}
		}()
	}
	wg.Wait()
	v := scalar(t, 0)
	defer v.Close()
	require.NoError(t, m.ReadConstant("counter", v))
	got := make([]float32, 1)
	require.NoError(t, CopyToHost(v, got))
	require.Equal(t, float32(10+8*25), got[0])
}

// Weights swapped while serving (StageWeights, SwapWeights, FreeInactiveWeights) with the
// CPU test model "swappable" (no state: y = counter * scale + table[0] = 10 * scale + 1):
// 8 goroutines run while the weights swap back and forth; every output is the old
// weights' or the new weights', never anything else.
func TestSwapWeightsWhileServing(t *testing.T) {
	m, err := Load(testModel(t, "swappable"), WithInstances(4))
	require.NoError(t, err)
	defer m.Close()
	require.False(t, m.Stateful())
	want := map[float32]bool{21: true, 31: true}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	bad := make(chan float32, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				y, err := runOnce(m, 0)
				if err != nil || !want[y] {
					if err != nil {
						t.Error(err)
					}
					bad <- y
					return
				}
			}
		}()
	}
	table, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer table.Close()
	require.NoError(t, CopyFromHost(table, []float32{1, 3}))
	counter := scalar(t, 10)
	defer counter.Close()
	for round := 0; round < 20; round++ {
		scale := scalar(t, []float32{3, 2}[round%2])
		require.NoError(t, m.StageWeights(map[string]*Tensor{"scale": scale, "counter": counter, "table": table}))
		require.NoError(t, scale.Close(), "the model has its own copy")
		require.NoError(t, m.SwapWeights())
		require.NoError(t, m.FreeInactiveWeights())
	}
	close(stop)
	wg.Wait()
	close(bad)
	for y := range bad {
		t.Errorf("a run gave %v: neither weights' answer", y)
	}
	require.Equal(t, float32(21), runTestModel(t, m, 0), "the last swap (scale 2) serves")

	// Bad sets: refused, the active weights untouched.
	two, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
	require.NoError(t, err)
	defer two.Close()
	wrongType, err := NewTensor([]int64{1}, Float64, Device{Type: CPU})
	require.NoError(t, err)
	defer wrongType.Close()
	scale := scalar(t, 5)
	defer scale.Close()
	for _, bad := range []map[string]*Tensor{
		{},
		{"scale": two},
		{"scale": wrongType},
		{"nope": scale},
		{"scale": scale, "counter": scale}, // counter [1] fits; table is missing
		{"scale": nil},
	} {
		err := m.StageWeights(bad)
		require.ErrorIs(t, err, ErrInvalidArgument, "%v", bad)
	}
	require.ErrorIs(t, m.SwapWeights(), ErrInvalidState, "nothing staged")
	require.Equal(t, float32(21), runTestModel(t, m, 0))
	require.NoError(t, m.StageWeights(map[string]*Tensor{"scale": scale, "counter": counter, "table": table}))
	require.ErrorIs(t, m.StageWeights(map[string]*Tensor{"scale": scale}), ErrInvalidState, "one staged at a time")
	require.NoError(t, m.SwapWeights())
	require.Equal(t, float32(51), runTestModel(t, m, 0), "scale 5")
	require.NoError(t, m.FreeInactiveWeights())
	require.NoError(t, m.Close())
	require.ErrorIs(t, m.StageWeights(map[string]*Tensor{"scale": scale}), ErrInvalidState, "closed")
	require.ErrorIs(t, m.SwapWeights(), ErrInvalidState)
}
