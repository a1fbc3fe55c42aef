package main

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/slimcuda/slimcuda/go/slimcuda"
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

// FuzzParseInputs fuzzes the CLI's reader of inputs.json (-inputs DIR), the Go code that
// turns what a user gives into tensor sizes and byte counts before anything is allocated.
// It is pure Go, so `go test -fuzz` is coverage-guided here (tools/fuzz/fuzz.sh runs it);
// the C package reader is fuzzed by libFuzzer instead, since cgo code is not instrumented.
// Whatever parseInputs accepts must be safe to allocate: a supported dtype, sizes whose
// product (computed exactly) is the element count and within maxInputElements, and a file
// name inside DIR.
func FuzzParseInputs(f *testing.F) {
	for _, seed := range []string{
		`[{"file": "x.bin", "dtype": "float32", "sizes": [1, 16]}]`,
		`[{"file": "a.bin", "dtype": "int64", "sizes": []}, {"file": "b.bin", "dtype": "bfloat16", "sizes": [0, 3]}]`,
		`[{"file": "x.bin", "dtype": "float32", "sizes": [1073741824, 1073741824]}]`,
		`[{"file": "../x.bin", "dtype": "bool", "sizes": [-1]}]`,
		`{"file": 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inputs, err := parseInputs(data)
		if err != nil {
			return
		}
		for _, in := range inputs {
			exact := big.NewInt(1)
			for _, d := range in.Sizes {
				if d < 0 {
					t.Fatalf("accepted a negative size: %v", in.Sizes)
				}
				exact.Mul(exact, big.NewInt(d))
			}
			if !exact.IsInt64() || exact.Int64() != in.numel || in.numel > maxInputElements {
				t.Fatalf("sizes %v: numel %d, exactly %v", in.Sizes, in.numel, exact)
			}
			if in.nbytes != in.numel*int64(in.dtype.Size()) || in.dtype.Size() == 0 {
				t.Fatalf("%v %s: %d bytes", in.Sizes, in.dtype, in.nbytes)
			}
			if !filepath.IsLocal(in.File) {
				t.Fatalf("accepted file %q", in.File)
			}
			if _, ok := slimcuda.DTypeByName(in.DType); !ok {
				t.Fatalf("accepted dtype %q", in.DType)
			}
		}
	})
}

// -inputs DIR reads each raw file in the dtype inputs.json names: the zoo's float16,
// bfloat16 and int64 inputs (tools/aoti/export_models.py) arrive with their values intact.
func TestReadInputsDTypes(t *testing.T) {
	dir := t.TempDir()
	// 1.5, -2, 0.25 in each dtype's little-endian bits; int64 token ids.
	files := map[string][]byte{
		"f16.bin":  {0x00, 0x3e, 0x00, 0xc0, 0x00, 0x34},
		"bf16.bin": {0xc0, 0x3f, 0x00, 0xc0, 0x80, 0x3e},
		"i64.bin":  {7, 0, 0, 0, 0, 0, 0, 0, 0xe7, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs.json"), []byte(`[
		{"file": "f16.bin", "dtype": "float16", "sizes": [3]},
		{"file": "bf16.bin", "dtype": "bfloat16", "sizes": [1, 3]},
		{"file": "i64.bin", "dtype": "int64", "sizes": [3]}]`), 0o644))
	tensors, err := readInputs(dir, slimcuda.CPUDevice)
	for _, x := range tensors {
		defer x.Close()
	}
	require.NoError(t, err)
	require.Len(t, tensors, 3)
	for i, want := range []slimcuda.DType{slimcuda.Float16, slimcuda.BFloat16, slimcuda.Int64} {
		info, err := tensors[i].Info()
		require.NoError(t, err)
		require.Equal(t, want, info.DType, "input %d", i)
	}
	for i := 0; i < 2; i++ {
		got := make([]float32, 3)
		require.NoError(t, tensors[i].CopyToHost(got))
		require.Equal(t, []float32{1.5, -2, 0.25}, got, "input %d", i)
	}
	ids := make([]int64, 3)
	require.NoError(t, tensors[2].CopyToHost(ids))
	require.Equal(t, []int64{7, 999, 0}, ids)
}
