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
	"github.com/slimcuda/slimcuda/go/internal/npy"
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

// Bad usage exits 2 with a message on stderr that says what is wrong.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		description string
		args        []string
		message     string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"extra argument", []string{"info", "a.pt2", "extra"}, `unexpected argument "extra" after a.pt2`},
		{"bench-load without a model", []string{"bench-load"}, "missing MODEL"},
		{"bench-load n", []string{"bench-load", "-n", "0", "m.pt2"}, "-n must be >= 1"},
		{"unknown flag", []string{"info", "-nosuchflag"}, "flag provided but not defined: -nosuchflag"},
		{"bad flag value", []string{"run", "-device", "tpu"}, `-device "tpu": want auto, cpu or cuda`},
		{"two packages", []string{"run", "a", "b"}, `unexpected argument "b" after a`},
		{"flag after the package", []string{"run", "my.slimcuda", "-json"}, `flag -json after the argument "my.slimcuda": flags go first`},
		{"flag after the manifest", []string{"pack", "m.json", "-o", "x"}, `flag -o after the argument "m.json"`},
		{"no manifest", []string{"pack"}, "missing MANIFEST"},
		{"-values without -json", []string{"run", "-values"}, "-values needs -json"},
		{"bench iterations", []string{"bench", "-iterations", "0"}, "-iterations must be positive"},
		{"run iterations", []string{"run", "-iterations", "-1"}, "-iterations must be >= 0"},
		{"help of an unknown command", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"info -device without a model", []string{"info", "-device", "cpu"}, "-device needs a MODEL"},
		{"info -model-name without a model", []string{"info", "-model-name", "m"}, "-model-name needs a MODEL"},
		{"info bad -device", []string{"info", "-device", "tpu", "m.pt2"}, `-device "tpu": want auto, cpu or cuda`},
		{"bench-load bad -device", []string{"bench-load", "-device", "tpu", "m.pt2"}, `-device "tpu"`},
	} {
		t.Run(tc.description, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 2, run(tc.args, &out, &errOut), "%v: %s", tc.args, errOut.String())
			require.Contains(t, errOut.String(), tc.message)
			require.Empty(t, out.String())
		})
	}
}

// Help is output asked for: stdout, exit status 0, for -h, --help and `help COMMAND` alike,
// for every command.
func TestHelpGoesToStdout(t *testing.T) {
	require.Len(t, commands, 5)
	for cmd := range commands {
		for _, args := range [][]string{{cmd, "-h"}, {cmd, "--help"}, {"help", cmd}} {
			var out, errOut bytes.Buffer
			require.Equal(t, 0, run(args, &out, &errOut), "%v", args)
			require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda "+cmd), "%v: %q", args, out.String())
			require.Empty(t, errOut.String(), "%v", args)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errOut))
		require.True(t, strings.HasPrefix(out.String(), "usage: slimcuda"))
		require.Contains(t, out.String(), "Exit status: 0 success, 1 failure, 2 bad usage.")
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"help", "run"}, &out, &errOut))
	require.Contains(t, out.String(), "-inputs")
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errOut))
		require.Equal(t, "slimcuda "+slimcuda.Version()+" (libslimcuda "+slimcuda.Version()+")\n", out.String())
	}
}

func TestInfoJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info", "-json"}, &out, &errOut), errOut.String())
	var in Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &in))
	require.Equal(t, slimcuda.Version(), in.Version)
	require.True(t, strings.HasPrefix(in.Runtime, "13."), in.Runtime)
	require.NotNil(t, in.Devices)
	if !gpu(t) {
		require.Empty(t, in.Devices)
	}
}

// -json stays JSON when values are not finite: NaN and infinities become strings.
func TestJSONFloatsStayValidJSON(t *testing.T) {
	data, err := json.Marshal(TensorSummary{Min: jsonFloat(math.Inf(-1)), Max: jsonFloat(math.Inf(1)),
		Sum: jsonFloat(math.NaN()), Values: jsonFloats([]float64{1.5, math.NaN()})})
	require.NoError(t, err)
	require.Contains(t, string(data), `"min":"-Inf","max":"+Inf","sum":"NaN","values":[1.5,"NaN"]`)
	var back TensorSummary
	require.NoError(t, json.Unmarshal(data, &back))
	require.True(t, math.IsInf(float64(back.Min), -1))
	require.True(t, math.IsNaN(float64(back.Values[1])))
}

// Progress lines are for people at a terminal: none on a pipe, a file or a buffer.
func TestNoProgressOffATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, isTerminal(f))
	require.False(t, isTerminal(&bytes.Buffer{}))
	progress(f)("loading %s", "x")
	st, err := f.Stat()
	require.NoError(t, err)
	require.Zero(t, st.Size())
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", demoPath(t)}, &out, &errOut))
	require.Empty(t, errOut.String())
}

