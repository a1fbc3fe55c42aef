// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

// Real CPU exports from testdata/cpu_zoo.json loaded from their .pt2 on the CPU and compared
// with eager PyTorch (csrc/c_api/cpu_zoo_test.cc runs the same cases).

type zooMeta struct {
	Inputs    []json.RawMessage `json:"inputs"`
	Outputs   []json.RawMessage `json:"outputs"`
	Tolerance struct {
		Atol float64 `json:"atol"`
		Rtol float64 `json:"rtol"`
	} `json:"tolerance"`
	Cases []struct {
		Dir string `json:"dir"`
	} `json:"cases"`
}

type zooFile struct {
	File        string  `json:"file"`
	Float32File string  `json:"float32_file"`
	DType       string  `json:"dtype"`
	Sizes       []int64 `json:"sizes"`
}

func readZooJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v))
}

func zooDir(t *testing.T, c fixture.Case) string {
	var dir string
	c.Get(t, "dir", &dir)
	return fx.Path(t, "cpu_zoo.json", dir)
}

// zooInputs reads a case's inputs as CPU tensors; patch, when non-nil, sets element
// patch[1] of input patch[0] (int64) to patch[2].
func zooInputs(t *testing.T, caseDir string, patch []int64) []*Tensor {
	var specs []zooFile
	readZooJSON(t, filepath.Join(caseDir, "inputs.json"), &specs)
	var out []*Tensor
	for i, s := range specs {
		raw, err := os.ReadFile(filepath.Join(caseDir, s.File))
		require.NoError(t, err)
		var x *Tensor
		switch s.DType {
		case "float32":
			v := make([]float32, len(raw)/4)
			for j := range v {
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
			x, err = NewTensor(s.Sizes, Float32, CPUDevice)
			require.NoError(t, err)
			require.NoError(t, CopyFromHost(x, v))
		case "int64":
			v := make([]int64, len(raw)/8)
			for j := range v {
				v[j] = int64(binary.LittleEndian.Uint64(raw[8*j:]))
			}
			if patch != nil && patch[0] == int64(i) {
				v[patch[1]] = patch[2]
			}
			x, err = NewTensor(s.Sizes, Int64, CPUDevice)
			require.NoError(t, err)
			require.NoError(t, CopyFromHost(x, v))
		default:
			t.Fatalf("input %d: unexpected dtype %s", i, s.DType)
		}
		t.Cleanup(func() { x.Close() })
		out = append(out, x)
	}
	return out
}

func requireZooOutputs(t *testing.T, caseDir string, got []*Tensor, atol, rtol float64) {
	var specs []zooFile
	readZooJSON(t, filepath.Join(caseDir, "expected.json"), &specs)
	require.Len(t, got, len(specs))
	for o, s := range specs {
		raw, err := os.ReadFile(filepath.Join(caseDir, s.Float32File))
		require.NoError(t, err)
		info, err := got[o].Info()
		require.NoError(t, err)
		require.Equal(t, s.Sizes, info.Sizes, "output %d", o)
		v := make([]float32, len(raw)/4)
		require.NoError(t, CopyToHost(got[o], v))
		for j := range v {
			want := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])))
			if !(math.Abs(float64(v[j])-want) <= atol+rtol*math.Abs(want)) {
				t.Fatalf("output %d element %d = %v, want %v", o, j, v[j], want)
			}
		}
	}
}

func TestCPUZooMatchesEager(t *testing.T) {
	for _, c := range fx.Cases(t, "cpu_zoo.json", "run") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dir := zooDir(t, c)
			var meta zooMeta
			readZooJSON(t, filepath.Join(dir, "meta.json"), &meta)
			m, err := Load(filepath.Join(dir, "model.pt2"), LoadOnDevice(CPUDevice))
			require.NoError(t, err)
			defer m.Close()
			for _, mc := range meta.Cases {
				caseDir := filepath.Join(dir, mc.Dir)
				in := zooInputs(t, caseDir, nil)
				for round := 0; round < 2; round++ { // a model with state gives the same again
					out, err := m.Run(in)
					require.NoError(t, err, "%s run %d", mc.Dir, round)
					requireZooOutputs(t, caseDir, out, meta.Tolerance.Atol, meta.Tolerance.Rtol)
					_ = CloseAll(out...)
				}
			}
		})
	}
}

func TestCPUZooBadInputFailsTheRun(t *testing.T) {
	for _, c := range fx.Cases(t, "cpu_zoo.json", "run_error") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			dir := zooDir(t, c)
			var meta zooMeta
			readZooJSON(t, filepath.Join(dir, "meta.json"), &meta)
			var input, element, value int64
			var expect, message string
			c.Get(t, "input", &input)
			c.Get(t, "element", &element)
			c.Get(t, "value", &value)
			c.Get(t, "expect", &expect)
			c.Get(t, "message", &message)
			m, err := Load(filepath.Join(dir, "model.pt2"), LoadOnDevice(CPUDevice))
			require.NoError(t, err)
			defer m.Close()
			caseDir := filepath.Join(dir, meta.Cases[0].Dir)
			out, err := m.Run(zooInputs(t, caseDir, []int64{input, element, value}))
			require.Error(t, err)
			require.Nil(t, out)
			require.Equal(t, "InvalidArgument", expect)
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.True(t, strings.Contains(err.Error(), message), err.Error())
			out, err = m.Run(zooInputs(t, caseDir, nil)) // good input still runs
			require.NoError(t, err)
			_ = CloseAll(out...)
		})
	}
}
