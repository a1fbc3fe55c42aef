// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// CheckPackage and Pack (package.go), and Load of packages: model packages from untrusted
// bytes, from testdata/packages.json (csrc/c_api/package_api_test.cc runs the same cases).

func TestPackagesCheck(t *testing.T) {
	for _, c := range fx.Cases(t, "packages.json", "check") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var file string
			c.Get(t, "file", &file)
			data, err := os.ReadFile(fx.Path(t, "packages.json", file))
			require.NoError(t, err)
			expectCode(t, c, CheckPackage(data))
		})
	}
}

func TestPackagesLoad(t *testing.T) {
	for _, c := range fx.Cases(t, "packages.json", "load") {
		t.Run(c.Name, func(t *testing.T) {
			fx.Begin(t, c)
			var file string
			c.Get(t, "file", &file)
			m, err := Load(fx.Path(t, "packages.json", file), LoadOnDevice(CPUDevice))
			expectCode(t, c, err)
			if err != nil {
				require.Nil(t, m)
				return
			}
			require.NoError(t, m.Close())
		})
	}
}

func TestPackMissingManifest(t *testing.T) {
	err := Pack(filepath.Join(t.TempDir(), "missing.json"), filepath.Join(t.TempDir(), "out.slimcuda"))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = Load(filepath.Join(t.TempDir(), "missing.slimcuda"))
	require.ErrorIs(t, err, ErrNotFound)
}

// FuzzCheckPackage feeds bytes to the package reader through the Go API: it must answer Ok
// or InvalidProgram, never crash. It is a robustness check of the Go-to-C boundary (slice
// passing, error mapping), not a coverage-guided fuzzer: cgo code is not instrumented, so
// `go test -fuzz` learns nothing about the C parser. `go test` and `bazel test` run it over
// its seeds (testdata/packages/*.slimcuda), TestMain checking that they did; libFuzzer
// (tools/fuzz/fuzz.sh) is the coverage-guided fuzzer of the C reader, and FuzzRead
// (go/npy, the CLI's .npy reader) is the Go-side target.
func FuzzCheckPackage(f *testing.F) {
	seeds, err := filepath.Glob(fx.Path(f, "packages.json", filepath.Join("packages", "*.slimcuda")))
	require.NoError(f, err)
	require.NotEmpty(f, seeds, "no seed packages next to packages.json")
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		require.NoError(f, err, "seed %s", p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		packageInputsChecked.Add(1)
		err := CheckPackage(data)
		if err != nil && !errorIs(err, ErrInvalidProgram) {
			t.Fatalf("want nil or ErrInvalidProgram, got %v", err)
		}
	})
}

// packageInputsChecked counts FuzzCheckPackage's inputs, for TestMain's check that a run of
// every test ran its seeds (a test main without fuzz targets ran none, silently).
var packageInputsChecked atomic.Int64

// Manifest numbers are JSON integers within their field's range, never truncated or
// wrapped (csrc/package/package_test.cc checks the same cases).
func TestPackRefusesNumbersThatAreNotIntegersInRange(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n.so"), []byte("not really a library"), 0o644))
	tests := []struct {
		description string
		fields      string // the input tensor's numeric fields, as JSON
		message     string
	}{
		{"fractional sizes", `"sizes": [2.7, 3.9]`, "tensor 'x': sizes[0] must be an integer"},
		{"integral float size", `"sizes": [2.0]`, "tensor 'x': sizes[0] must be an integer"},
		{"size 1e10", `"sizes": [1e10]`, "tensor 'x': sizes[0] must be an integer"},
		{"size 1e300", `"sizes": [3, 1e300]`, "tensor 'x': sizes[1] must be an integer"},
		{"size past int64", `"sizes": [9223372036854775808]`, "tensor 'x': sizes[0] must be an integer"},
		{"boolean size", `"sizes": [true]`, "tensor 'x': sizes[0] must be an integer"},
		{"sizes not an array", `"sizes": 3`, "tensor 'x': sizes must be an array"},
		{"fractional min size", `"sizes": [3], "min_sizes": [0.5], "dynamism": "dynamic_bounded"`,
			"tensor 'x': min_sizes[0] must be an integer"},
		{"dim_order past uint8", `"sizes": [3, 3], "dim_order": [257, 256]`,
			"tensor 'x': dim_order[0] must be an integer in [0, 255], got 257"},
		{"negative dim_order", `"sizes": [3], "dim_order": [-1]`, "tensor 'x': dim_order[0] must be an integer"},
		{"device_index past int32", `"sizes": [3], "device_index": 4294967295`,
			"tensor 'x': device_index must be an integer in [-1, 127], got 4294967295"},
		{"device_index 1e300", `"sizes": [3], "device_index": 1e300`, "tensor 'x': device_index must be an integer"},
		{"fractional device_index", `"sizes": [3], "device_index": 0.5`, "tensor 'x': device_index must be an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.description, func(t *testing.T) {
			manifest := filepath.Join(dir, "numbers.json")
			text := `{"libraries": [{"device": "cpu", "so": "n.so", "methods": [{"name": "forward",
			  "inputs": [{"name": "x", "dtype": "int64", "device": "cpu", ` + tc.fields + `}],
			  "outputs": [{"name": "y", "dtype": "bool", "sizes": [3], "device": "cpu"}]}]}]}`
			require.NoError(t, os.WriteFile(manifest, []byte(text), 0o644))
			err := Pack(manifest, filepath.Join(dir, "numbers.slimcuda"))
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.ErrorContains(t, err, tc.message)
		})
	}
}
