package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/slimcuda"
	"github.com/stretchr/testify/require"
)

func gpu(t *testing.T) bool {
	n, err := slimcuda.DeviceCount()
	require.NoError(t, err)
	if n == 0 && os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1" {
		t.Fatal("SLIMCUDA_REQUIRE_GPU=1 but no GPU")
	}
	return n > 0
}

func TestInfoReportsRuntimeAndDevices(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "CUDA runtime 13.")
	if gpu(t) {
		require.Contains(t, out.String(), "0: ")
		require.Contains(t, out.String(), "compute capability")
	} else {
		require.Contains(t, out.String(), "no GPU")
	}
}

func TestDefaultCommandIsInfo(t *testing.T) {
	var a, b, e bytes.Buffer
	require.Equal(t, 0, run(nil, &a, &e))
	require.Equal(t, 0, run([]string{"info"}, &b, &e))
	require.Equal(t, a.String(), b.String())
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"info", "extra"}, {"info", "-nosuchflag"}, {"run", "-device", "tpu"},
		{"run", "a", "b"}, {"pack"}, {"bench", "-iterations", "0"}, {"run", "-iterations", "-1"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(args, &out, &errOut), "%v: %s", args, errOut.String())
		require.Contains(t, errOut.String(), "usage: slimcuda", "%v", args)
	}
	for _, cmd := range []string{"info", "run", "pack", "bench"} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run([]string{cmd, "-h"}, &out, &errOut), cmd)
		require.Contains(t, errOut.String(), "usage: slimcuda "+cmd)
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--help"}, &out, &errOut))
	require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda"))
}

func demoPath(t *testing.T) string {
	return fixture.Runfile(t, "SLIMCUDA_DEMO_PACKAGE", "models/demo/demo.slimcuda")
}

// `slimcuda run` on the demo gives the reference outputs (testdata/demo_model.json,
// case run_cpu_batch_4: the same deterministic input), on the CPU and, with a GPU, on CUDA.
func TestRunDemoMatchesReference(t *testing.T) {
	data, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json"))
	require.NoError(t, err)
	var doc struct {
		Cases []struct {
			Name   string    `json:"name"`
			Expect []float64 `json:"expect_output"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	var want []float64
	for _, c := range doc.Cases {
		if c.Name == "run_cpu_batch_4" {
			want = c.Expect
		}
	}
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
			require.LessOrEqual(t, math.Abs(s.Outputs[0].Values[i]-want[i]), 1e-6, "%s output %d", device, i)
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
	require.Contains(t, errOut.String(), "slimcuda: loading")
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

func TestPackWritesALoadablePackage(t *testing.T) {
	dir := t.TempDir()
	// A real (test) model library: pack checks that a library is a well-formed x86-64 ELF.
	src, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_TEST_LIBRARY", "models/testing/libconstant_1.so"))
	require.NoError(t, err)
	so := filepath.Join(dir, "m.so")
	require.NoError(t, os.WriteFile(so, src, 0o644))
	manifest := filepath.Join(dir, "m.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"libraries": [{"device": "cpu", "so": "m.so", "methods": [
		{"name": "forward", "inputs": [{"name": "x", "dtype": "float32", "sizes": [2], "device": "cpu"}],
		 "outputs": [{"name": "y", "dtype": "float32", "sizes": [2], "device": "cpu"}]}]}]}`), 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"pack", manifest}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "wrote "+filepath.Join(dir, "m.slimcuda"))
	data, err := os.ReadFile(filepath.Join(dir, "m.slimcuda"))
	require.NoError(t, err)
	require.NoError(t, slimcuda.CheckPackage(data))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", "-o", filepath.Join(dir, "x.slimcuda"), filepath.Join(dir, "none.json")}, &out,
		&errOut))
	require.Contains(t, errOut.String(), "NotFound")
	// A library that is not an ELF file is refused at packing time, saying so.
	require.NoError(t, os.WriteFile(so, src[:64], 0o644))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", manifest}, &out, &errOut))
	require.Contains(t, errOut.String(), "past the end")
}

func TestBench(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"bench", "-iterations", "20", "-json"}, &out, &errOut)
	if !gpu(t) {
		require.Equal(t, 1, code)
		require.Contains(t, errOut.String(), "no GPU")
		return
	}
	require.Equal(t, 0, code, errOut.String())
	var rows []BenchRow
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 18)
	for _, r := range rows {
		require.Greater(t, r.RawMicros, 0.0, r.What)
		require.Greater(t, r.SlimcudaMicros, 0.0, r.What)
	}
}

// -inputs and -save: raw tensors in, raw float32 outputs out (what tools/aoti/run_zoo.sh uses).
func TestRunWithRawInputsAndSavedOutputs(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_DEMO_MODEL_JSON", "testdata/demo_model.json"))
	require.NoError(t, err)
	var doc struct {
		Cases []struct {
			Name   string    `json:"name"`
			Input  []float32 `json:"input"`
			Expect []float32 `json:"expect_output"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	var in, want []float32
	for _, c := range doc.Cases {
		if c.Name == "run_cpu_batch_1" {
			in, want = c.Input, c.Expect
		}
	}
	require.Len(t, in, 16)
	raw := make([]byte, 0, 64)
	for _, v := range in {
		b := math.Float32bits(v)
		raw = append(raw, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs.json"),
		[]byte(`[{"file": "x.bin", "dtype": "float32", "sizes": [1, 16]}]`), 0o644))
	var out, errOut bytes.Buffer
	code := run([]string{"run", "-device", "cpu", "-inputs", dir, "-save", filepath.Join(dir, "out"), demoPath(t)}, &out,
		&errOut)
	require.Equal(t, 0, code, errOut.String())
	got, err := os.ReadFile(filepath.Join(dir, "out", "output_0.bin"))
	require.NoError(t, err)
	require.Len(t, got, 32)
	for i := range want {
		v := math.Float32frombits(uint32(got[4*i]) | uint32(got[4*i+1])<<8 | uint32(got[4*i+2])<<16 | uint32(got[4*i+3])<<24)
		require.Equal(t, want[i], v, "output %d", i)
	}
	require.FileExists(t, filepath.Join(dir, "out", "outputs.json"))
	// A malformed inputs.json or a short file is an error, not a crash.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), raw[:10], 0o644))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "whole number")
}
