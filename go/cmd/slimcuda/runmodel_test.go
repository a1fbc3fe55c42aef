// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/npy"
	"github.com/stretchr/testify/require"
)

// packDemoCPU packs the demo's CPU library with one input declared as inputJSON (a
// manifest TENSOR) and returns the package's path. The library loads without a GPU; the
// CLI must refuse the declared sizes before it runs anything.
func packDemoCPU(t *testing.T, inputJSON string) string {
	t.Helper()
	dir := t.TempDir()
	so, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_DEMO_CPU_SO", "models/demo/libdemo_cpu.so"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libdemo_cpu.so"), so, 0o644))
	manifest := filepath.Join(dir, "m.json")
	require.NoError(t, os.WriteFile(manifest, []byte(fmt.Sprintf(`{"libraries": [{"device": "cpu",
		"so": "libdemo_cpu.so", "methods": [{"name": "forward", "inputs": [%s],
		"outputs": [{"name": "y", "dtype": "float32", "sizes": [64, 8], "min_sizes": [1, 8],
		             "dynamism": "dynamic_bounded", "device": "cpu"}]}]}]}`, inputJSON)), 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"pack", manifest}, &out, &errOut), errOut.String())
	return filepath.Join(dir, "m.slimcuda")
}

// Sizes a package declares or -batch gives are checked before anything is allocated: a bad
// flag value exits 2, a package whose inputs the CLI cannot build exits 1, each with a
// message saying why, never a panic or an out-of-memory crash.
func TestRunRefusesSizesItCannotBuild(t *testing.T) {
	const (
		unbounded = `{"name": "x", "dtype": "float32", "sizes": [1, 16], "dynamism": "dynamic_unbounded", "device": "cpu"}`
		huge      = `{"name": "x", "dtype": "float32", "sizes": [1073741824, 1073741824], "device": "cpu"}`
	)
	demo := demoPath(t)
	for _, tc := range []struct {
		description string
		pkg         func(t *testing.T) string
		args        []string
		code        int
		message     string
	}{
		{"static input of 2^60 elements", func(t *testing.T) string { return packDemoCPU(t, huge) }, nil, 1,
			"input x: [1073741824 1073741824] float32 has more than"},
		{"batch overflows int64 on an unbounded input", func(t *testing.T) string { return packDemoCPU(t, unbounded) },
			[]string{"-batch", "9223372036854775807"}, 2, "-batch 9223372036854775807: input x"},
		{"batch too large for host memory", func(t *testing.T) string { return packDemoCPU(t, unbounded) },
			[]string{"-batch", "1000000000"}, 2, "-batch 1000000000: input x"},
		{"negative batch", func(*testing.T) string { return demo }, []string{"-batch", "-1"}, 2, "-batch must be >= 1"},
		{"zero batch", func(*testing.T) string { return demo }, []string{"-batch", "0"}, 2, "-batch must be >= 1"},
		{"batch above the bound", func(*testing.T) string { return demo }, []string{"-batch", "1000000"}, 2,
			"-batch 1000000: input x allows a batch of 1 to 64"},
		{"batch at the bound", func(*testing.T) string { return demo }, []string{"-batch", "64"}, 0, ""},
		{"batch on an unbounded input", func(t *testing.T) string { return packDemoCPU(t, unbounded) },
			[]string{"-batch", "3"}, 0, ""},
	} {
		t.Run(tc.description, func(t *testing.T) {
			args := append(append([]string{"run", "-device", "cpu", "-iterations", "0"}, tc.args...), tc.pkg(t))
			var out, errOut bytes.Buffer
			require.Equal(t, tc.code, run(args, &out, &errOut), errOut.String())
			require.Contains(t, errOut.String(), tc.message)
		})
	}
}
func TestInputSizes(t *testing.T) {
	for _, tc := range []struct {
		description string
		sizes       []int64
		numel       int64
		ok          bool
	}{
		{"scalar", nil, 1, true},
		{"empty", []int64{0, 1 << 62}, 0, true},
		{"at the cap", []int64{maxInputElements}, maxInputElements, true},
		{"above the cap", []int64{maxInputElements + 1}, 0, false},
		{"product overflows", []int64{1 << 32, 1 << 32}, 0, false},
		{"negative", []int64{-1, 4}, 0, false},
	} {
		t.Run(tc.description, func(t *testing.T) {
			n, err := checkedNumel(tc.sizes)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.numel, n)
		})
	}
}

func demoPath(t *testing.T) string {
	return fixture.Runfile(t, "SLIMCUDA_DEMO_PACKAGE", "models/demo/demo.slimcuda")
}

