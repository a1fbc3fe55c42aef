package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// -inputs DIR: inputs.json and its raw files are what the user gives; the sizes and files
// they declare are checked before anything is allocated or read.
func TestRunRefusesBadRawInputs(t *testing.T) {
	for _, tc := range []struct {
		description string
		json        string
		file        []byte
		message     string
	}{
		{"2^60 elements", `[{"file": "x.bin", "dtype": "float32", "sizes": [1073741824, 1073741824]}]`, make([]byte, 64),
			"more than 134217728 elements"},
		{"product overflows int64", `[{"file": "x.bin", "dtype": "float32", "sizes": [4294967296, 4294967296, 4]}]`,
			make([]byte, 64), "more than 134217728 elements"},
		{"negative size", `[{"file": "x.bin", "dtype": "float32", "sizes": [-1, -16]}]`, make([]byte, 64),
			"negative size"},
		{"file too long for the sizes", `[{"file": "x.bin", "dtype": "float32", "sizes": [1, 16]}]`, make([]byte, 128),
			"128 bytes, want 64"},
		{"file outside DIR", `[{"file": "../x.bin", "dtype": "float32", "sizes": [1, 16]}]`, make([]byte, 64),
			"not a file name inside"},
		{"unknown dtype", `[{"file": "x.bin", "dtype": "float128", "sizes": [1, 16]}]`, make([]byte, 64),
			`unknown dtype "float128"`},
	} {
		t.Run(tc.description, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), tc.file, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs.json"), []byte(tc.json), 0o644))
			var out, errOut bytes.Buffer
			require.Equal(t, 1, run([]string{"run", "-device", "cpu", "-inputs", dir, demoPath(t)}, &out, &errOut))
			require.Contains(t, errOut.String(), tc.message)
		})
	}
}
