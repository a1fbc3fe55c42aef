// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
	"github.com/slimcuda/slimcuda/go/npy"
	"github.com/stretchr/testify/require"
)

// jsonOf runs a command that prints JSON and decodes it with numbers kept as written.
func jsonOf(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(args, &out, &errOut), "%v: %s", args, errOut.String())
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc))
	return doc, out.String()
}

// keys lists every object key of a decoded JSON value, at any depth.
func keys(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out = append(append(out, k), keys(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, keys(e)...)
		}
	}
	return out
}

// One vocabulary: snake_case keys in every command's JSON, the model's path under "model" and
// where it runs under "device" in each, timings in milliseconds to the microsecond.
func TestOneJSONVocabulary(t *testing.T) {
	demo := demoPath(t)
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	msDigits := regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,3})?$`)
	for _, tc := range []struct {
		description string
		args        []string
		timings     []string
	}{
		{"run", []string{"run", "-json", "-device", "cpu", "-iterations", "3", demo}, []string{"load_ms", "first_run_ms",
			"mean_ms"}},
		{"info", []string{"info", "-json", "-device", "cpu", demo}, nil},
		{"bench-load", []string{"bench-load", "-json", "-device", "cpu", "-n", "3", demo}, []string{"min_ms",
			"median_ms", "mean_ms"}},
	} {
		t.Run(tc.description, func(t *testing.T) {
			doc, text := jsonOf(t, tc.args...)
			for _, k := range keys(doc) {
				require.Regexp(t, snake, k, "a key of %s -json", tc.description)
			}
			require.Equal(t, demo, doc["model"], "the model's path")
			require.Equal(t, "cpu", doc["device"])
			for _, k := range tc.timings {
				require.Regexp(t, msDigits, doc[k].(json.Number).String(), "%s in %s", k, text)
			}
		})
	}
}

// info -json spells a spec as a manifest does, so pack reads what info wrote; a spelling pack
// does not know is refused with the ones it does.
func TestInfoSpellsSpecsAsPackReadsThem(t *testing.T) {
	doc, _ := jsonOf(t, "info", "-json", "-device", "cpu", demoPath(t))
	input := doc["inputs"].([]any)[0].(map[string]any)
	require.Equal(t, "dynamic_bounded", input["dynamism"])
	dir := t.TempDir()
	lib, err := os.ReadFile(fixture.Runfile(t, "SLIMCUDA_TEST_LIBRARY", "models/testing/libconstant_1.so"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.so"), lib, 0o644))
	spec, err := json.Marshal(input)
	require.NoError(t, err)
	manifest := filepath.Join(dir, "m.json")
	write := func(spec string) {
		require.NoError(t, os.WriteFile(manifest, []byte(`{"libraries": [{"device": "cpu", "so": "m.so", "methods": [
			{"name": "forward", "inputs": [`+spec+`], "outputs": [`+spec+`]}]}]}`), 0o644))
	}
	write(string(spec))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"pack", manifest}, &out, &errOut), errOut.String())
	write(strings.Replace(string(spec), "dynamic_bounded", "dynamic-bounded", 1))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", manifest}, &out, &errOut))
	require.Contains(t, errOut.String(), `unknown dynamism "dynamic-bounded" (static, dynamic_bounded or dynamic_unbounded)`)
	write(strings.Replace(string(spec), "float32", "float", 1))
	errOut.Reset()
	require.Equal(t, 1, run([]string{"pack", manifest}, &out, &errOut))
	require.Contains(t, errOut.String(), `unknown dtype "float" (uint8,`)
}

// Errors name the user's file and say what to do; no C function's name reaches the user.
func TestErrorsNameTheFileAndTheFix(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("hello\n"), 0o644))
	var raw bytes.Buffer
	require.NoError(t, npy.Write(&raw, npy.Array{DType: npy.Float64, Shape: []int64{4, 16}, Data: make([]byte, 8*64)}))
	x64 := filepath.Join(dir, "x64.npy")
	require.NoError(t, os.WriteFile(x64, raw.Bytes(), 0o644))
	missing := filepath.Join(dir, "missing.pt2")
	for _, tc := range []struct {
		description string
		args        []string
		says        []string
	}{
		{"a missing model", []string{"run", missing}, []string{missing, "No such file", "(NotFound)", "check the path"}},
		{"a text file as a model", []string{"info", notes}, []string{notes + " is not a model file", "give a .pt2"}},
		{"a text file to run", []string{"run", notes}, []string{notes + " is not a model file"}},
		{"a float64 .npy for a float32 input", []string{"run", "-device", "cpu", "-inputs", x64, demoPath(t)},
			[]string{x64 + " holds float64, but input 0 (x) takes float32", "x.astype(np.float32)"}},
	} {
		t.Run(tc.description, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 1, run(tc.args, &out, &errOut))
			for _, s := range tc.says {
				require.Contains(t, errOut.String(), s)
			}
			require.NotContains(t, errOut.String(), "slimcuda_model")
			require.NotContains(t, errOut.String(), "slimcuda_describe")
		})
	}
}

// A CUDA .pt2 is described from the file on a machine without a GPU (and loaded with one).
func TestInfoDescribesACudaPt2WithoutAGPU(t *testing.T) {
	pt2 := fixture.Runfile(t, "SLIMCUDA_DEMO_CUDA_PT2", "models/demo/demo_cuda.pt2")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"info", pt2}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "input 0 arg0_1: float32 [64 16] dynamic_bounded")
	require.Contains(t, out.String(), "output 0 output0: unknown")
	if !gpu(t) {
		require.Contains(t, out.String(), "for cuda (described from the file; it runs on a machine with a GPU)")
	}
	doc, _ := jsonOf(t, "info", "-json", "-no-load", pt2)
	require.Equal(t, "cuda", doc["device"])
	require.Equal(t, false, doc["loaded"])
	require.Nil(t, doc["state"], "not loaded: not known")
	// A real export's output, known from its allocation in the wrapper source.
	out.Reset()
	require.Equal(t, 0, run([]string{"info", "-no-load", pt2Fixture(t, "real_cpu_linear.pt2")}, &out, &errOut))
	require.Contains(t, out.String(), "output 0 output0: float32 [2 3] static")
}

// Flags may follow the model; "--" ends them.
func TestFlagsAfterTheModel(t *testing.T) {
	doc, _ := jsonOf(t, "run", demoPath(t), "-json", "-device", "cpu", "-iterations=0")
	require.Equal(t, "cpu", doc["device"])
	require.Equal(t, json.Number("0"), doc["iterations"])
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"run", "-device", "cpu", "--", "-json"}, &out, &errOut))
	require.Contains(t, errOut.String(), "-json: No such file", "after --, an argument")
	require.Equal(t, []string{"-json", "-device", "cpu", "--", "m.pt2"},
		flagsFirst(runFlags(), []string{"m.pt2", "-json", "-device", "cpu"}))
	require.Equal(t, []string{"-device=cpu", "--", "m.pt2", "-x"},
		flagsFirst(runFlags(), []string{"m.pt2", "-device=cpu", "--", "-x"}))
}

// The installed layout: PREFIX/bin/slimcuda finds PREFIX/share/slimcuda/NAME, through a
// symbolic link to the executable too.
func TestInstalledFilesBesideTheExecutable(t *testing.T) {
	prefix := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(prefix, "bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(prefix, "share", "slimcuda"), 0o755))
	exe := filepath.Join(prefix, "bin", "slimcuda")
	require.NoError(t, os.WriteFile(exe, nil, 0o755))
	_, ok := installedBeside(exe, "demo.slimcuda")
	require.False(t, ok, "nothing installed yet")
	want := filepath.Join(prefix, "share", "slimcuda", "demo.slimcuda")
	require.NoError(t, os.WriteFile(want, []byte("x"), 0o644))
	got, ok := installedBeside(exe, "demo.slimcuda")
	require.True(t, ok)
	require.Equal(t, want, got)
	link := filepath.Join(t.TempDir(), "slimcuda")
	require.NoError(t, os.Symlink(exe, link))
	got, ok = installedBeside(link, "demo.slimcuda")
	require.True(t, ok)
	require.Equal(t, want, got)
}

// No help text speaks of Bazel: an installed CLI has none.
func TestHelpSaysNothingOfBazel(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help", "run"}, {"help", "info"}, {"help", "pack"}, {"help", "bench"},
		{"help", "bench-load"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errOut))
		require.NotContains(t, strings.ToLower(out.String()), "bazel", "%v", args)
	}
	require.NotContains(t, strings.ToLower(errNoDemo.Error()), "bazel")
	require.Contains(t, errNoDemo.Error(), "give a MODEL")
}

func runFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	runCommand.define(fs)
	return fs
}

// Rounded values print as people write them: two loads of 0.1 and 0.2 ms sum to 0.3, not
// 0.30000000000000004; non-finite ratios stay strings.
func TestRounding(t *testing.T) {
	total := 0.1
	total += 0.2 // at run time, as the CLI adds up its timings
	b, err := json.Marshal(total)
	require.NoError(t, err)
	require.Equal(t, "0.30000000000000004", string(b), "unrounded, the float shows its error")
	for _, tc := range []struct {
		description string
		got         float64
		want        string
	}{
		{"a sum of timings", roundMs(total), "0.3"},
		{"to the microsecond", roundMs(1.23456789), "1.235"},
		{"a ratio", roundRatio(1.0 / 3), "0.3333"},
		{"an infinite ratio", roundRatio(math.Inf(1)), `"+Inf"`},
	} {
		t.Run(tc.description, func(t *testing.T) {
			b, err := json.Marshal(jsonFloat(tc.got))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
		})
	}
}
