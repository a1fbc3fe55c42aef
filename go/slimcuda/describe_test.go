// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	realExport := pt2Path(t, "real_cpu_linear.pt2")
	data, err := os.ReadFile(realExport)
	require.NoError(t, err)
	for _, tc := range []struct {
		description string
		describe    func() (*Description, error)
	}{
		{"a file", func() (*Description, error) { return Describe(realExport) }},
		{"bytes", func() (*Description, error) { return DescribeBytes(data) }},
	} {
		t.Run(tc.description, func(t *testing.T) {
			d, err := tc.describe()
			require.NoError(t, err)
			require.Equal(t, CPU, d.Device)
			require.Equal(t, []DeviceType{CPU}, d.Devices)
			require.Len(t, d.Inputs, 2)
			require.Equal(t, TensorSpec{Name: "arg2_1", DType: Float32, Sizes: []int64{2, 4}, Dynamism: Static,
				Device: Device{Type: CPU, Index: -1}}, d.Inputs[0])
			// From run_impl's allocation of the output's buffer.
			require.Equal(t, []TensorSpec{{Name: "output0", DType: Float32, Sizes: []int64{2, 3}, Dynamism: Static,
				Device: Device{Type: CPU, Index: -1}}}, d.Outputs)
		})
	}
}

func TestDescribeACudaPt2WithoutLoadingIt(t *testing.T) {
	d, err := Describe(fixture.Runfile(t, "SLIMCUDA_DEMO_CUDA_PT2", "models/demo/demo_cuda.pt2"))
	require.NoError(t, err, "no GPU is needed")
	require.Equal(t, CUDA, d.Device)
	require.Equal(t, DynamicBounded, d.Inputs[0].Dynamism)
	require.Equal(t, []int64{64, 16}, d.Inputs[0].Sizes)
	require.Equal(t, UnknownSpec, d.Outputs[0].Dynamism, "its sizes are symbolic")
	require.Equal(t, "unknown", d.Outputs[0].DType.String(), "never DType(-1)")
}

func TestDescribeAPackage(t *testing.T) {
	d, err := Describe(demoPackage(t), LoadOnDevice(CPUDevice))
	require.NoError(t, err)
	require.Equal(t, CPU, d.Device)
	require.ElementsMatch(t, []DeviceType{CPU, CUDA}, d.Devices)
	require.Equal(t, "y", d.Outputs[0].Name)
	require.Equal(t, []int64{64, 8}, d.Outputs[0].Sizes)
}

func TestDescribeErrors(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("hello\n"), 0o644))
	for _, tc := range []struct {
		description string
		path        string
		opts        []LoadOption
		code        ErrorCode
		message     string
	}{
		{"a text file", text, nil, ErrInvalidProgram, "notes.txt is not a model file"},
		{"no wrapper source", pt2Path(t, "valid_no_source.pt2"), nil, ErrNotSupported, "no wrapper source"},
		{"another device", pt2Path(t, "real_cpu_linear.pt2"), []LoadOption{LoadOnDevice(CurrentCUDA)}, ErrNotSupported,
			"compiled for cpu"},
		{"bad options", text, []LoadOption{WithInstances(-1)}, ErrInvalidArgument, "instances"},
		{"no file", filepath.Join(t.TempDir(), "absent.pt2"), nil, ErrNotFound, "absent.pt2"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			d, err := Describe(tc.path, tc.opts...)
			require.Nil(t, d)
			require.ErrorIs(t, err, tc.code)
			require.ErrorContains(t, err, tc.message)
		})
	}
	_, err := Describe(filepath.Join(t.TempDir(), "absent.pt2"))
	require.True(t, errors.Is(err, fs.ErrNotExist))
}

// A .pt2's output is unknown until the first run returns it, then observed: its dtype and
// that run's sizes.
func TestOutputsObservedAfterTheFirstRun(t *testing.T) {
	m, err := Load(pt2Path(t, "valid.pt2"))
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, UnknownSpec, m.Outputs()[0].Dynamism)
	require.Equal(t, "unknown", m.Outputs()[0].DType.String())
	runOne(t, m, 1)
	out := m.Outputs()
	require.Equal(t, ObservedSpec, out[0].Dynamism)
	require.Equal(t, "observed", out[0].Dynamism.String())
	require.Equal(t, Float32, out[0].DType)
	require.Equal(t, []int64{1}, out[0].Sizes)
	out[0].Sizes[0] = 99
	require.Equal(t, []int64{1}, m.Outputs()[0].Sizes, "a copy")
}
