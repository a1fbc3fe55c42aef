// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/npy"
	"github.com/stretchr/testify/require"
)

func writeFloat32NPY(t *testing.T, path string, shape []int64, values []float64) {
	t.Helper()
	raw := make([]byte, 0, 4*len(values))
	for _, v := range values {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
	}
	var f bytes.Buffer
	require.NoError(t, npy.Write(&f, npy.Array{DType: npy.Float32, Shape: shape, Data: raw}))
	require.NoError(t, os.WriteFile(path, f.Bytes(), 0o644))
}

// The demo, run on its own inputs (README's main job), is checked against its exact outputs
// and says so; a reference it does not match fails the run with the first differing value.
func TestRunChecksTheDemoAgainstItsReference(t *testing.T) {
	refPath := fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json")
	t.Setenv("SLIMCUDA_DEMO_MODEL_JSON", refPath)
	t.Setenv("SLIMCUDA_DEMO_PACKAGE", demoPath(t))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "reference: all 32 values match demo_model.json (case run_cpu_batch_4)")

	out.Reset()
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", "-json"}, &out, &errOut), errOut.String())
	var s Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &s))
	require.NotNil(t, s.Reference)
	require.Equal(t, 32, s.Reference.Values)
	require.Equal(t, 0, s.Reference.Differ)

	// The same file with one expected value changed: the run must fail on it.
	data, err := os.ReadFile(refPath)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, c := range doc["cases"].([]any) {
		c := c.(map[string]any)
		if c["name"] == "run_cpu_batch_4" {
			want := c["expect_output"].([]any)
			want[5] = want[5].(float64) + 0.01
		}
	}
	bad, err := json.Marshal(doc)
	require.NoError(t, err)
	badPath := filepath.Join(t.TempDir(), "demo_model.json")
	require.NoError(t, os.WriteFile(badPath, bad, 0o644))
	t.Setenv("SLIMCUDA_DEMO_MODEL_JSON", badPath)
	out.Reset()
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-iterations", "0"}, &out, &errOut))
	require.Contains(t, errOut.String(), "1 of 32 values differ from the reference demo_model.json (case run_cpu_batch_4)")
	require.Contains(t, errOut.String(), "output 0 value 5 is")

	// A batch the reference has no case for runs unchecked, and says so.
	t.Setenv("SLIMCUDA_DEMO_MODEL_JSON", refPath)
	out.Reset()
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", "-batch", "3"}, &out, &errOut),
		errOut.String())
	require.Contains(t, out.String(), "reference: none for batch 3")
}

// -expect checks any model against .npy files (a directory or a list), within -atol/-rtol.
func TestRunExpect(t *testing.T) {
	in, want := fixture.DemoReference[float64](t,
		fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json"), "run_cpu_batch_1")
	dir := t.TempDir()
	writeFloat32NPY(t, filepath.Join(dir, "input_0.npy"), []int64{1, 16}, in)
	writeFloat32NPY(t, filepath.Join(dir, "expected_0.npy"), []int64{1, 8}, want)
	for _, expect := range []string{dir, filepath.Join(dir, "expected_0.npy")} {
		var out, errOut bytes.Buffer
		code := run([]string{"run", "-device", "cpu", "-iterations", "0", "-inputs", dir, "-expect", expect, demoPath(t)},
			&out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		require.Contains(t, out.String(), "reference: all 8 values match")
	}
	off := append([]float64(nil), want...)
	off[2] += 1e-3
	writeFloat32NPY(t, filepath.Join(dir, "expected_0.npy"), []int64{1, 8}, off)
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-iterations", "0", "-inputs", dir, "-expect", dir,
		demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "1 of 8 values differ")
	// Within a tolerance that covers the change, the same files match.
	errOut.Reset()
	out.Reset()
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", "-inputs", dir, "-expect", dir,
		"-atol", "2e-3", demoPath(t)}, &out, &errOut), errOut.String())

	for _, tc := range []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"-expect", "a.npy,b.npy"}, 1, "-expect names 2 file(s); the model has 1 output(s)"},
		{[]string{"-expect", filepath.Join(dir, "none.npy")}, 1, "no such file"},
		{[]string{"-expect", dir, "-atol", "-1"}, 2, "-atol and -rtol must be >= 0"},
	} {
		errOut.Reset()
		args := append([]string{"run", "-device", "cpu", "-iterations", "0", "-inputs", dir}, tc.args...)
		require.Equal(t, tc.code, run(append(args, demoPath(t)), &out, &errOut), strings.Join(tc.args, " "))
		require.Contains(t, errOut.String(), tc.message)
	}
	// An output of another size than the reference's is refused, not compared in part.
	writeFloat32NPY(t, filepath.Join(dir, "expected_0.npy"), []int64{1, 7}, want[:7])
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-iterations", "0", "-inputs", dir, "-expect", dir,
		demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "output 0 has 8 values; the reference")
}