// `slimcuda run` on the demo gives the reference outputs (testdata/demo_model.json,
// case run_cpu_batch_4: the same deterministic input), on the CPU and, with a GPU, on CUDA.
func TestRunDemoMatchesReference(t *testing.T) {
	_, want := fixture.DemoReference[float64](t,
		fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json"), "run_cpu_batch_4")
	require.Len(t, want, 32)
	devices := []string{"cpu"}
	if gpu(t) {
		devices = append(devices, "cuda", "auto")
	}
	for _, device := range devices {
		var out, errOut bytes.Buffer
		code := run([]string{"run", "-json", "-values", "-iterations", "2", "-device", device, demoPath(t)}, &out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		var s Summary
		require.NoError(t, json.Unmarshal(out.Bytes(), &s))
		require.Len(t, s.Outputs, 1)
		require.Equal(t, []int64{4, 8}, s.Outputs[0].Sizes)
		require.Equal(t, "float32", s.Outputs[0].DType)
		for i := range want {
			require.LessOrEqual(t, math.Abs(float64(s.Outputs[0].Values[i])-want[i]), 1e-6, "%s output %d", device, i)
		}
		if device == "cpu" {
			require.Equal(t, "cpu", s.Device)
		} else {
			require.Equal(t, "cuda:0", s.Device)
		}
	}
}

func TestRunWithoutArgumentsUsesTheDemo(t *testing.T) {
	t.Setenv("SLIMCUDA_DEMO_PACKAGE", demoPath(t))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "output y: float32 [4 8]")
}

func TestRunRejectsBadPackages(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.slimcuda")
	require.NoError(t, os.WriteFile(bad, []byte("definitely not a package"), 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", bad}, &out, &errOut))
	require.Contains(t, errOut.String(), "InvalidProgram")
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", filepath.Join(t.TempDir(), "missing.slimcuda")}, &out, &errOut))
	require.Contains(t, errOut.String(), "NotFound")
}

func pt2Fixture(t *testing.T, name string) string {
	return filepath.Join(filepath.Dir(fixture.Runfile(t, "SLIMCUDA_PT2_JSON", "testdata/pt2.json")), "pt2", name)
}

// writeNPY writes values as a float32 .npy file of shape sizes in dir and returns its path.
func writeNPY(t *testing.T, dir, name string, sizes []int64, values []float32) string {
	t.Helper()
	raw := make([]byte, 0, 4*len(values))
	for _, v := range values {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: sizes, Data: raw}))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, file.Bytes(), 0o644))
	return p
}

// runLinearPt2 runs `slimcuda run -json` on one of the CPU linear exports (the same model
// with its weights in the library or in the archive) and checks what both must give: inputs
// built from the archive's specs ([2, 4] and [2, 3] float32), a [2, 3] output; and on the
// inputs of testdata/pt2/real_cpu_linear.ref.json, PyTorch's eager output stored there.
func runLinearPt2(t *testing.T, name, iterations string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run([]string{"run", "-json", "-iterations", iterations, pt2Fixture(t, name)}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var s Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &s))
	require.Equal(t, "cpu", s.Device)
	require.Len(t, s.Inputs, 2)
	require.Equal(t, []int64{2, 4}, s.Inputs[0].Sizes)
	require.Equal(t, []int64{2, 3}, s.Inputs[1].Sizes)
	require.Len(t, s.Outputs, 1)
	require.Equal(t, []int64{2, 3}, s.Outputs[0].Sizes)

	raw, err := os.ReadFile(pt2Fixture(t, "real_cpu_linear.ref.json"))
	require.NoError(t, err)
	var ref struct{ X, Z, Y []float32 }
	require.NoError(t, json.Unmarshal(raw, &ref))
	require.Len(t, ref.Y, 6)
	dir := t.TempDir()
	inputs := writeNPY(t, dir, "x.npy", []int64{2, 4}, ref.X) + "," + writeNPY(t, dir, "z.npy", []int64{2, 3}, ref.Z)
	out.Reset()
	code = run([]string{"run", "-json", "-values", "-iterations", iterations, "-inputs", inputs, pt2Fixture(t, name)},
		&out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	s = Summary{}
	require.NoError(t, json.Unmarshal(out.Bytes(), &s))
	require.Len(t, s.Outputs, 1)
	require.Len(t, s.Outputs[0].Values, len(ref.Y))
	for i, want := range ref.Y {
		require.InDelta(t, want, float64(s.Outputs[0].Values[i]), 1e-5, "%s output %d", name, i)
	}
}

// `slimcuda run model.pt2`: the real CPU export runs on inputs the CLI builds from the
// archive's input specs, and on given inputs gives PyTorch's output.
func TestRunPt2(t *testing.T) {
	runLinearPt2(t, "real_cpu_linear.pt2", "1")
	var out, errOut bytes.Buffer
	var s Summary

	// Several models: the name chooses; none given is the library's InvalidArgument.
	out.Reset()
	require.Equal(t, 1, run([]string{"run", pt2Fixture(t, "two_models.pt2")}, &out, &errOut))
	require.Contains(t, errOut.String(), "holds 2 models ('a', 'b')")
	errOut.Reset()
	require.Equal(t, 0, run([]string{"run", "-model-name", "b", "-json", "-values", pt2Fixture(t, "two_models.pt2")},
		&out, &errOut), errOut.String())
	require.NoError(t, json.Unmarshal(out.Bytes(), &s))
	require.Equal(t, float64(s.Inputs[0].Sum)+1, float64(s.Outputs[0].Values[0]), "constant_1: y = x + 1")

	// Unknown input specs: the CLI cannot build inputs and says how to give them.
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", pt2Fixture(t, "valid_no_source.pt2")}, &out, &errOut))
	require.Contains(t, errOut.String(), "states no dtype or shape")
	require.Contains(t, errOut.String(), "-inputs")
}

// `slimcuda run model.pt2` on an export whose weights are in the archive (binary_blob):
// the same model as real_cpu_linear.pt2, the same specs; an export without its weights is
// refused with the library's reason.
func TestRunPt2WithWeightsInTheArchive(t *testing.T) {
	runLinearPt2(t, "weights_blob_linear.pt2", "2")
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", pt2Fixture(t, "no_weights_linear.pt2")}, &out, &errOut))
	require.Contains(t, errOut.String(), "the archive holds no weights for constant 'linear_weight'")
}
