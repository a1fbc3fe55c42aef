// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
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
