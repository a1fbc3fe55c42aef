package slimcuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Model packages from untrusted bytes, from testdata/packages.json (csrc/package/
// package_test.cc runs the same cases).

func TestPackagesCheck(t *testing.T) {
	for _, c := range fx.Cases(t, "packages.json", "check") {
		t.Run(c.Name, func(t *testing.T) {
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
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
			if !fx.Begin(t, c) {
				t.Skip("needs " + c.Requires)
			}
			var file string
			c.Get(t, "file", &file)
			m, err := Load(fx.Path(t, "packages.json", file), LoadOnCPU())
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
// `go test -fuzz` learns nothing about the C parser. `bazel test` runs it over its seeds
// (testdata/packages/*.slimcuda); libFuzzer (tools/fuzz/fuzz.sh) is the coverage-guided
// fuzzer of the C reader, and FuzzParseInputs (go/cmd/slimcuda) is the Go-side target.
func FuzzCheckPackage(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(filepath.Dir(fx.Path(f, "packages.json", "x")), "packages", "*.slimcuda"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckPackage(data)
		if err != nil && !errorIs(err, ErrInvalidProgram) {
			t.Fatalf("want nil or ErrInvalidProgram, got %v", err)
		}
	})
}