// Under `bazel run`, relative paths are the user's ($BUILD_WORKING_DIRECTORY), for reading
// (PACKAGE, MANIFEST, -inputs) and for writing (-o, -save).
func TestRelativePathsAreTheUsersUnderBazelRun(t *testing.T) {
	user := t.TempDir()
	demo, err := os.ReadFile(demoPath(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(user, "my.slimcuda"), demo, 0o644))
	t.Setenv("BUILD_WORKING_DIRECTORY", user)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"run", "-device", "cpu", "-iterations", "0", "-save", "out", "my.slimcuda"}, &out,
		&errOut), errOut.String())
	require.Contains(t, out.String(), filepath.Join(user, "my.slimcuda"))
	require.FileExists(t, filepath.Join(user, "out", "output_0.npy"))
	require.Equal(t, filepath.Join(user, "x"), userPath("x"))
	require.Equal(t, "/abs/x", userPath("/abs/x"))
}

// The demo is found in runfiles under either main-repository name, by manifest or tree.
func TestDemoFoundInRunfiles(t *testing.T) {
	for _, repo := range []string{"_main", "slimcuda"} {
		t.Run(repo, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, repo, demoRunfile)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
			t.Setenv("SLIMCUDA_DEMO_PACKAGE", "")
			t.Setenv("RUNFILES_MANIFEST_FILE", "")
			t.Setenv("RUNFILES_DIR", dir)
			got, err := demoPackage()
			require.NoError(t, err)
			require.Equal(t, p, got)
			manifest := filepath.Join(t.TempDir(), "MANIFEST")
			require.NoError(t, os.WriteFile(manifest, []byte(repo+"/other /x\n"+repo+"/"+demoRunfile+" /elsewhere/demo\n"), 0o644))
			t.Setenv("RUNFILES_MANIFEST_FILE", manifest)
			got, err = demoPackage()
			require.NoError(t, err)
			require.Equal(t, "/elsewhere/demo", got)
		})
	}
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

// -inputs and -save: .npy tensors in, .npy outputs (in their own dtype) out.
func TestRunWithNPYInputsAndSavedOutputs(t *testing.T) {
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
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: []int64{1, 16}, Data: raw}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes(), 0o644))
	for _, inputs := range []string{dir, filepath.Join(dir, "input_0.npy")} { // a directory, or a list of files
		var out, errOut bytes.Buffer
		code := run([]string{"run", "-device", "cpu", "-inputs", inputs, "-save", filepath.Join(dir, "out"), demoPath(t)},
			&out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		f, err := os.Open(filepath.Join(dir, "out", "output_0.npy"))
		require.NoError(t, err)
		got, err := npy.Read(f, 1<<20)
		f.Close()
		require.NoError(t, err)
		require.Equal(t, npy.Float32, got.DType)
		require.Equal(t, []int64{1, 8}, got.Shape)
		for i := range want {
			require.Equal(t, want[i], math.Float32frombits(binary.LittleEndian.Uint32(got.Data[4*i:])), "output %d", i)
		}
	}
	// A truncated file, a wrong dtype for the model, or a missing file is an error, not a crash.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes()[:file.Len()-3], 0o644))
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "fewer in the file")
	errOut.Reset()
	file.Reset()
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Int64, Shape: []int64{1, 16}, Data: make([]byte, 128)}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input_0.npy"), file.Bytes(), 0o644))
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "InvalidArgument")
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", filepath.Join(dir, "none.npy"), demoPath(t)},
		&out, &errOut))
	require.Contains(t, errOut.String(), "no such file")
	errOut.Reset()
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", "a.npy,b.npy", demoPath(t)}, &out, &errOut))
	require.Contains(t, errOut.String(), "names 2 file(s); the model has 1 input(s)")
}

// An error about one of the user's files names the file and reads once: the library's own
// "slimcuda: " is not said again, and errors.Is still sees its code.
func TestFileErrorsReadOnce(t *testing.T) {
	lib := &slimcuda.Error{Op: "NewTensor", Code: slimcuda.ErrNotSupported, Message: "no CUDA device"}
	err := aboutFile("slimcuda run", "x.npy", lib)
	require.Equal(t, "slimcuda run: x.npy: NewTensor: NotSupported: no CUDA device", err.Error())
	require.ErrorIs(t, err, slimcuda.ErrNotSupported)
	if gpu(t) {
		return
	}
	// Through the real path: a .npy read onto a GPU that is not there.
	var file bytes.Buffer
	require.NoError(t, npy.Write(&file, npy.Array{DType: npy.Float32, Shape: []int64{1}, Data: make([]byte, 4)}))
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, os.WriteFile(path, file.Bytes(), 0o644))
	_, err = readNPY(path, slimcuda.CUDADevice(0))
	require.ErrorIs(t, err, slimcuda.ErrNotSupported)
	require.Equal(t, 1, strings.Count(strings.ReplaceAll(err.Error(), path, "PATH"), "slimcuda"), err.Error())
	require.True(t, strings.HasPrefix(err.Error(), "slimcuda run: "+path+": NewTensor: NotSupported: "), err.Error())
}

