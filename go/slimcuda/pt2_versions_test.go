// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"fmt"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// .pt2 exports from each supported PyTorch version, from testdata/pt2_versions.json
// (csrc/c_api/pt2_versions_test.cc runs the same cases): each loads, describes its inputs
// as the case states, runs to eager PyTorch's outputs and refuses an input one past a
// stated size or bound; the refusal cases fail with their code and message.

type versionTensor struct {
	Sizes []int64
	Data  []float32
}

type versionSpec struct {
	DType    string
	Sizes    []int64
	MinSizes []int64 `json:"min_sizes"`
	Dynamism string
	Device   string
}

type versionRun struct {
	Inputs, Outputs []versionTensor
}

func versionTensorOf(t *testing.T, sizes []int64, data []float32) *Tensor {
	t.Helper()
	x, err := NewTensor(sizes, Float32, CPUDevice)
	require.NoError(t, err)
	n := int64(1)
	for _, d := range sizes {
		n *= d
	}
	if data == nil {
		data = make([]float32, n)
	}
	require.Len(t, data, int(n))
	if n > 0 {
		require.NoError(t, CopyFromHost(x, data))
	}
	return x
}

func runVersion(t *testing.T, m *Model, run versionRun, tolerance float64) {
	t.Helper()
	var in []*Tensor
	defer func() { _ = CloseAll(in...) }()
	for _, x := range run.Inputs {
		in = append(in, versionTensorOf(t, x.Sizes, x.Data))
	}
	out, err := m.Run(in)
	require.NoError(t, err)
	defer func() { _ = CloseAll(out...) }()
	require.Len(t, out, len(run.Outputs))
	for k, want := range run.Outputs {
		info, err := out[k].Info()
		require.NoError(t, err)
		require.Equal(t, want.Sizes, info.Sizes, "output %d", k)
		y := make([]float32, len(want.Data))
		require.NoError(t, CopyToHost(out[k], y))
		require.InDeltaSlice(t, want.Data, y, tolerance, "output %d", k)
	}
}

// Sizes one past each stated size or bound, and one below a dynamic minimum.
func outsideSpec(spec versionSpec, base []int64) [][]int64 {
	var wrong [][]int64
	for d := range spec.Sizes {
		w := append([]int64(nil), base...)
		w[d] = spec.Sizes[d] + 1
		wrong = append(wrong, w)
		if spec.Dynamism == "dynamic_bounded" && spec.MinSizes[d] > 0 {
			w = append([]int64(nil), base...)
			w[d] = spec.MinSizes[d] - 1
			wrong = append(wrong, w)
		}
	}
	return wrong
}

func checkVersionCase(t *testing.T, c fixture.Case) {
	var file string
	var specs []versionSpec
	var runs []versionRun
	var tolerance float64
	c.Get(t, "file", &file)
	c.Get(t, "inputs", &specs)
	c.Get(t, "runs", &runs)
	c.Get(t, "tolerance", &tolerance)
	m, err := Load(fx.Path(t, "pt2_versions.json", file))
	require.NoError(t, err)
	defer m.Close()
	inputs := m.Inputs()
	require.Len(t, inputs, len(specs))
	require.Len(t, m.Outputs(), len(runs[0].Outputs))
	for i, s := range specs {
		require.Equal(t, "float32", s.DType)
		require.Equal(t, "cpu", s.Device)
		require.Equal(t, Float32, inputs[i].DType, "input %d", i)
		require.Equal(t, s.Sizes, inputs[i].Sizes, "input %d", i)
		require.Equal(t, CPUDevice.Type, inputs[i].Device.Type, "input %d", i)
		want := Static
		if s.Dynamism == "dynamic_bounded" {
			want = DynamicBounded
		}
		require.Equal(t, want, inputs[i].Dynamism, "input %d", i)
	}
	for _, run := range runs {
		runVersion(t, m, run, tolerance)
	}
	for i, s := range specs {
		for _, w := range outsideSpec(s, runs[0].Inputs[i].Sizes) {
			var in []*Tensor
			for j, x := range runs[0].Inputs {
				sizes := x.Sizes
				if j == i {
					sizes = w
				}
				in = append(in, versionTensorOf(t, sizes, nil))
			}
			out, err := m.Run(in)
			_ = CloseAll(in...)
			require.ErrorIs(t, err, ErrInvalidArgument, fmt.Sprintf("input %d of %v", i, w))
			require.Nil(t, out)
		}
	}
}

func TestPt2VersionsLoadDescribeAndRun(t *testing.T) {
	for _, c := range fx.Cases(t, "pt2_versions.json", "run") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			checkVersionCase(t, c)
		})
	}
}

func TestPt2NewerVersionsAreRefusedByName(t *testing.T) {
	for _, c := range fx.Cases(t, "pt2_versions.json", "load") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var file string
			c.Get(t, "file", &file)
			m, err := Load(fx.Path(t, "pt2_versions.json", file))
			expectCode(t, c, err)
			require.Nil(t, m)
		})
	}
}