// Every slimcuda dtype goes through .npy both ways (bfloat16 as '<u2' bits).
func TestNPYRoundTripsEveryDType(t *testing.T) {
	for _, dt := range []slimcuda.DType{slimcuda.Uint8, slimcuda.Int8, slimcuda.Int16, slimcuda.Int32, slimcuda.Int64,
		slimcuda.Float16, slimcuda.Float32, slimcuda.Float64, slimcuda.Bool, slimcuda.BFloat16} {
		raw := make([]byte, 6*dt.Size())
		for i := range raw {
			raw[i] = byte(i % 2) // valid for every dtype, bool included
		}
		var file bytes.Buffer
		require.NoError(t, npy.Write(&file, npy.Array{DType: npy.DType(dt.String()), Shape: []int64{2, 3}, Data: raw}))
		p := filepath.Join(t.TempDir(), "x.npy")
		require.NoError(t, os.WriteFile(p, file.Bytes(), 0o644))
		x, err := readNPY(p, slimcuda.CPUDevice)
		require.NoError(t, err, dt)
		info, err := x.Info()
		require.NoError(t, err)
		require.Equal(t, dt, info.DType)
		require.Equal(t, []int64{2, 3}, info.Sizes)
		dir := t.TempDir()
		require.NoError(t, saveOutputs(dir, []*slimcuda.Tensor{x}))
		x.Close()
		saved, err := os.ReadFile(filepath.Join(dir, "output_0.npy"))
		require.NoError(t, err)
		require.Equal(t, file.Bytes(), saved, dt)
	}
}

func pt2Fixture(t *testing.T, name string) string {
	return filepath.Join(filepath.Dir(fixture.Runfile(t, "SLIMCUDA_PT2_JSON", "testdata/pt2.json")), "pt2", name)
}

// runLinearPt2 runs `slimcuda run -json` on one of the CPU linear exports (the same model
// with its weights in the library or in the archive) and checks what both must give: inputs
// built from the archive's specs ([2, 4] and [2, 3] float32), a [2, 3] ReLU output.
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
	require.GreaterOrEqual(t, float64(s.Outputs[0].Min), 0.0, "relu")
}

// `slimcuda run model.pt2`: the real CPU export runs on inputs the CLI builds from the
// archive's input specs, and its output has the model's shape.
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

func TestInfoDescribesAModel(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info", pt2Fixture(t, "real_cpu_linear.pt2")}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "on cpu, 1 instance(s)")
	require.Contains(t, out.String(), "input 0 arg2_1: float32 [2 4] static")
	require.Contains(t, out.String(), "output 0")
	require.Contains(t, out.String(), "unknown (the file does not state it)")
	out.Reset()
	require.Equal(t, 0, run([]string{"info", "-json", pt2Fixture(t, "valid.pt2")}, &out, &errOut), errOut.String())
	var in Info
	require.NoError(t, json.Unmarshal(out.Bytes(), &in))
	require.NotNil(t, in.Model)
	require.Equal(t, "cpu", in.Model.Device)
	require.Len(t, in.Model.Inputs, 1)
	require.Equal(t, []int64{1}, in.Model.Inputs[0].Sizes)
	// The specs are named as the text output names them, in the JSON's own lower-case keys;
	// what the file does not state is "unknown".
	out.Reset()
	require.Equal(t, 0, run([]string{"info", "-json", pt2Fixture(t, "real_cpu_linear.pt2")}, &out, &errOut))
	var raw map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	model := raw["model"].(map[string]any)
	require.Equal(t, map[string]any{"name": "arg2_1", "dtype": "float32", "sizes": []any{2.0, 4.0},
		"dynamism": "static", "device": "cpu"}, model["inputs"].([]any)[0])
	require.Equal(t, map[string]any{"name": "output0", "dtype": "unknown", "sizes": []any{},
		"dynamism": "unknown", "device": "cpu"}, model["outputs"].([]any)[0])
}

func TestBenchLoad(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"bench-load", "-n", "3", "-json", pt2Fixture(t, "real_cpu_linear.pt2")}, &out,
		&errOut), errOut.String())
	var r LoadTimes
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.Equal(t, 3, r.Loads)
	require.Len(t, r.AllMillis, 3)
	require.Equal(t, "cpu", r.Device)
	require.Greater(t, r.FileBytes, int64(100000))
	require.Greater(t, r.MinMillis, 0.0)
	require.LessOrEqual(t, r.MinMillis, r.MedMillis)
	errOut.Reset()
	require.Equal(t, 1, run([]string{"bench-load", pt2Fixture(t, "zip_bomb.pt2")}, &out, &errOut))
	require.Contains(t, errOut.String(), "zip bomb")
}
